package worker_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/models"
	"coffer/models/importfile"
	"coffer/models/modelstest"
	"coffer/worker"
)

// importFile is a CSV of n rows with distinct names.
func importFile(n int) string {
	var b strings.Builder
	b.WriteString("date,amount,name\n")
	for i := range n {
		fmt.Fprintf(&b, "%02d/%02d/2024,-%d.%02d,Shop %d\n", i%12+1, i%28+1, i%500, i%100, i)
	}
	return b.String()
}

// publishImport stores and publishes a CSV import for f and queues its job.
func publishImport(t *testing.T, store *models.Store, queue *asynq.Client, f *modelstest.FamilyFixture, file string) *models.Import {
	t.Helper()
	ctx := context.Background()
	set := importfile.DefaultSettings()
	set.NameColLabel = models.Ptr("name")
	p, err := importfile.Parse([]byte(file), importfile.CSV, set)
	if err != nil {
		t.Fatal(err)
	}
	im := &models.Import{FamilyID: f.Family.ID, AccountID: f.Account.ID, Type: importfile.CSV, RawFile: file, Settings: set}
	if err := store.CreateImport(ctx, im, p); err != nil {
		t.Fatal(err)
	}
	if im, err = store.PublishImport(ctx, f.Family.ID, im.ID); err != nil {
		t.Fatal(err)
	}
	task, err := jobs.ImportTask(im)
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.EnqueueImport(ctx, queue, task); err != nil {
		t.Fatal(err)
	}
	return im
}

// importedState is what an import leaves: its transactions on the
// import's account (none twice) and its counts.
func importedState(t *testing.T, store *models.Store, f *modelstest.FamilyFixture, id uuid.UUID) (rows int, sum int64, im *models.Import) {
	t.Helper()
	ctx := context.Background()
	// The import first: a step that commits between the two reads then
	// shows more rows, never a finished import with rows missing.
	im, err := store.Import(ctx, f.Family.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Name   string `bun:"name"`
		Amount int64  `bun:"amount"`
	}
	if err := store.DB().NewSelect().Table("transactions").Column("name", "amount").Where("family_id = ?", f.Family.ID).
		Where("account_id = ?", f.Account.ID).Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, g := range got {
		if seen[g.Name] {
			t.Fatalf("%q imported twice", g.Name)
		}
		seen[g.Name] = true
		sum += g.Amount
	}
	return len(got), sum, im
}

// importRules gives f a rule that files every row of importFile (a
// category and a tag) and one that makes the rows named "Shop 99…" one
// side of a transfer to a second account; it returns them and what they
// name.
func importRules(t *testing.T, store *models.Store, f *modelstest.FamilyFixture) (file, move *models.Rule, savings *models.Account, cat *models.Category, tag *models.Tag) {
	t.Helper()
	ctx := context.Background()
	fam := f.Family.ID
	cat = &models.Category{FamilyID: fam, Name: "Shopping", Color: "#000000", Icon: "bag", Classification: "expense"}
	tag = &models.Tag{FamilyID: fam, Name: "imported", Color: "#111111"}
	savings = &models.Account{FamilyID: fam, Name: "Savings", AccountType: "depository", Currency: "USD"}
	if err := store.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	if err := store.CreateTag(ctx, tag); err != nil {
		t.Fatal(err)
	}
	if err := store.CreateAccount(ctx, savings); err != nil {
		t.Fatal(err)
	}
	text := func(s string) *string { return &s }
	file = &models.Rule{FamilyID: fam, Active: true,
		Conditions: []models.RuleCondition{{ConditionType: models.CondName, Operator: "starts_with", Value: text("shop")}},
		Actions: []models.RuleAction{{ActionType: models.ActSetCategory, Value: text(cat.ID.String())},
			{ActionType: models.ActAddTag, Value: text(tag.ID.String())}}}
	move = &models.Rule{FamilyID: fam, Active: true,
		Conditions: []models.RuleCondition{{ConditionType: models.CondName, Operator: "starts_with", Value: text("shop 99")}},
		Actions:    []models.RuleAction{{ActionType: models.ActTransfer, Value: text(savings.ID.String())}}}
	for _, r := range []*models.Rule{file, move} {
		if err := store.CreateRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	return file, move, savings, cat, tag
}

// checkFiledOnce fails unless the rules filed every row of the import on
// f's account exactly once: its category and rule_id, one tag link, and
// one other side for each of the want rows a transfer rule matched.
func checkFiledOnce(t *testing.T, store *models.Store, f *modelstest.FamilyFixture, savings *models.Account, cat *models.Category, n, transfers int) {
	t.Helper()
	ctx := context.Background()
	count := func(table, where string, args ...any) int {
		c, err := store.DB().NewSelect().Table(table).Where(where, args...).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return int(c)
	}
	fam := f.Family.ID
	if got := count("transactions", "family_id = ? AND account_id = ? AND category_id = ? AND rule_id IS NOT NULL", fam, f.Account.ID, cat.ID); got != n {
		t.Fatalf("%d rows filed, want %d", got, n)
	}
	if got := count("transaction_tags", "family_id = ?", fam); got != n {
		t.Fatalf("%d tag links, want %d", got, n)
	}
	if got := count("transactions", "family_id = ? AND account_id = ?", fam, savings.ID); got != transfers {
		t.Fatalf("%d other sides of transfers, want %d", got, transfers)
	}
	if got := count("transfers", "family_id = ?", fam); got != transfers {
		t.Fatalf("%d transfers, want %d", got, transfers)
	}
}

// TestImportJobSurvivesWorkerKill runs an import of 12,000 rows (three
// steps) on a real worker, with rules that file every row and make some
// of them transfers, stops the worker the way SIGTERM does right after the
// first step committed, and starts a fresh one: the import ends with every
// row once, filed by the rules exactly once (one tag link, one transfer),
// the counts of an undisturbed run, and both accounts' balances
// recalculated. A revert then removes exactly those rows, transfers'
// other sides included.
func TestImportJobSurvivesWorkerKill(t *testing.T) {
	const n = 12_000
	store := modelstest.NewStore(t)
	opt, rdb := modelstest.RedisClient(t, redisDB)
	queue := asynq.NewClientFromRedisClient(rdb)
	log := discardLog()
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "importer")
	_, _, savings, cat, _ := importRules(t, store, f)
	// The rows the transfer rule matches: Shop 99, Shop 990…, Shop 9900….
	transfers := 0
	for i := range n {
		if strings.HasPrefix(fmt.Sprintf("Shop %d", i), "Shop 99") {
			transfers++
		}
	}

	reached := make(chan struct{})
	var once sync.Once
	first := &jobs.Handlers{Store: store, Queue: queue, Log: log, Hook: func(ctx context.Context, point string) {
		if point == jobs.HookImportStep {
			once.Do(func() { close(reached) })
			<-ctx.Done() // killed here, after one committed step
		}
	}}
	// The SimpleFIN handlers too, as in production: a worker on this Redis
	// database may meet other tests' tasks of those types.
	sf := &simplefin.Handlers{Store: store, Queue: queue, Log: log, Redis: rdb, Bridge: fakeBridgeClient()}
	stop := runWorker(t, worker.Options{Redis: opt, Handlers: first, SimpleFIN: sf, Logger: log, Concurrency: 2,
		BalanceSweepCron: "@every 1h", ShutdownTimeout: 10 * time.Millisecond})
	im := publishImport(t, store, queue, f, importFile(n))
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Fatal("the import never committed a step")
	}
	stop()
	rows, _, mid := importedState(t, store, f, im.ID)
	if rows != models.ImportBatchSize || mid.Status != models.ImportImporting || mid.ProcessedRowsCount != models.ImportBatchSize {
		t.Fatalf("after the kill: %d rows, %s, %d processed", rows, mid.Status, mid.ProcessedRowsCount)
	}
	midTransfers := 0
	for i := range models.ImportBatchSize {
		if strings.HasPrefix(fmt.Sprintf("Shop %d", i), "Shop 99") {
			midTransfers++
		}
	}
	checkFiledOnce(t, store, f, savings, cat, models.ImportBatchSize, midTransfers)

	runWorker(t, worker.Options{Redis: opt, Handlers: &jobs.Handlers{Store: store, Queue: queue, Log: log}, SimpleFIN: sf,
		Logger: log, Concurrency: 2, BalanceSweepCron: "@every 1h"})
	var sum int64
	waitFor(t, "the import to complete", func() (bool, string) {
		var got *models.Import
		rows, sum, got = importedState(t, store, f, im.ID)
		return got.Status == models.ImportComplete, fmt.Sprintf("%s, %d rows", got.Status, rows)
	})
	_, _, done := importedState(t, store, f, im.ID)
	if rows != n || done.ImportedRowsCount != n || done.ProcessedRowsCount != n || done.DuplicateRowsCount != 0 || done.Progress() != 100 {
		t.Fatalf("%d rows, import %+v", rows, done)
	}
	checkFiledOnce(t, store, f, savings, cat, n, transfers)
	var moved int64
	if err := store.DB().NewSelect().Table("transactions").ColumnExpr("COALESCE(SUM(amount), 0)").
		Where("family_id = ?", f.Family.ID).Where("account_id = ?", savings.ID).Scan(ctx, &moved); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the balances", func() (bool, string) {
		a, err := store.Account(ctx, f.Family.ID, f.Account.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, err := store.Account(ctx, f.Family.ID, savings.ID)
		if err != nil {
			t.Fatal(err)
		}
		return int64(a.Balance) == -sum && int64(b.Balance) == -moved && moved != 0,
			fmt.Sprintf("%d, want %d; savings %d, want %d", a.Balance, -sum, b.Balance, -moved)
	})

	// Revert through the worker: every row goes, the import is pending.
	reverting, err := store.StartRevert(ctx, f.Family.ID, im.ID)
	if err != nil {
		t.Fatal(err)
	}
	task, _ := jobs.ImportTask(reverting)
	if err := jobs.EnqueueImport(ctx, queue, task); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the revert", func() (bool, string) {
		r, _, got := importedState(t, store, f, im.ID)
		return got.Status == models.ImportPending && r == 0, fmt.Sprintf("%s, %d rows", got.Status, r)
	})
	checkFiledOnce(t, store, f, savings, cat, 0, 0)
	waitFor(t, "the savings balance after the revert", func() (bool, string) {
		b, err := store.Account(ctx, f.Family.ID, savings.ID)
		if err != nil {
			t.Fatal(err)
		}
		return b.Balance == 0, fmt.Sprintf("%d", b.Balance)
	})
}
