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
// queued the account's refresh. The balance moved with the revert; a
// fresh worker finishes: no row of the import is left, the import is
// pending with no counts, and the balance stays right.
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
	// The balance moves with the revert itself (kept incrementally, in the
	// revert's own database transaction), so a worker killed before the
	// refresh is queued leaves it right already.
	if a, err := r.store.Account(ctx, f.Family.ID, f.Account.ID); err != nil || a.Balance != 0 {
		t.Fatalf("killed before the refresh was queued, the balance did not move with the revert: %v %v", a, err)
	}

	runWorker(t, r.options(r.handlers(nil, nil), nil))
	r.waitGone(t, jobs.QueueDefault, id)
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
