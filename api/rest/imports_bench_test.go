package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/models"
)

// BenchmarkImportCSV100k is the performance bar of issue 15: a CSV of
// 100,000 rows imported end to end in under 30 s. Each run uploads the
// file (multipart, through the app) with publish=true, then runs the
// import job's handler on the task it queued until the import is
// complete; it reports the seconds and rows per second of the whole.
func BenchmarkImportCSV100k(b *testing.B) { benchImportCSV(b, nil) }

// BenchmarkImportCSV100kRules is the same import with ten rules in the
// family, each filing a tenth of the rows (a category and a tag), as the
// pipeline's rules step now does for file imports too.
func BenchmarkImportCSV100kRules(b *testing.B) {
	benchImportCSV(b, func(e *apitest.Env) {
		ctx := context.Background()
		fam := e.Alpha.Family.ID
		text := func(s string) *string { return &s }
		for i := range 10 {
			cat := &models.Category{FamilyID: fam, Name: fmt.Sprintf("Shops %d", i), Color: "#000000", Icon: "bag", Classification: "expense"}
			tag := &models.Tag{FamilyID: fam, Name: fmt.Sprintf("tag %d", i), Color: "#111111"}
			if err := e.Store.CreateCategory(ctx, cat); err != nil {
				b.Fatal(err)
			}
			if err := e.Store.CreateTag(ctx, tag); err != nil {
				b.Fatal(err)
			}
			r := &models.Rule{FamilyID: fam, Active: true,
				Conditions: []models.RuleCondition{{ConditionType: models.CondName, Operator: "ends_with", Value: text(fmt.Sprint(i))}},
				Actions: []models.RuleAction{{ActionType: models.ActSetCategory, Value: text(cat.ID.String())},
					{ActionType: models.ActAddTag, Value: text(tag.ID.String())}}}
			if err := e.Store.CreateRule(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchImportCSV(b *testing.B, setup func(*apitest.Env)) {
	const n = 100_000
	var file strings.Builder
	file.WriteString("Date,Amount,Description,Memo\n")
	for i := range n {
		fmt.Fprintf(&file, "%02d/%02d/20%02d,\"-%d,%03d.%02d\",Shop number %d,note %d\n", i%12+1, i%28+1, 15+i%10, i%7, i%1000, i%100, i, i%13)
	}
	data := []byte(file.String())
	for range b.N {
		b.StopTimer()
		e := apitest.NewEnv(b)
		if setup != nil {
			setup(e)
		}
		h := &jobs.Handlers{Store: e.Store, Queue: asynq.NewClientFromRedisClient(e.RDB), Log: slog.New(slog.DiscardHandler)}
		fields := map[string]string{"account_id": e.Alpha.Account.ID.String(), "date_col_label": "Date", "amount_col_label": "Amount",
			"name_col_label": "Description", "notes_col_label": "Memo", "publish": "true"}
		b.StartTimer()
		start := time.Now()
		r := e.Upload("/api/v1/imports", e.Alpha.Key, "big.csv", data, fields)
		if r.Status != 201 {
			b.Fatalf("upload: %d %s", r.Status, r.Body)
		}
		uploaded := time.Since(start)
		var created struct {
			Data struct {
				ID uuid.UUID `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &created); err != nil {
			b.Fatal(err)
		}
		id := created.Data.ID
		im, err := e.Store.Import(context.Background(), e.Alpha.Family.ID, id)
		if err != nil {
			b.Fatal(err)
		}
		task, err := jobs.ImportTask(im)
		if err != nil {
			b.Fatal(err)
		}
		if err := h.ImportPublish(context.Background(), task); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		b.StopTimer()
		if im, err = e.Store.Import(context.Background(), e.Alpha.Family.ID, id); err != nil || im.ImportedRowsCount != n {
			b.Fatalf("import: %+v %v", im, err)
		}
		if setup != nil { // every row ends in a digit: one rule filed each
			filed, err := e.Store.DB().NewSelect().Table("transactions").Where("family_id = ?", e.Alpha.Family.ID).
				Where("rule_id IS NOT NULL").Where("category_id IS NOT NULL").Count(context.Background())
			if err != nil || filed != n {
				b.Fatalf("%d rows filed by the rules, want %d (%v)", filed, n, err)
			}
		}
		b.ReportMetric(took.Seconds(), "s/import")
		b.ReportMetric(uploaded.Seconds(), "s/upload")
		b.ReportMetric(n/took.Seconds(), "rows/s")
		b.StartTimer()
	}
}
