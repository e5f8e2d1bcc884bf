package worker_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

// TestSimplefinFetchInfoSurvivesWorkerKill kills the worker during a
// connection's /info read: once after the request was answered, before
// the versions were stored (the write then fails, so the re-delivered run
// must ask again), and once after they committed (the re-delivered run
// must not ask again). A fresh worker finishes: the connection holds the
// versions the Bridge gave, the Bridge was asked no more often than it
// had to be, and the request budget counts every request once.
func TestSimplefinFetchInfoSurvivesWorkerKill(t *testing.T) {
	for _, tc := range []struct {
		point  string
		before bool // hold before the write (it then fails) or after its commit
		reads  int  // /info requests the Bridge gets from the killed and the fresh run
	}{
		{"info:before_write", true, 2},
		{"info:after_write", false, 1},
	} {
		t.Run(tc.point, func(t *testing.T) {
			ctx := context.Background()
			cr := newCrashRig(t, bridgetest.Generate(47, 1, 20, 10, time.Now().UTC()))
			stop := cr.start(t, cr.handlers())
			c := cr.connect(t, "info-kill")
			cr.waitDone(t, c)
			var want []string
			waitFor(t, "the versions the claim's /info read stores", func() (bool, string) {
				got, err := cr.store.Connection(ctx, c.FamilyID, c.ID)
				if err != nil {
					return false, err.Error()
				}
				want = got.ServerVersions
				return len(want) > 0, fmt.Sprint(want)
			})
			stop()
			// Forgotten, as after a reconnect: a fresh read is due.
			if err := cr.store.SetServerVersions(ctx, c, nil); err != nil {
				t.Fatal(err)
			}
			reads, used := infoReads(cr.bridge), budgetUsed(t, cr, c)

			r, options := cr.killRig()
			k := newKiller(tc.point, 1)
			killed := options(nil)
			killed.SimpleFIN.Store = hookedStore(cr.store, &killQuery{k: k, before: tc.before, match: func(q string) bool {
				return strings.HasPrefix(q, `UPDATE "provider_connections"`) && strings.Contains(q, "SET server_versions = ")
			}})
			task, err := simplefin.NewFetchInfoTask(c.FamilyID, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			var id string
			r.kill(t, killed, k, func() { id = r.enqueue(t, task) })
			if n := infoReads(cr.bridge) - reads; n != 1 {
				t.Fatalf("killed at %s after %d /info requests, want 1", tc.point, n)
			}

			runWorker(t, options(nil))
			r.waitGone(t, jobs.QueueDefault, id)
			got, err := cr.store.Connection(ctx, c.FamilyID, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.ServerVersions, want) {
				t.Errorf("server versions %v, want %v", got.ServerVersions, want)
			}
			if n := infoReads(cr.bridge) - reads; n != tc.reads {
				t.Errorf("%d /info requests, want %d", n, tc.reads)
			}
			if n := budgetUsed(t, cr, c) - used; n != tc.reads {
				t.Errorf("the budget counts %d requests for %d /info reads", n, tc.reads)
			}
		})
	}
}

// infoReads counts the /info requests the fake Bridge received.
func infoReads(b *bridgetest.Server) int {
	n := 0
	for _, r := range b.Log() {
		if strings.HasSuffix(r.Path, "/info") {
			n++
		}
	}
	return n
}

// budgetUsed is the connection's request budget used in the last day.
func budgetUsed(t *testing.T, cr *crashRig, c *models.Connection) int {
	t.Helper()
	n, err := simplefin.RequestsLast24h(context.Background(), cr.rdb, c.ID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return n
}
