package worker_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/worker"
)

// TestTwoSchedulersOneSyncPerConnection runs two real schedulers, built
// as `coffer scheduler` builds them, on one Redis with the daily sync due
// every second, and a worker that runs the fan-out. Every connection gets
// exactly one scheduled sync and one task a day, queued after a delay
// inside the jitter window that is the same on the next day.
func TestTwoSchedulersOneSyncPerConnection(t *testing.T) {
	r := newCrashRig(t, nil)
	ctx := context.Background()
	insp := asynq.NewInspectorFromRedisClient(r.rdb)
	// The syncs themselves must not run: only their tasks are looked at.
	if err := insp.PauseQueue(jobs.QueueDefault); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = insp.UnpauseQueue(jobs.QueueDefault) })

	const window = 30 * time.Minute
	day1 := time.Now().UTC().Truncate(time.Second)
	var clock atomic.Int64 // the fan-out's clock, read once per run
	var runs atomic.Int64
	clock.Store(day1.UnixNano())
	h := r.handlers()
	h.Options.Jitter = window
	h.Now = func() time.Time { runs.Add(1); return time.Unix(0, clock.Load()).UTC() }

	f := modelstest.NewFamily(t, r.store, "schedulers")
	conns := map[uuid.UUID]bool{}
	for _, name := range []string{"s1", "s2", "s3"} {
		c := &models.Connection{FamilyID: f.Family.ID, Name: name}
		if err := r.store.CreateConnection(ctx, c, r.bridge.Token(name)); err != nil {
			t.Fatal(err)
		}
		claim, _ := simplefin.NewClaimTask(c.FamilyID, c.ID, c.ClaimSeq)
		if err := h.Claim(ctx, asynq.NewTask(claim.Type(), claim.Payload())); err != nil {
			t.Fatal(err)
		}
		// The first sync is over; the connection is due for a daily one.
		first, err := r.store.ActiveSync(ctx, f.Family.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.store.FailSync(ctx, first, "test"); err != nil {
			t.Fatal(err)
		}
		_ = insp.DeleteTask(jobs.QueueDefault, "simplefin:sync:"+first.ID.String())
		conns[c.ID] = true
	}

	r.start(t, h)
	for i := 0; i < 2; i++ {
		s, err := worker.NewScheduler(worker.Options{Redis: r.opt, Logger: r.log, BalanceSweepCron: "@every 1h",
			SimplefinSyncCron: "@every 1s", SimplefinSyncTZ: "UTC"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Shutdown)
	}

	// delays returns each connection's scheduled sync of the day and the
	// delay its row and its task were given, once every connection has one
	// and the fan-out has run a few more times.
	delays := func(day time.Time) map[uuid.UUID]time.Duration {
		t.Helper()
		var got map[uuid.UUID]time.Duration
		start := runs.Load()
		waitFor(t, "a scheduled sync per connection", func() (bool, string) {
			syncs, _, err := r.store.Syncs(ctx, f.Family.ID, models.SyncFilter{}, models.Page{Number: 1, Size: 100})
			if err != nil {
				return false, err.Error()
			}
			got = map[uuid.UUID]time.Duration{}
			for _, sy := range syncs {
				if sy.Trigger != models.TriggerSchedule || sy.ScheduledFor == nil || *sy.ScheduledFor != civil.DateOf(day) {
					continue
				}
				if _, twice := got[sy.ConnectionID]; twice {
					t.Fatalf("two scheduled syncs for connection %s on %v", sy.ConnectionID, day)
				}
				got[sy.ConnectionID] = sy.NotBefore.Sub(day)
				// The fan-out commits the row, then queues its task: a
				// task missing now may be on its way; one that never comes
				// runs out the deadline.
				info, err := insp.GetTaskInfo(jobs.QueueDefault, "simplefin:sync:"+sy.ID.String())
				if err != nil {
					return false, "scheduled sync " + sy.ID.String() + " without a task: " + err.Error()
				}
				if info.State != asynq.TaskStateScheduled && info.State != asynq.TaskStatePending {
					t.Fatalf("task of %s is %v", sy.ID, info.State)
				}
			}
			return len(got) == len(conns) && runs.Load() >= start+3, "" // later runs must add nothing
		})
		return got
	}
	first := delays(day1)
	tasks := func() int {
		n := 0
		for _, list := range []func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){insp.ListScheduledTasks, insp.ListPendingTasks} {
			infos, err := list(jobs.QueueDefault, asynq.PageSize(1000))
			if err != nil {
				t.Fatal(err)
			}
			for _, info := range infos {
				var p simplefin.SyncPayload
				if info.Type == simplefin.TypeSync && json.Unmarshal(info.Payload, &p) == nil && p.FamilyID == f.Family.ID {
					n++
				}
			}
		}
		return n
	}
	if n := tasks(); n != len(conns) {
		t.Fatalf("%d sync tasks for %d connections", n, len(conns))
	}
	for id, d := range first {
		if d < 0 || d >= window {
			t.Fatalf("connection %s waits %v, outside [0, %v)", id, d, window)
		}
	}

	// The next day: yesterday's syncs are over, and each connection waits
	// as long as it did then.
	for id := range conns {
		sy, err := r.store.ActiveSync(ctx, f.Family.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.store.FailSync(ctx, sy, "test"); err != nil {
			t.Fatal(err)
		}
		_ = insp.DeleteTask(jobs.QueueDefault, "simplefin:sync:"+sy.ID.String())
	}
	day2 := day1.Add(24 * time.Hour)
	before := time.Now()
	clock.Store(day2.UnixNano())
	second := delays(day2)
	after := time.Now()
	for id, d := range first {
		if second[id] != d {
			t.Fatalf("connection %s waits %v on day 2, %v on day 1", id, second[id], d)
		}
		sy, _ := r.store.ActiveSync(ctx, f.Family.ID, id)
		info, err := insp.GetTaskInfo(jobs.QueueDefault, "simplefin:sync:"+sy.ID.String())
		if err != nil {
			t.Fatal(err)
		}
		// asynq keeps whole seconds.
		if info.State == asynq.TaskStateScheduled && info.NextProcessAt.Before(before.Add(d).Add(-time.Second)) || info.NextProcessAt.After(after.Add(d).Add(time.Second)) {
			t.Fatalf("task of %s due at %v, want %v after the tick (between %v and %v)", id, info.NextProcessAt, d, before, after)
		}
	}
	if n := tasks(); n != len(conns) {
		t.Fatalf("day 2: %d sync tasks for %d connections", n, len(conns))
	}
}

// TestSchedulerRegistersPeriodicWork: the scheduler registers the
// periodic tasks whose crons are set, each on its spec and of a type the
// worker handles: the balance sweep alone, or beside audit retention, the
// SimpleFIN fan-out in the sync's zone and the SimpleFIN sweep every 10
// minutes. A bad cron spec or an unknown zone is refused.
func TestSchedulerRegistersPeriodicWork(t *testing.T) {
	opt := modelstest.Redis(t, redisDB)
	for _, tc := range []struct {
		name string
		o    worker.Options
		want map[string]string       // task type → cron spec
		bad  func(o *worker.Options) // a change that must be refused
	}{
		{
			name: "balance sweep and webhooks only",
			o:    worker.Options{BalanceSweepCron: "5 0 * * *"},
			want: map[string]string{jobs.TypeBalanceSweep: "5 0 * * *", jobs.TypeWebhookSweep: "@every 15s", jobs.TypeBalanceMovesSweep: "@every 15s", jobs.TypeSumsCompactSweep: "@every 5m",
				jobs.TypeRecurringSweep: "40 4 * * *", jobs.TypeNotifySweep: "7 * * * *"},
			bad: func(o *worker.Options) { o.BalanceSweepCron = "not a cron" },
		},
		{
			name: "with a SimpleFIN sync cron",
			o: worker.Options{BalanceSweepCron: "5 0 * * *", AuditArchiveCron: "30 3 * * *", OAuthCleanupCron: "17 * * * *",
				SimplefinSyncCron: "22 2 * * *", SimplefinSyncTZ: "America/New_York", SimpleFIN: &simplefin.Handlers{},
				ExchangeRatesCron: "20 16 * * *"},
			want: map[string]string{jobs.TypeBalanceSweep: "5 0 * * *", jobs.TypeAuditArchive: "30 3 * * *", jobs.TypeOAuthCleanup: "17 * * * *",
				simplefin.TypeSchedule: "CRON_TZ=America/New_York 22 2 * * *", simplefin.TypeSweep: "@every 10m",
				jobs.TypeExchangeRatesFetch: "20 16 * * *", jobs.TypeWebhookSweep: "@every 15s", jobs.TypeBalanceMovesSweep: "@every 15s", jobs.TypeSumsCompactSweep: "@every 5m", jobs.TypeRecurringSweep: "40 4 * * *",
				jobs.TypeNotifySweep: "7 * * * *"},
			bad: func(o *worker.Options) { o.SimplefinSyncTZ = "Nowhere/Else" },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Redis, o.Logger = opt, discardLog()
			checkPeriodic(t, o, tc.want)
			if _, err := worker.NewScheduler(o); err != nil {
				t.Fatal(err)
			}
			tc.bad(&o)
			if _, err := worker.NewScheduler(o); err == nil {
				t.Fatal("a bad setting was accepted")
			}
		})
	}
}

// TestOneSchedulerLeads starts two schedulers on one Redis: one holds the
// lease, and the other takes it over once the first stops.
func TestOneSchedulerLeads(t *testing.T) {
	opt, rdb := modelstest.RedisClient(t, redisDB)
	rdb.Del(context.Background(), "coffer:scheduler:leader")
	o := worker.Options{Redis: opt, Logger: discardLog(), BalanceSweepCron: "@every 1h", LeaseTTL: 600 * time.Millisecond}

	holder := func() string { return rdb.Get(context.Background(), "coffer:scheduler:leader").Val() }
	ctx1, stop1 := context.WithCancel(context.Background())
	done1 := make(chan error, 1)
	go func() { done1 <- worker.RunScheduler(ctx1, o) }()
	waitFor(t, "a leader", func() (bool, string) { h := holder(); return h != "", "holder " + h })
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
	waitFor(t, "the standby to take over", func() (bool, string) { h := holder(); return h != "" && h != first, "holder " + h })
	stop2()
	if err := <-done2; err != nil {
		t.Fatal(err)
	}
}

// checkPeriodic compares what the scheduler of o registers (task type →
// cron spec) with want, and checks that the worker handles each of them.
func checkPeriodic(t *testing.T, o worker.Options, want map[string]string) {
	t.Helper()
	list, err := o.Periodic()
	if err != nil {
		t.Fatal(err)
	}
	table, err := o.Table()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range list {
		got[p.Task.Type()] = p.Spec
		if _, ok := table[p.Task.Type()]; !ok {
			t.Errorf("periodic task %s has no handler", p.Task.Type())
		}
	}
	if len(got) != len(list) || len(got) != len(want) {
		t.Errorf("periodic tasks %v, want %v", got, want)
	}
	for typ, spec := range want {
		if got[typ] != spec {
			t.Errorf("%s scheduled at %q, want %q", typ, got[typ], spec)
		}
	}
}
