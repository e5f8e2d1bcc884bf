package api_test

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

	"coffer/jobs"
)

// BenchmarkImportCSV100k is the performance bar of issue 15: a CSV of
// 100,000 rows imported end to end in under 30 s. Each run uploads the
// file (multipart, through the app) with publish=true, then runs the
// import job's handler on the task it queued until the import is
// complete; it reports the seconds and rows per second of the whole.
func BenchmarkImportCSV100k(b *testing.B) {
	const n = 100_000
	var file strings.Builder
	file.WriteString("Date,Amount,Description,Memo\n")
	for i := range n {
		fmt.Fprintf(&file, "%02d/%02d/20%02d,\"-%d,%03d.%02d\",Shop number %d,note %d\n", i%12+1, i%28+1, 15+i%10, i%7, i%1000, i%100, i, i%13)
	}
	data := []byte(file.String())
	for range b.N {
		b.StopTimer()
		e := newEnv(b)
		h := &jobs.Handlers{Store: e.store, Queue: asynq.NewClientFromRedisClient(e.rdb), Log: slog.New(slog.DiscardHandler)}
		fields := map[string]string{"account_id": e.alpha.Account.ID.String(), "date_col_label": "Date", "amount_col_label": "Amount",
			"name_col_label": "Description", "notes_col_label": "Memo", "publish": "true"}
		b.StartTimer()
		start := time.Now()
		r := e.upload("/api/v1/imports", e.alpha.Key, "big.csv", data, fields)
		if r.status != 201 {
			b.Fatalf("upload: %d %s", r.status, r.body)
		}
		uploaded := time.Since(start)
		var created struct {
			Data struct {
				ID uuid.UUID `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.body, &created); err != nil {
			b.Fatal(err)
		}
		id := created.Data.ID
		im, err := e.store.Import(context.Background(), e.alpha.Family.ID, id)
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
		if im, err = e.store.Import(context.Background(), e.alpha.Family.ID, id); err != nil || im.ImportedRowsCount != n {
			b.Fatalf("import: %+v %v", im, err)
		}
		b.ReportMetric(took.Seconds(), "s/import")
		b.ReportMetric(uploaded.Seconds(), "s/upload")
		b.ReportMetric(n/took.Seconds(), "rows/s")
		b.StartTimer()
	}
}
