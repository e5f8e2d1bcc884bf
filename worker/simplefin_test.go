package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/modelstest"
	"coffer/worker"
)

// simplefinWorker runs a real asynq server on the test Redis with the
// SimpleFIN handlers pointed at a fake Bridge.
func simplefinWorker(t *testing.T) (*models.Store, *asynq.Client, *asynq.Inspector, *bridgetest.Server) {
	t.Helper()
	store := modelstest.NewStore(t)
	opt, rdb := modelstest.RedisClient(t, redisDB)
	queue := asynq.NewClientFromRedisClient(rdb)
	log := bridgetest.Logger(t)
	h := &simplefin.Handlers{Store: store, Queue: queue, Log: log, Redis: rdb, Bridge: fakeBridgeClient(),
		Options: simplefin.Options{RetryBase: 10 * time.Millisecond}}
	runWorker(t, worker.Options{Redis: opt, Handlers: &jobs.Handlers{Store: store, Queue: queue, Log: log}, SimpleFIN: h,
		Logger: log, Concurrency: 4, BalanceSweepCron: "@every 1h"})
	insp := asynq.NewInspectorFromRedisClient(rdb)
	return store, queue, insp, bridgetest.New(t)
}

// fakeBridgeClient is a Bridge client that may reach the fake on
// loopback over plain HTTP, with short network retries.
func fakeBridgeClient() *bridge.Client {
	return bridge.NewClient(bridge.Options{AllowHTTP: true, AllowPrivateHosts: true, RetryInitial: time.Millisecond})
}

// connectThrough stores a new family's connection to the fake and queues its
// claim on the worker; the claim leads to the first sync.
func connectThrough(t *testing.T, store *models.Store, queue *asynq.Client, fake *bridgetest.Server, family, code string) *models.Connection {
	t.Helper()
	f := modelstest.NewFamily(t, store, family)
	c := &models.Connection{FamilyID: f.Family.ID, Name: "Bridge"}
	if err := store.CreateConnection(context.Background(), c, fake.Token(code)); err != nil {
		t.Fatal(err)
	}
	claim, _ := simplefin.NewClaimTask(c.FamilyID, c.ID, c.ClaimSeq)
	if _, err := queue.Enqueue(claim); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSimplefinThroughWorker: a setup token goes through the claim, the
// fetch and the account steps on a real worker, and the parent sync
// completes after every step.
func TestSimplefinThroughWorker(t *testing.T) {
	store, queue, _, fake := simplefinWorker(t)
	ctx := context.Background()
	data := bridgetest.Generate(11, 4, 100, 60, time.Now().UTC())
	fake.SetDataset(data)
	c := connectThrough(t, store, queue, fake, "sfworker", "w1")
	waitFor(t, "the first sync to complete", func() (bool, string) {
		syncs, _, err := store.Syncs(ctx, c.FamilyID, models.SyncFilter{}, models.Page{Number: 1, Size: 5})
		if err != nil || len(syncs) == 0 {
			return false, "no sync"
		}
		return syncs[0].Status == models.SyncCompleted, syncs[0].Status
	})
	syncs, _, _ := store.Syncs(ctx, c.FamilyID, models.SyncFilter{}, models.Page{Number: 1, Size: 5})
	got, _ := store.Sync(ctx, c.FamilyID, syncs[0].ID)
	if got.TransactionsCreated != data.Count() || len(got.Children) != 4 {
		t.Fatalf("counts %+v, %d steps", got.SyncCounts, len(got.Children))
	}
	for _, st := range got.Children {
		if st.Status != models.SyncCompleted || st.FinishedAt.After(*got.FinishedAt) {
			t.Fatalf("step %s %s finished after its parent", st.ID, st.Status)
		}
	}
}

// TestSimplefinRateLimitDefers: a 429 leaves one deferred task due at the
// connection's retry_after, and no second request.
func TestSimplefinRateLimitDefers(t *testing.T) {
	store, queue, insp, fake := simplefinWorker(t)
	ctx := context.Background()
	fake.SetAccounts(bridgetest.Accounts429, "")
	c := connectThrough(t, store, queue, fake, "sfdefer", "w2")
	var sy *models.Sync
	waitFor(t, "the rate limit", func() (bool, string) {
		got, err := store.Connection(ctx, c.FamilyID, c.ID)
		if err != nil {
			return false, err.Error()
		}
		if sy, err = store.ActiveSync(ctx, c.FamilyID, c.ID); err != nil {
			return false, got.Status
		}
		info, err := insp.GetTaskInfo(jobs.QueueDefault, "simplefin:sync:"+sy.ID.String())
		return got.Status == models.ConnRateLimited && err == nil && info.State == asynq.TaskStateRetry, got.Status
	})
	got, _ := store.Connection(ctx, c.FamilyID, c.ID)
	info, _ := insp.GetTaskInfo(jobs.QueueDefault, "simplefin:sync:"+sy.ID.String())
	if d := info.NextProcessAt.Sub(*got.RetryAfter); d < -2*time.Second || d > 2*time.Second || info.Retried != 0 {
		t.Fatalf("next run %v, retry_after %v, retried %d", info.NextProcessAt, got.RetryAfter, info.Retried)
	}
	if n, _ := fake.AccountsRequests(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

// TestSimplefinUnreadableFailsAfterRetries: an answer that is complete
// but not an account set is retried by asynq (3 retries), writes nothing,
// leaves the connection as it was, and then fails the sync with the
// spec's sentence.
func TestSimplefinUnreadableFailsAfterRetries(t *testing.T) {
	store, queue, _, fake := simplefinWorker(t)
	ctx := context.Background()
	fake.SetAccounts(bridgetest.AccountsBadJSON, "")
	c := connectThrough(t, store, queue, fake, "sfbad", "w3")
	var got models.Sync
	waitFor(t, "the sync to fail", func() (bool, string) {
		syncs, _, err := store.Syncs(ctx, c.FamilyID, models.SyncFilter{}, models.Page{Number: 1, Size: 5})
		if err != nil || len(syncs) == 0 {
			return false, "no sync"
		}
		got = syncs[0]
		return !got.Active(), got.Status
	})
	if got.Status != models.SyncFailed || got.Error == nil || *got.Error != simplefin.MsgUnreadable || got.RequestsUsed != 4 {
		t.Fatalf("sync %s %v after %d requests", got.Status, got.Error, got.RequestsUsed)
	}
	if n, _ := fake.AccountsRequests(); n != 4 {
		t.Fatalf("%d requests, want 4 (one and 3 retries)", n)
	}
	conn, _ := store.Connection(ctx, c.FamilyID, c.ID)
	rows, _ := store.DB().NewSelect().Table("transactions").Where("family_id = ?", c.FamilyID).Count(ctx)
	if conn.Status != models.ConnActive || rows != 0 {
		t.Fatalf("connection %s, %d rows", conn.Status, rows)
	}
}
