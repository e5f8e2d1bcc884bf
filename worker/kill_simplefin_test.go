package worker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/worker"
)

// TestSimplefinPurgeSurvivesWorkerKill syncs a connection, disconnects it
// asking for its data to go, and kills the worker after the purge's first
// batch committed (every imported row gone, the accounts not yet). A fresh
// worker finishes: no imported row, no remote account and no account the
// connection created is left, and the family's own account is kept.
func TestSimplefinPurgeSurvivesWorkerKill(t *testing.T) {
	data := bridgetest.Generate(41, 3, 150, 60, time.Now().UTC())
	cr := newCrashRig(t, data)
	ctx := context.Background()
	stop := cr.start(t, cr.handlers())
	c := cr.connect(t, "purge-kill")
	cr.waitDone(t, c)
	stop()
	if _, err := cr.store.DisconnectConnection(ctx, c.FamilyID, c.ID); err != nil {
		t.Fatal(err)
	}
	before, total, err := cr.store.Accounts(ctx, c.FamilyID, models.Page{Number: 1, Size: 50})
	if err != nil || total < 2 {
		t.Fatalf("%d accounts before the purge: %v", total, err)
	}
	own := before[0].ID
	for _, a := range before {
		if a.Name == "Checking" {
			own = a.ID // the fixture's, which no sync created
		}
	}

	r, options := cr.killRig()
	task, err := simplefin.NewPurgeTask(c.FamilyID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	k := newKiller(simplefin.HookPurged, 1)
	var id string
	r.kill(t, options(k.hook), k, func() { id = r.enqueue(t, task) })
	if n := len(simplefinRows(t, cr.store, c)); n != 0 {
		t.Fatalf("killed after the first batch, %d imported rows are left", n)
	}

	runWorker(t, options(nil))
	r.waitGone(t, jobs.QueueLow, id)
	if n := len(simplefinRows(t, cr.store, c)); n != 0 {
		t.Fatalf("%d imported rows left", n)
	}
	pas, err := cr.store.ProviderAccounts(ctx, c.FamilyID, c.ID)
	if err != nil || len(pas) != 0 {
		t.Fatalf("%d remote accounts left: %v", len(pas), err)
	}
	after, total, err := cr.store.Accounts(ctx, c.FamilyID, models.Page{Number: 1, Size: 50})
	if err != nil || total != 1 || after[0].ID != own {
		t.Fatalf("%d accounts left, want only the family's own: %v", total, err)
	}
}

// TestSimplefinClaimSurvivesWorkerKill kills the worker after a claim
// stored its access URL, before the first sync was queued. A fresh worker
// and the sweep finish: the claim was POSTed once, the first sync imports
// every row once, and the server versions are read.
func TestSimplefinClaimSurvivesWorkerKill(t *testing.T) {
	data := bridgetest.Generate(43, 2, 100, 40, time.Now().UTC())
	cr := newCrashRig(t, data)
	r, options := cr.killRig()
	k := newKiller(simplefin.HookClaimed, 1)
	var c *models.Connection
	r.kill(t, options(k.hook), k, func() { c = cr.connect(t, "claim-kill") })
	if sy, err := cr.firstSync(c); err != nil || sy.Status != models.SyncPending {
		t.Fatalf("killed after the claim: first sync %+v, %v", sy, err)
	}

	runWorker(t, options(nil))
	// The sweep queues what the database says is due and no task will run.
	r.enqueue(t, simplefin.NewSweepTask())
	got := cr.endState(t, c, cr.waitDone(t, c))
	if len(got.rows) != data.Count() {
		t.Fatalf("%d rows, want %d", len(got.rows), data.Count())
	}
	if n := cr.bridge.Posts("claim-kill"); n != 1 {
		t.Fatalf("%d claim POSTs", n)
	}
	// The re-delivered claim queued the /info read the killed one did not.
	waitFor(t, "the server versions", func() (bool, string) {
		got, err := cr.store.Connection(context.Background(), c.FamilyID, c.ID)
		if err != nil {
			return false, err.Error()
		}
		return len(got.ServerVersions) > 0, fmt.Sprint(got.ServerVersions)
	})
}

// killRig is a killRig on the crash rig's database and Redis, with a
// function building worker options whose SimpleFIN handlers have hook.
func (cr *crashRig) killRig() (*killRig, func(hook func(context.Context, string)) worker.Options) {
	r := &killRig{store: cr.store, opt: cr.opt, rdb: cr.rdb, queue: asynq.NewClientFromRedisClient(cr.rdb),
		insp: asynq.NewInspectorFromRedisClient(cr.rdb), log: cr.log, ends: &taskEnds{ended: map[string]int{}}}
	return r, func(hook func(context.Context, string)) worker.Options {
		o := r.options(r.handlers(nil, nil), nil)
		o.SimpleFIN = cr.handlers()
		o.SimpleFIN.Hook = hook
		return o
	}
}

// simplefinRows lists the transactions the connection's family imported
// from SimpleFIN.
func simplefinRows(t *testing.T, store *models.Store, c *models.Connection) []models.Transaction {
	t.Helper()
	var txns []models.Transaction
	if err := store.DB().NewSelect().Model(&txns).Where("family_id = ?", c.FamilyID).Where("source = 'simplefin'").
		Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	return txns
}
