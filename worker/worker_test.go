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
// and fails the test if it returns an error.
func runWorker(t *testing.T, o worker.Options) (stop func()) {
	t.Helper()
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

// TestWorkerProcessesQueuedWork runs the real server on its own Redis
// database and waits, with a deadline, for a queued recalculation to land.
func TestWorkerProcessesQueuedWork(t *testing.T) {
	store := modelstest.NewStore(t)
	opt, rdb := modelstest.RedisClient(t, redisDB)
	queue := asynq.NewClientFromRedisClient(rdb)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
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
	deadline := time.Now().Add(20 * time.Second)
	for {
		a, err := store.Account(ctx, f.Family.ID, f.Account.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a.Balance == -50000 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("balance still %v after 20s, want -5.0000", a.Balance)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSchedulerRegistersPeriodicWork: with only its cron set, the balance
// sweep is the one periodic task, on that cron, and of a type the worker
// handles; a bad cron spec is refused.
func TestSchedulerRegistersPeriodicWork(t *testing.T) {
	opt := modelstest.Redis(t, redisDB)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	o := worker.Options{Redis: opt, Logger: log, BalanceSweepCron: "5 0 * * *"}
	checkPeriodic(t, o, map[string]string{jobs.TypeBalanceSweep: "5 0 * * *"})
	if _, err := worker.NewScheduler(o); err != nil {
		t.Error(err)
	}
	o.BalanceSweepCron = "not a cron"
	if _, err := worker.NewScheduler(o); err == nil {
		t.Error("a bad cron spec was accepted")
	}
}

// TestOneSchedulerLeads starts two schedulers on one Redis: one holds the
// lease, and the other takes it over once the first stops.
func TestOneSchedulerLeads(t *testing.T) {
	opt, rdb := modelstest.RedisClient(t, redisDB)
	rdb.Del(context.Background(), "coffer:scheduler:leader")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	o := worker.Options{Redis: opt, Logger: log, BalanceSweepCron: "@every 1h", LeaseTTL: 600 * time.Millisecond}

	holder := func() string { return rdb.Get(context.Background(), "coffer:scheduler:leader").Val() }
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s (holder %q)", what, holder())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	ctx1, stop1 := context.WithCancel(context.Background())
	done1 := make(chan error, 1)
	go func() { done1 <- worker.RunScheduler(ctx1, o) }()
	waitFor("a leader", func() bool { return holder() != "" })
	first := holder()

	ctx2, stop2 := context.WithCancel(context.Background())
	defer stop2()
	done2 := make(chan error, 1)
	go func() { done2 <- worker.RunScheduler(ctx2, o) }()
	// The second one must not take the lease while the first holds it.
	for i := 0; i < 10; i++ {
		if h := holder(); h != first {
			t.Fatalf("lease moved to %q while %q held it", h, first)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop1()
	if err := <-done1; err != nil {
		t.Fatal(err)
	}
	waitFor("the standby to take over", func() bool { h := holder(); return h != "" && h != first })
	stop2()
	if err := <-done2; err != nil {
		t.Fatal(err)
	}
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
