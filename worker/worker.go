// Package worker is wiring only: the asynq server with its queues, mux and
// middleware, and the one scheduler of periodic work. The work itself is
// in jobs.
package worker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/jobs"
	"coffer/jobs/assistant"
	"coffer/jobs/simplefin"
)

// Options is what the worker and the scheduler need from main.
type Options struct {
	Redis       asynq.RedisConnOpt
	Handlers    *jobs.Handlers      // the generic task types
	SimpleFIN   *simplefin.Handlers // the SimpleFIN task types
	Assistant   *assistant.Handlers // the chat reply
	Logger      *slog.Logger
	Concurrency int `env:"WORKER_CONCURRENCY" default:"10" min:"1" max:"1000"`
	// BalanceSweepCron is when every balance is recalculated (UTC).
	BalanceSweepCron string `env:"BALANCE_SWEEP_CRON" default:"5 0 * * *"`
	// AuditArchiveCron is when audit retention runs (UTC); empty: never.
	AuditArchiveCron string `env:"AUDIT_ARCHIVE_CRON" default:"30 3 * * *"`
	// OAuthCleanupCron is when expired OAuth codes and tokens are deleted
	// (UTC); empty: never.
	OAuthCleanupCron string `env:"OAUTH_CLEANUP_CRON" default:"17 * * * *"`
	// SimplefinSyncCron is when every SimpleFIN connection syncs, in
	// SimplefinSyncTZ (empty: UTC); empty: never.
	SimplefinSyncCron string `env:"SIMPLEFIN_SYNC_CRON" default:"22 2 * * *"`
	SimplefinSyncTZ   string `env:"SIMPLEFIN_SYNC_TZ" default:"UTC"`
	// ExchangeRatesCron is when the day's exchange rates are fetched (UTC;
	// the ECB publishes around 16:00 CET); empty: never.
	ExchangeRatesCron string `env:"EXCHANGE_RATES_CRON" default:"20 16 * * *"`
	// ShutdownTimeout is how long running tasks get to finish when the
	// worker stops; the rest go back to the queue. Zero means 25 seconds.
	ShutdownTimeout time.Duration
	// LeaseTTL is how long the scheduler's lease lasts unrenewed; a standby
	// takes over within it. Zero means 30 seconds.
	LeaseTTL time.Duration
}

// Table is every task type the worker runs: the generic ones, the
// SimpleFIN ones and the assistant's, each listed once.
func (o Options) Table() (jobs.Table, error) {
	return jobs.Merge(o.Handlers.Table(), o.SimpleFIN.Table(), o.Assistant.Table())
}

// Mux routes every task type of the table to its handler, with logging
// around each.
func Mux(table jobs.Table, log *slog.Logger) *asynq.ServeMux {
	mux := asynq.NewServeMux()
	mux.Use(logging(log))
	for typ, j := range table {
		mux.HandleFunc(typ, j.Handler)
	}
	return mux
}

func logging(log *slog.Logger) asynq.MiddlewareFunc {
	return func(next asynq.Handler) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
			id, _ := asynq.GetTaskID(ctx)
			retry, _ := asynq.GetRetryCount(ctx)
			start := time.Now()
			err := next.ProcessTask(ctx, t)
			attrs := []any{slog.String("task_type", t.Type()), slog.String("task_id", id),
				slog.Int("retry", retry), slog.Duration("took", time.Since(start))}
			switch {
			case err != nil && !jobs.IsFailure(err):
				log.Info("task deferred", append(attrs, slog.Any("error", err))...)
			case err != nil:
				log.Error("task failed", append(attrs, slog.Any("error", err))...)
			default:
				log.Debug("task done", attrs...)
			}
			return err
		})
	}
}

// NewServer builds the asynq server for the task types of table. Running
// tasks get ShutdownTimeout to finish when it stops; the rest go back to
// Redis for another worker.
func NewServer(o Options, table jobs.Table) *asynq.Server {
	shutdown := o.ShutdownTimeout
	if shutdown <= 0 {
		shutdown = 25 * time.Second
	}
	return asynq.NewServer(o.Redis, asynq.Config{
		Concurrency:     o.Concurrency,
		Queues:          jobs.Queues(),
		ShutdownTimeout: shutdown,
		// Balance recalculations wait a second after a write; check for due
		// tasks often enough that balances follow within seconds.
		DelayedTaskCheckInterval: time.Second,
		Logger:                   asynqLogger{o.Logger},
		LogLevel:                 asynq.WarnLevel,
		// A deferred sync (budget, rate limit) runs again at its own time
		// and uses up no retry; each task type keeps its own retry delays.
		RetryDelayFunc: table.RetryDelay,
		IsFailure:      jobs.IsFailure,
	})
}

// Run processes tasks until ctx ends, then shuts down gracefully.
func Run(ctx context.Context, o Options) error {
	table, err := o.Table()
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	srv := NewServer(o, table)
	if err := srv.Start(Mux(table, o.Logger)); err != nil {
		return fmt.Errorf("worker: start: %w", err)
	}
	o.Logger.Info("worker started", "concurrency", o.Concurrency)
	// Plaintext secrets left by older versions, or values of a rotated-out
	// key, are sealed anew at every start; the task id keeps it to one.
	if o.Handlers.Queue != nil {
		if err := jobs.EnqueueOnce(ctx, o.Handlers.Queue, jobs.NewSecretsBackfillTask()); err != nil {
			o.Logger.Warn("worker: secrets backfill not queued", "err", err)
		}
	}
	<-ctx.Done()
	srv.Shutdown()
	o.Logger.Info("worker stopped")
	return nil
}

// Periodic is one task the scheduler enqueues on a cron spec.
type Periodic struct {
	Spec string
	Task *asynq.Task
}

// Periodic lists the periodic tasks of o, as NewScheduler registers them:
// the balance sweeps (nightly, and of waiting moves every 15 s), the compaction of kept sums (every 5 minutes), the webhook sweep, the nightly recurring detection and the hourly notifications sweep always, the daily SimpleFIN fan-out (in its zone) and
// the SimpleFIN sweep when a sync cron is set, audit retention, the
// OAuth cleanup and the exchange rates when their crons are set.
func (o Options) Periodic() ([]Periodic, error) {
	list := []Periodic{{Spec: o.BalanceSweepCron, Task: jobs.NewBalanceSweepTask()},
		{Spec: "@every 15s", Task: jobs.NewBalanceMovesSweepTask()},
		{Spec: "@every 5m", Task: jobs.NewSumsCompactSweepTask()},
		{Spec: "@every 15s", Task: jobs.NewWebhookSweepTask()},
		{Spec: jobs.RecurringSweepCron, Task: jobs.NewRecurringSweepTask()},
		{Spec: jobs.NotifySweepCron, Task: jobs.NewNotifySweepTask()}}
	if o.SimplefinSyncCron != "" {
		loc, err := time.LoadLocation(o.SimplefinSyncTZ)
		if err != nil {
			return nil, fmt.Errorf("worker: SimpleFIN sync time zone: %w", err)
		}
		// The fan-out reads the day from the clock in the sync's zone.
		list = append(list, Periodic{Spec: "CRON_TZ=" + loc.String() + " " + o.SimplefinSyncCron, Task: simplefin.NewScheduleTask()},
			Periodic{Spec: "@every 10m", Task: simplefin.NewSweepTask()})
	}
	if o.AuditArchiveCron != "" {
		list = append(list, Periodic{Spec: o.AuditArchiveCron, Task: jobs.NewAuditArchiveTask()})
	}
	if o.OAuthCleanupCron != "" {
		list = append(list, Periodic{Spec: o.OAuthCleanupCron, Task: jobs.NewOAuthCleanupTask()})
	}
	if o.ExchangeRatesCron != "" {
		task, err := jobs.NewExchangeRatesFetchTask(nil)
		if err != nil {
			return nil, err
		}
		list = append(list, Periodic{Spec: o.ExchangeRatesCron, Task: task})
	}
	return list, nil
}

// NewScheduler registers every periodic task. Exactly one scheduler runs
// (`coffer scheduler`), so scaling workers never doubles a periodic task.
func NewScheduler(o Options) (*asynq.Scheduler, error) {
	list, err := o.Periodic()
	if err != nil {
		return nil, err
	}
	s := asynq.NewScheduler(o.Redis, &asynq.SchedulerOpts{
		Location: time.UTC,
		Logger:   asynqLogger{o.Logger},
		LogLevel: asynq.WarnLevel,
	})
	for _, p := range list {
		if _, err := s.Register(p.Spec, p.Task); err != nil {
			return nil, fmt.Errorf("worker: schedule %s: %w", p.Task.Type(), err)
		}
	}
	return s, nil
}

// leaderKey is held in Redis by the one scheduler that enqueues.
const leaderKey = "coffer:scheduler:leader"

// RunScheduler enqueues periodic tasks until ctx ends. A second scheduler
// started by mistake (two clock processes, a deploy overlapping the old
// one) waits: only the holder of a lease in Redis schedules, so periodic
// work is never doubled, and a standby takes over within the lease TTL when the
// holder dies.
func RunScheduler(ctx context.Context, o Options) error {
	ttl := o.LeaseTTL
	if ttl <= 0 {
		ttl = 30 * time.Second
	}
	rdb, ok := o.Redis.MakeRedisClient().(redis.UniversalClient)
	if !ok {
		return fmt.Errorf("worker: scheduler: unsupported Redis options %T", o.Redis)
	}
	defer rdb.Close()
	me := fmt.Sprintf("%s:%d:%d", hostname(), os.Getpid(), time.Now().UnixNano())
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	var s *asynq.Scheduler
	stop := func() {
		if s != nil {
			s.Shutdown()
			s = nil
			o.Logger.Info("scheduler stopped")
		}
	}
	defer stop()
	for {
		leader, err := holdLease(ctx, rdb, me, ttl)
		switch {
		case err != nil:
			o.Logger.Warn("scheduler lease", "error", err)
		case leader && s == nil:
			if s, err = NewScheduler(o); err != nil {
				return err
			}
			if err := s.Start(); err != nil {
				return fmt.Errorf("worker: start scheduler: %w", err)
			}
			o.Logger.Info("scheduler started", "balance_sweep", o.BalanceSweepCron)
		case !leader && s != nil:
			stop() // another process holds the lease now
		}
		select {
		case <-ctx.Done():
			if s != nil {
				rdb.Eval(context.WithoutCancel(ctx), releaseLease, []string{leaderKey}, me)
			}
			return nil
		case <-tick.C:
		}
	}
}

// renewLease extends the lease if this process holds it, or takes it if
// nobody does; it returns 1 when this process holds it afterwards.
const renewLease = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] or not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`

const releaseLease = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`

func holdLease(ctx context.Context, rdb redis.UniversalClient, me string, ttl time.Duration) (bool, error) {
	n, err := rdb.Eval(ctx, renewLease, []string{leaderKey}, me, ttl.Milliseconds()).Int()
	return n == 1, err
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
}

// asynqLogger sends asynq's own messages to slog.
type asynqLogger struct{ log *slog.Logger }

func (l asynqLogger) Debug(args ...any) { l.log.Debug(fmt.Sprint(args...)) }
func (l asynqLogger) Info(args ...any)  { l.log.Info(fmt.Sprint(args...)) }
func (l asynqLogger) Warn(args ...any)  { l.log.Warn(fmt.Sprint(args...)) }
func (l asynqLogger) Error(args ...any) { l.log.Error(fmt.Sprint(args...)) }
func (l asynqLogger) Fatal(args ...any) { l.log.Error(fmt.Sprint(args...)) }
