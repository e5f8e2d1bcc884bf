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
	set := models.DefaultImportSettings()
	set.NameColLabel = models.Ptr("name")
	p, err := models.ParseImportFile([]byte(file), models.ImportCSV, set)
	if err != nil {
		t.Fatal(err)
	}
	im := &models.Import{FamilyID: f.Family.ID, AccountID: f.Account.ID, Type: models.ImportCSV, RawFile: file, ImportSettings: set}
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

// importedState is what an import leaves: its transactions (none twice)
// and its counts.
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
		Scan(ctx, &got); err != nil {
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

// TestImportJobSurvivesWorkerKill runs an import of 12,000 rows (three
// steps) on a real worker, stops the worker the way SIGTERM does right
// after the first step committed, and starts a fresh one: the import ends
// with every row once, the counts of an undisturbed run, and the account's
// balance recalculated. A revert then removes exactly those rows.
func TestImportJobSurvivesWorkerKill(t *testing.T) {
	const n = 12_000
	store := modelstest.NewStore(t)
	opt, rdb := modelstest.RedisClient(t, redisDB)
	queue := asynq.NewClientFromRedisClient(rdb)
	log := discardLog()
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "importer")

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
	waitFor(t, "the balance", func() (bool, string) {
		a, err := store.Account(ctx, f.Family.ID, f.Account.ID)
		if err != nil {
			t.Fatal(err)
		}
		return int64(a.Balance) == -sum, fmt.Sprintf("%d, want %d", a.Balance, -sum)
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
}
