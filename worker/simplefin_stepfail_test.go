package worker_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

// TestSimplefinStepFails (spec §14.3, scenario 7): one account step of
// three cannot be imported (its stored payload is unreadable, every
// retry). The parent fails only after the other steps finished, naming
// the failure; the others' rows are in; and the next sync reads the same
// window again, since a failed sync moves nothing forward.
func TestSimplefinStepFails(t *testing.T) {
	data := bridgetest.Generate(41, 3, 20, 20, time.Now().UTC())
	r := newCrashRig(t, data)
	h := r.handlers()
	var spoil atomic.Bool
	spoil.Store(true)
	h.Hook = func(ctx context.Context, point string) {
		if point != simplefin.HookSteps || !spoil.Load() {
			return
		}
		// Spoil one account's payload once its steps are stored.
		if _, err := r.store.DB().NewUpdate().Table("sync_payloads").Set("body_gz = ?", []byte("not gzip")).
			Where("remote_id = ?", data.Accounts[1].ID).Exec(ctx); err != nil {
			t.Error(err)
		}
	}
	r.start(t, h)
	c := r.connect(t, "stepfail")
	got := r.waitEnded(t, c)
	first := got
	if got.Status != models.SyncFailed || got.Error == nil || !strings.Contains(*got.Error, "1 of 3") {
		t.Fatalf("parent %s %v", got.Status, got.Error)
	}
	failed, completed := 0, 0
	for _, ch := range got.Children {
		switch ch.Status {
		case models.SyncFailed:
			failed++
		case models.SyncCompleted:
			completed++
		}
		if ch.FinishedAt == nil || ch.FinishedAt.After(*got.FinishedAt) {
			t.Fatalf("step finished %v, after the parent's %v", ch.FinishedAt, got.FinishedAt)
		}
	}
	if failed != 1 || completed != 2 || got.TransactionsCreated != 40 {
		t.Fatalf("steps: %d failed, %d completed; %d rows", failed, completed, got.TransactionsCreated)
	}
	if conn, _ := r.store.Connection(context.Background(), c.FamilyID, c.ID); conn.LastSyncedAt != nil {
		t.Fatal("a failed sync counted as the last success")
	}

	// The next sync reads the same window: nothing completed since.
	next, created, err := r.store.CreateSync(context.Background(), &models.Sync{FamilyID: c.FamilyID, ConnectionID: c.ID, Trigger: models.TriggerManual})
	if err != nil || !created {
		t.Fatalf("next sync: %v", err)
	}
	spoil.Store(false)
	if err := simplefin.EnqueueSync(context.Background(), h.Queue, next, 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the next sync to end", func() (bool, string) {
		sy, err := r.store.Sync(context.Background(), c.FamilyID, next.ID)
		if err != nil {
			return false, err.Error()
		}
		got = sy
		return !sy.Active(), sy.Status
	})
	if got.Status != models.SyncCompleted || got.TransactionsCreated != 20 || !got.WindowStart.Equal(*first.WindowStart) {
		t.Fatalf("next: %s, %d created, window from %v (first from %v)", got.Status, got.TransactionsCreated, got.WindowStart, first.WindowStart)
	}
}
