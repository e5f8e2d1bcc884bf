package worker_test

import (
	"context"
	"fmt"
	"testing"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/modelstest"
)

// TestImportRevertSurvivesWorkerKill imports 3,000 rows, then reverts the
// import and kills the worker after the revert committed, before it
// queued the account's refresh. A fresh worker finishes: no row of the
// import is left, the import is pending with no counts, and the sweep of
// waiting balance moves brings the balance right.
func TestImportRevertSurvivesWorkerKill(t *testing.T) {
	const n = 3000
	r := newKillRig(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, r.store, "revert-kill")
	stop := runWorker(t, r.options(r.handlers(nil, nil), nil))
	im := publishImport(t, r.store, r.queue, f, importFile(n))
	var sum int64
	waitFor(t, "the import and its balance", func() (bool, string) {
		rows, s, got := importedState(t, r.store, f, im.ID)
		a, err := r.store.Account(ctx, f.Family.ID, f.Account.ID)
		if err != nil {
			t.Fatal(err)
		}
		sum = s
		return got.Status == models.ImportComplete && rows == n && int64(a.Balance) == -sum,
			fmt.Sprintf("%s, %d rows, balance %s", got.Status, rows, a.Balance)
	})
	stop()

	reverting, err := r.store.StartRevert(ctx, f.Family.ID, im.ID)
	if err != nil {
		t.Fatal(err)
	}
	task, err := jobs.ImportTask(reverting)
	if err != nil {
		t.Fatal(err)
	}
	k := newKiller(jobs.HookImportReverted, 1)
	var id string
	r.kill(t, r.options(r.handlers(nil, k.hook), nil), k, func() { id = r.enqueue(t, task) })
	// The revert's balance moves wait for the account's refresh (on
	// PostgreSQL; SQLite's moved the balance in the revert itself), which
	// the killed worker never queued: the sweep of waiting moves, run by
	// the scheduler every 15 s, queues it.
	runWorker(t, r.options(r.handlers(nil, nil), nil))
	r.waitGone(t, jobs.QueueDefault, id)
	r.enqueue(t, jobs.NewBalanceMovesSweepTask())
	waitFor(t, "the balance after the revert", func() (bool, string) {
		a, err := r.store.Account(ctx, f.Family.ID, f.Account.ID)
		if err != nil {
			t.Fatal(err)
		}
		return a.Balance == 0, a.Balance.String()
	})
	rows, _, got := importedState(t, r.store, f, im.ID)
	if rows != 0 || got.Status != models.ImportPending || got.ProcessedRowsCount != 0 || got.ImportedRowsCount != 0 {
		t.Fatalf("%d rows left, import %+v", rows, got)
	}
}
