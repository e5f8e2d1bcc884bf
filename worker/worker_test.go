package worker_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/modelstest"
	"coffer/worker"
)

const redisDB = 13

// runWorker runs worker.Run with o until the test ends or stop is called,
// and fails the test if it returns an error. The stores of its handlers
// get the balance policy, as main.go gives it to a worker's.
func runWorker(t *testing.T, o worker.Options) (stop func()) {
	t.Helper()
	q := asynq.NewClient(o.Redis)
	t.Cleanup(func() { q.Close() })
	if o.Handlers != nil {
		jobs.UseBalances(o.Handlers.Store, q, o.Logger)
	}
	if o.SimpleFIN != nil {
		jobs.UseBalances(o.SimpleFIN.Store, q, o.Logger)
	}
	if o.Assistant != nil {
		jobs.UseBalances(o.Assistant.Store, q, o.Logger)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- worker.Run(ctx, o) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitFor polls cond for up to a minute: a restarted worker may wait out
// a retry delay.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	modelstest.WaitFor(t, what, 60*time.Second, cond)
}

// discardLog is a logger for tests that do not read the log.
func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestWorkerProcessesQueuedWork runs the real server on its own Redis
// database and waits, with a deadline, for a queued recalculation to land.
func TestWorkerProcessesQueuedWork(t *testing.T) {
	store := modelstest.NewStore(t)
	opt, rdb := modelstest.RedisClient(t, redisDB)
	queue := asynq.NewClientFromRedisClient(rdb)
	log := discardLog()
	ctx := context.Background()
	runWorker(t, worker.Options{Redis: opt, Handlers: &jobs.Handlers{Store: store, Queue: queue, Log: log}, Logger: log,
		Concurrency: 2, BalanceSweepCron: "@every 1h"})

	f := modelstest.NewFamily(t, store, "worker")
	if _, _, err := store.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
		Date: "2024-01-01", Amount: 50000, Currency: "USD", Name: "x"}, nil); err != nil {
		t.Fatal(err)
	}
	// The sweep fans out to every account, this one included.
	if _, err := queue.Enqueue(jobs.NewBalanceSweepTask()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the balance -5.0000", func() (bool, string) {
		a, err := store.Account(ctx, f.Family.ID, f.Account.ID)
		if err != nil {
			t.Fatal(err)
		}
		return a.Balance == -50000, "balance " + a.Balance.String()
	})
}

// TestWorkerClaimsAConnection runs the claim through the real server on
// Redis against the fake Bridge.
func TestWorkerClaimsAConnection(t *testing.T) {
	store, queue, _, fake := simplefinWorker(t)
	c := connectThrough(t, store, queue, fake, "bridge", "worker")
	waitFor(t, "the claim", func() (bool, string) {
		got, err := store.Connection(context.Background(), c.FamilyID, c.ID)
		if err != nil {
			return false, err.Error()
		}
		return got.Status == models.ConnActive, got.Status
	})
	if n := fake.Posts("worker"); n != 1 {
		t.Errorf("%d claim POSTs", n)
	}
}
