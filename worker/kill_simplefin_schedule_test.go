package worker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

// TestSimplefinScheduleSurvivesWorkerKill schedules the day's syncs of
// four connections and kills the worker after the second scheduled sync
// committed, before it was queued (the first was queued, the others not
// made). A fresh worker runs the schedule again, and the sweep queues
// what the database says is due: each connection has exactly one
// scheduled sync for the day, it ran once, and the ledger has no
// duplicate row.
func TestSimplefinScheduleSurvivesWorkerKill(t *testing.T) {
	const conns = 4
	data := bridgetest.Generate(53, 1, 20, 10, time.Now().UTC())
	cr := newCrashRig(t, data)
	stop := cr.start(t, cr.handlers())
	var cs []*models.Connection
	for i := range conns {
		cs = append(cs, cr.connect(t, fmt.Sprintf("schedule-kill-%d", i)))
	}
	for _, c := range cs {
		cr.waitDone(t, c)
	}
	stop()
	reads := make([]int, conns)
	for i := range cs {
		reads[i] = accountsReads(cr.bridge, fmt.Sprintf("schedule-kill-%d", i))
	}

	r, options := cr.killRig()
	// A jitter that spreads nothing: every scheduled sync is due at once.
	quick := func(o *simplefin.Handlers) { o.Options.Jitter = time.Millisecond }
	point := "schedule:second_created"
	k := newKiller(point, 2)
	killed := options(nil)
	quick(killed.SimpleFIN)
	killed.SimpleFIN.Store = hookedStore(cr.store, &killQuery{k: k, match: func(q string) bool {
		// The parent rows of scheduled syncs, not the account steps a
		// running sync inserts.
		return strings.HasPrefix(q, `INSERT INTO "syncs"`) && strings.Contains(q, "'schedule'") && strings.Contains(q, "'connection'")
	}})
	var id string
	r.kill(t, killed, k, func() { id = r.enqueue(t, simplefin.NewScheduleTask()) })
	if n := len(scheduledSyncs(t, cr, cs)); n != 2 {
		t.Fatalf("killed after the second scheduled sync, %d are stored", n)
	}

	fresh := options(nil)
	quick(fresh.SimpleFIN)
	runWorker(t, fresh)
	r.waitGone(t, jobs.QueueLow, id)
	r.waitGone(t, jobs.QueueLow, r.enqueue(t, simplefin.NewSweepTask()))
	scheduled := scheduledSyncs(t, cr, cs)
	for i, c := range cs {
		sy := scheduled[c.ID]
		if sy == nil {
			t.Errorf("connection %d has no scheduled sync", i)
			continue
		}
		ranOnce(t, r, cr, sy, fmt.Sprintf("schedule-kill-%d", i), reads[i])
		if n := len(simplefinRows(t, cr.store, c)); n != data.Count() {
			t.Errorf("connection %d: %d rows, want %d", i, n, data.Count())
		}
	}
	if n := len(scheduledSyncs(t, cr, cs)); n != conns {
		t.Fatalf("%d scheduled syncs, want %d", n, conns)
	}
}

// scheduledSyncs returns the scheduled syncs of the connections by
// connection, failing the test if one has more than one.
func scheduledSyncs(t *testing.T, cr *crashRig, cs []*models.Connection) map[uuid.UUID]*models.Sync {
	t.Helper()
	out := map[uuid.UUID]*models.Sync{}
	for _, c := range cs {
		syncs, _, err := cr.store.Syncs(context.Background(), c.FamilyID, models.SyncFilter{ConnectionID: &c.ID}, models.Page{Number: 1, Size: 50})
		if err != nil {
			t.Fatal(err)
		}
		for i := range syncs {
			if syncs[i].Trigger != models.TriggerSchedule {
				continue
			}
			if out[c.ID] != nil {
				t.Fatalf("connection %s has two scheduled syncs: %s and %s", c.ID, out[c.ID].ID, syncs[i].ID)
			}
			out[c.ID] = &syncs[i]
		}
	}
	return out
}
