package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/modelstest"
	"coffer/worker"
)

// crashRig is one database, one Redis and one fake Bridge, on which
// workers are started and stopped like processes.
type crashRig struct {
	store  *models.Store
	opt    asynq.RedisClientOpt
	rdb    redis.UniversalClient
	bridge *bridgetest.Server
	log    *slog.Logger
}

func newCrashRig(t *testing.T, data *bridgetest.Dataset) *crashRig {
	t.Helper()
	r := &crashRig{store: modelstest.NewStore(t), bridge: bridgetest.New(t), log: discardLog()}
	r.opt, r.rdb = modelstest.RedisClient(t, redisDB)
	if data != nil {
		r.bridge.SetDataset(data)
	}
	return r
}

func (r *crashRig) handlers() *simplefin.Handlers {
	return &simplefin.Handlers{Store: r.store, Queue: asynq.NewClientFromRedisClient(r.rdb), Log: r.log, Redis: r.rdb,
		Bridge: fakeBridgeClient(), Options: simplefin.Options{RetryBase: 10 * time.Millisecond}}
}

// start runs a worker with h and the generic handlers on its store; the returned stop shuts it down the way
// SIGTERM does, with almost no time for running tasks, so they go back
// to the queue.
func (r *crashRig) start(t *testing.T, h *simplefin.Handlers) (stop func()) {
	t.Helper()
	return runWorker(t, worker.Options{Redis: r.opt, Handlers: &jobs.Handlers{Store: h.Store, Queue: h.Queue, Log: h.Log}, SimpleFIN: h,
		Logger: r.log, Concurrency: 4, BalanceSweepCron: "@every 1h", ShutdownTimeout: 10 * time.Millisecond})
}

// connect stores a connection and queues its claim; the claim leads to
// the first sync.
func (r *crashRig) connect(t *testing.T, name string) *models.Connection {
	t.Helper()
	f := modelstest.NewFamily(t, r.store, name)
	c := &models.Connection{FamilyID: f.Family.ID, Name: "Bridge"}
	if err := r.store.CreateConnection(context.Background(), c, r.bridge.Token(name)); err != nil {
		t.Fatal(err)
	}
	claim, _ := simplefin.NewClaimTask(c.FamilyID, c.ID, c.ClaimSeq)
	if _, err := asynq.NewClientFromRedisClient(r.rdb).Enqueue(claim); err != nil {
		t.Fatal(err)
	}
	return c
}

// firstSync returns the connection's first sync with its steps.
func (r *crashRig) firstSync(c *models.Connection) (*models.Sync, error) {
	syncs, _, err := r.store.Syncs(context.Background(), c.FamilyID, models.SyncFilter{ConnectionID: &c.ID}, models.Page{Number: 1, Size: 5})
	if err != nil {
		return nil, err
	}
	if len(syncs) != 1 {
		return nil, fmt.Errorf("%d syncs", len(syncs))
	}
	return r.store.Sync(context.Background(), c.FamilyID, syncs[0].ID)
}

// waitEnded waits for the connection's first sync to end, completed or
// failed, and returns it with its steps.
func (r *crashRig) waitEnded(t *testing.T, c *models.Connection) *models.Sync {
	t.Helper()
	var got *models.Sync
	waitFor(t, "the sync to end", func() (bool, string) {
		sy, err := r.firstSync(c)
		if err != nil {
			return false, err.Error()
		}
		got = sy
		return !sy.Active(), sy.Status + "/" + sy.Phase
	})
	return got
}

// waitDone waits for the connection's sync to end, and fails unless it
// completed.
func (r *crashRig) waitDone(t *testing.T, c *models.Connection) *models.Sync {
	t.Helper()
	got := r.waitEnded(t, c)
	if got.Status != models.SyncCompleted {
		t.Fatalf("sync %s: %v", got.Status, got.Error)
	}
	return got
}

// endState is what a sync leaves that must not depend on crashes: every
// imported row (by remote id, with the values the ledger shows) and the
// parent's counts.
type endState struct {
	rows   []string
	sum    int64
	counts models.SyncCounts
}

func (r *crashRig) endState(t *testing.T, c *models.Connection, parent *models.Sync) endState {
	t.Helper()
	ctx := context.Background()
	var txns []models.Transaction
	if err := r.store.DB().NewSelect().Model(&txns).Where("family_id = ?", c.FamilyID).Where("source = 'simplefin'").
		Scan(ctx); err != nil {
		t.Fatal(err)
	}
	var s endState
	for _, tx := range txns {
		s.rows = append(s.rows, fmt.Sprintf("%s %s %d %s pending=%t excluded=%t", *tx.ExternalID, tx.Date, tx.Amount, tx.Name, tx.Pending, tx.Excluded))
		s.sum += int64(tx.Amount)
	}
	slices.Sort(s.rows)
	if i := len(slices.Compact(slices.Clone(s.rows))); i != len(s.rows) {
		t.Fatalf("%d duplicate rows", len(s.rows)-i)
	}
	s.counts = parent.SyncCounts
	// What the parent's completion does, once: the connection points at it,
	// every step finished before it, and the payloads are gone.
	var last uuid.NullUUID
	if err := r.store.DB().NewSelect().Table("provider_connections").Column("last_success_sync_id").
		Where("family_id = ?", c.FamilyID).Where("id = ?", c.ID).Scan(ctx, &last); err != nil || last.UUID != parent.ID {
		t.Fatalf("connection's last success %v, want %s (%v)", last, parent.ID, err)
	}
	var sum models.SyncCounts
	for _, st := range parent.Children {
		if st.Status != models.SyncCompleted || st.FinishedAt.After(*parent.FinishedAt) {
			t.Fatalf("step %s %s, finished %v after the parent %v", st.ID, st.Status, st.FinishedAt, parent.FinishedAt)
		}
		sum.TransactionsCreated += st.TransactionsCreated
		sum.TransactionsUpdated += st.TransactionsUpdated
		sum.TransactionsSkipped += st.TransactionsSkipped
	}
	if sum.TransactionsCreated != parent.TransactionsCreated || sum.TransactionsUpdated != parent.TransactionsUpdated ||
		sum.TransactionsSkipped != parent.TransactionsSkipped {
		t.Fatalf("parent counts %+v are not the sums of its steps %+v", parent.SyncCounts, sum)
	}
	if left, err := r.store.SyncPayloadChunks(ctx, c.FamilyID, parent.ID); err != nil || len(left) != 0 {
		t.Fatalf("payloads left: %v %v", left, err)
	}
	return s
}

// TestSimplefinCrashSafety stops a real worker during the fetch, before
// the account steps are queued, during an import and after one committed,
// then starts a fresh worker on the same Redis and database. The
// re-delivered tasks reach the end state of an undisturbed run: the same
// rows, the same counts, no duplicates, the parent finished once and its
// payloads deleted.
func TestSimplefinCrashSafety(t *testing.T) {
	data := bridgetest.Generate(41, 3, 150, 60, time.Now().UTC())
	want := func() endState {
		r := newCrashRig(t, data)
		stop := r.start(t, r.handlers())
		defer stop() // before the next worker: they share the queues
		c := r.connect(t, "undisturbed")
		return r.endState(t, c, r.waitDone(t, c))
	}()
	if len(want.rows) != data.Count() {
		t.Fatalf("undisturbed run imported %d rows, want %d", len(want.rows), data.Count())
	}

	for _, point := range []string{simplefin.HookFetch, simplefin.HookSteps, simplefin.HookImport, simplefin.HookImported} {
		t.Run(point, func(t *testing.T) {
			r := newCrashRig(t, data)
			reached := make(chan struct{})
			var once sync.Once
			h := r.handlers()
			// Every run that gets there waits for its worker to stop.
			h.Hook = func(ctx context.Context, p string) {
				if p == point {
					once.Do(func() { close(reached) })
					<-ctx.Done()
				}
			}
			stop := r.start(t, h)
			c := r.connect(t, "crash-"+point)
			select {
			case <-reached:
			case <-time.After(30 * time.Second):
				t.Fatalf("no run reached %q", point)
			}
			stop()
			// The stopped runs hand back their leases as they return.
			waitFor(t, "the stopped runs to let go", func() (bool, string) {
				sy, err := r.firstSync(c)
				if err != nil {
					return false, err.Error()
				}
				if sy.Status == models.SyncRunning && sy.Phase == models.PhaseFetch {
					return false, "parent still leased"
				}
				for _, st := range sy.Children {
					if st.Status == models.SyncRunning {
						return false, "step " + st.ID.String() + " still leased"
					}
				}
				return true, ""
			})
			defer r.start(t, r.handlers())()
			got := r.endState(t, c, r.waitDone(t, c))
			if !slices.Equal(got.rows, want.rows) || got.sum != want.sum {
				t.Fatalf("%d rows summing to %d, want %d summing to %d", len(got.rows), got.sum, len(want.rows), want.sum)
			}
			if got.counts != want.counts {
				t.Fatalf("counts %+v, want %+v", got.counts, want.counts)
			}
		})
	}
}
