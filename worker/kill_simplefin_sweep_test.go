package worker_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/modelstest"
)

// TestSimplefinSweepSurvivesWorkerKill gives the sweep two syncs pending
// for over a day, two due syncs whose tasks were lost and a claim whose
// task was lost, and kills the worker once between the two expiries (the
// first committed, the second rolled back) and once after the lost syncs
// were re-queued, before the claim was. A fresh worker runs the sweep
// again: each expired sync is failed once, each lost sync runs once (its
// task gone, its requests counted once), and the claim is POSTed once.
func TestSimplefinSweepSurvivesWorkerKill(t *testing.T) {
	for _, tc := range []struct {
		point  string
		nth    int
		before bool
		match  func(query string) bool
	}{
		{"sweep:second_expiry", 2, true, func(q string) bool {
			return strings.HasPrefix(q, `UPDATE "syncs"`) && strings.Contains(q, "error = 'expired'")
		}},
		{"sweep:claims_listed", 1, false, func(q string) bool {
			return strings.HasPrefix(q, "SELECT") && strings.Contains(q, `FROM "provider_connections"`) &&
				strings.Contains(q, "(status = 'claiming')")
		}},
	} {
		t.Run(tc.point, func(t *testing.T) {
			ctx := context.Background()
			cr := newCrashRig(t, bridgetest.Generate(59, 1, 20, 10, time.Now().UTC()))
			stop := cr.start(t, cr.handlers())
			var expiring, losing []*models.Connection
			for i := range 2 {
				expiring = append(expiring, cr.connect(t, fmt.Sprintf("sweep-expire-%d", i)))
				losing = append(losing, cr.connect(t, fmt.Sprintf("sweep-lost-%d", i)))
			}
			for _, c := range append(expiring, losing...) {
				cr.waitDone(t, c)
			}
			stop()

			var expired, lost []*models.Sync
			for _, c := range expiring {
				expired = append(expired, createSync(t, cr, c, time.Now().Add(-25*time.Hour)))
			}
			reads := map[*models.Sync]int{}
			for i, c := range losing {
				sy := createSync(t, cr, c, time.Now())
				lost = append(lost, sy)
				reads[sy] = accountsReads(cr.bridge, fmt.Sprintf("sweep-lost-%d", i))
			}
			claiming := &models.Connection{FamilyID: modelstest.NewFamily(t, cr.store, "sweep-claim").Family.ID, Name: "Bridge"}
			if err := cr.store.CreateConnection(ctx, claiming, cr.bridge.Token("sweep-claim")); err != nil {
				t.Fatal(err)
			}

			r, options := cr.killRig()
			k := newKiller(tc.point, tc.nth)
			killed := options(nil)
			killed.SimpleFIN.Store = hookedStore(cr.store, &killQuery{k: k, before: tc.before, match: tc.match})
			var id string
			r.kill(t, killed, k, func() { id = r.enqueue(t, simplefin.NewSweepTask()) })

			runWorker(t, options(nil))
			r.waitGone(t, jobs.QueueLow, id)
			for _, sy := range expired {
				got, err := cr.store.Sync(ctx, sy.FamilyID, sy.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != models.SyncFailed || models.Str(got.Error) != "expired" {
					t.Errorf("expired sync %s: %s %q", sy.ID, got.Status, models.Str(got.Error))
				}
			}
			for i, sy := range lost {
				ranOnce(t, r, cr, sy, fmt.Sprintf("sweep-lost-%d", i), reads[sy])
			}
			r.waitGone(t, jobs.QueueCritical, fmt.Sprintf("simplefin:claim:%s:%d", claiming.ID, claiming.ClaimSeq))
			got, err := cr.store.Connection(ctx, claiming.FamilyID, claiming.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != models.ConnActive || cr.bridge.Posts("sweep-claim") != 1 {
				t.Errorf("lost claim: connection %s after %d POSTs", got.Status, cr.bridge.Posts("sweep-claim"))
			}
		})
	}
}

// createSync stores a manual sync of c due at notBefore, queueing no
// task for it, as a web request that died after its commit leaves it.
func createSync(t *testing.T, cr *crashRig, c *models.Connection, notBefore time.Time) *models.Sync {
	t.Helper()
	sy, created, err := cr.store.CreateSync(context.Background(), &models.Sync{FamilyID: c.FamilyID, ConnectionID: c.ID,
		Trigger: models.TriggerManual, NotBefore: notBefore})
	if err != nil || !created {
		t.Fatalf("sync of %s not created: %v", c.ID, err)
	}
	return sy
}

// ranOnce waits for sy to end and its task to run to success and leave,
// and checks that sy completed having made every /accounts request the Bridge
// got from code's credential since reads: one run fetched, and no other.
func ranOnce(t *testing.T, r *killRig, cr *crashRig, sy *models.Sync, code string, reads int) {
	t.Helper()
	var got *models.Sync
	waitFor(t, "sync "+sy.ID.String()+" to end", func() (bool, string) {
		var err error
		if got, err = cr.store.Sync(context.Background(), sy.FamilyID, sy.ID); err != nil {
			return false, err.Error()
		}
		return !got.Active(), got.Status + "/" + got.Phase
	})
	r.waitGone(t, jobs.QueueDefault, "simplefin:sync:"+sy.ID.String())
	n := accountsReads(cr.bridge, code) - reads
	if got.Status != models.SyncCompleted || n == 0 || n != got.RequestsUsed {
		t.Errorf("sync %s: %s with %d requests counted, %d made", sy.ID, got.Status, got.RequestsUsed, n)
	}
}

// accountsReads counts the /accounts requests the fake Bridge got with
// the access URL a claim of code returns.
func accountsReads(b *bridgetest.Server, code string) int {
	u, err := url.Parse(b.AccessURL(code))
	if err != nil {
		return -1
	}
	n := 0
	for _, r := range b.AccountsLog() {
		if r.User == u.User.Username() {
			n++
		}
	}
	return n
}
