package worker_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"coffer/jobs"
	"coffer/jobs/simplefin/simplefintest"
	"coffer/models"
	"coffer/models/modelstest"
)

// TestSimplefinBulkImport is the performance bar of spec §14.4, run only
// with COFFER_BENCH_SIMPLEFIN=1 (deploy/loadtest/simplefin.sh sets it,
// pins two cores and reads the peak RSS): 100,000 transactions across 20
// accounts from the fake Bridge, through a real worker (concurrency 4),
// from the claim to the completed parent; then a full re-sync of the same
// data, which must write nothing.
func TestSimplefinBulkImport(t *testing.T) {
	if os.Getenv("COFFER_BENCH_SIMPLEFIN") == "" {
		t.Skip("set COFFER_BENCH_SIMPLEFIN=1 to run the SimpleFIN import benchmark")
	}
	store, queue, _, bridge := simplefinWorker(t)
	ctx := context.Background()
	data := simplefintest.Generate(2026, 20, 5000, 85, time.Now().UTC())
	bridge.SetDataset(data)
	f := modelstest.NewFamily(t, store, "bench")
	c := &models.Connection{FamilyID: f.Family.ID, Name: "Bridge"}
	if err := store.CreateConnection(ctx, c, bridge.Token("bench")); err != nil {
		t.Fatal(err)
	}
	latest := func() *models.Sync {
		syncs, _, err := store.Syncs(ctx, f.Family.ID, models.SyncFilter{}, models.Page{Number: 1, Size: 1})
		if err != nil || len(syncs) == 0 {
			return nil
		}
		return &syncs[0]
	}
	wait := func(id func() *models.Sync) *models.Sync {
		var got *models.Sync
		deadline := time.Now().Add(5 * time.Minute)
		for {
			if got = id(); got != nil && !got.Active() {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("sync not finished after 5 min: %+v", got)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	start := time.Now()
	claim, _ := jobs.NewSimplefinClaimTask(c.FamilyID, c.ID, c.ClaimSeq)
	if _, err := queue.Enqueue(claim); err != nil {
		t.Fatal(err)
	}
	first := wait(latest)
	importTook := time.Since(start)
	if first.Status != models.SyncCompleted || first.TransactionsCreated != data.Count() {
		t.Fatalf("import: %s %v %+v", first.Status, first.Error, first.SyncCounts)
	}

	before := tupleCounts(t, store)
	start = time.Now()
	re, created, err := store.CreateSync(ctx, &models.Sync{FamilyID: f.Family.ID, ConnectionID: c.ID, Trigger: models.TriggerManual, Full: true})
	if err != nil || !created {
		t.Fatalf("re-sync: %v", err)
	}
	if err := jobs.EnqueueSync(ctx, queue, re, 0); err != nil {
		t.Fatal(err)
	}
	again := wait(func() *models.Sync {
		got, err := store.Sync(ctx, f.Family.ID, re.ID)
		if err != nil {
			return nil
		}
		return got
	})
	resyncTook := time.Since(start)
	after := tupleCounts(t, store)
	written := again.TransactionsCreated + again.TransactionsUpdated
	fmt.Printf("simplefin bulk import: %d transactions in %d accounts: import %.1fs (%.0f rows/s); full re-sync %.1fs, %d rows written, rows/newest xmin of transactions and aliases %s -> %s; peak RSS %s\n",
		data.Count(), len(data.Accounts), importTook.Seconds(), float64(data.Count())/importTook.Seconds(),
		resyncTook.Seconds(), written, before, after, peakRSS())
	if again.Status != models.SyncCompleted || written != 0 || (before != "" && before != after) {
		t.Fatalf("re-sync wrote: %s %+v", again.Status, again.SyncCounts)
	}
	if importTook > 60*time.Second {
		t.Fatalf("import took %v, over the 60 s bar", importTook)
	}
}

// tupleCounts fingerprints the tables an import writes: their row count
// and the newest xmin, which any insert or update (of any column) moves,
// unlike the statistics counters, which backends flush lazily. Empty on
// SQLite.
func tupleCounts(t *testing.T, store *models.Store) string {
	t.Helper()
	if !store.Postgres() {
		return ""
	}
	var out string
	err := store.DB().NewRaw(`SELECT (SELECT count(*) || '/' || coalesce(max(xmin::text::bigint), 0) FROM transactions) || ' ' ||
		(SELECT count(*) || '/' || coalesce(max(xmin::text::bigint), 0) FROM provider_transaction_aliases)`).Scan(context.Background(), &out)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// peakRSS is this process's high-water resident set (worker, fake Bridge
// and test together), from /proc.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	return "unknown"
}
