// Package worker is wiring only: the asynq server with its queues, mux and
// middleware, and the one scheduler of periodic work. The work itself is
// in jobs.
package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs"
)

// Options is what the worker and the scheduler need from main.
type Options struct {
	Redis       asynq.RedisConnOpt
	Handlers    *jobs.Handlers
	Logger      *slog.Logger
	Concurrency int
	// BalanceSweepCron is when every balance is recalculated (UTC).
	BalanceSweepCron string
}

// Mux routes every task type to its handler, with logging around each.
func Mux(h *jobs.Handlers, log *slog.Logger) *asynq.ServeMux {
	mux := asynq.NewServeMux()
	mux.Use(logging(log))
	mux.HandleFunc(jobs.TypeAccountBalance, h.AccountBalance)
	mux.HandleFunc(jobs.TypeBalanceSweep, h.BalanceSweep)
	mux.HandleFunc(jobs.TypeChatReply, h.ChatReply)
	mux.HandleFunc(jobs.TypeRequeue, h.Requeue)
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
			if err != nil {
				log.Error("task failed", append(attrs, slog.Any("error", err))...)
			} else {
				log.Debug("task done", attrs...)
			}
			return err
		})
	}
}

// NewServer builds the asynq server. Running tasks get ShutdownTimeout to
// finish when it stops; the rest go back to Redis for another worker.
func NewServer(o Options) *asynq.Server {
	return asynq.NewServer(o.Redis, asynq.Config{
		Concurrency:     o.Concurrency,
		Queues:          jobs.Queues(),
		ShutdownTimeout: 25 * time.Second,
		// Balance recalculations wait a second after a write; check for due
		// tasks often enough that balances follow within seconds.
		DelayedTaskCheckInterval: time.Second,
		Logger:                   asynqLogger{o.Logger},
		LogLevel:                 asynq.WarnLevel,
	})
}

// Run processes tasks until ctx ends, then shuts down gracefully.
func Run(ctx context.Context, o Options) error {
	srv := NewServer(o)
	if err := srv.Start(Mux(o.Handlers, o.Logger)); err != nil {
		return fmt.Errorf("worker: start: %w", err)
	}
	o.Logger.Info("worker started", "concurrency", o.Concurrency)
	<-ctx.Done()
	srv.Shutdown()
	o.Logger.Info("worker stopped")
	return nil
}

// NewScheduler registers every periodic task. Exactly one scheduler runs
// (`coffer scheduler`), so scaling workers never doubles a periodic task.
func NewScheduler(o Options) (*asynq.Scheduler, error) {
	s := asynq.NewScheduler(o.Redis, &asynq.SchedulerOpts{
		Location: time.UTC,
		Logger:   asynqLogger{o.Logger},
		LogLevel: asynq.WarnLevel,
	})
	if _, err := s.Register(o.BalanceSweepCron, jobs.NewBalanceSweepTask()); err != nil {
		return nil, fmt.Errorf("worker: schedule balance sweep: %w", err)
	}
	return s, nil
}

// RunScheduler enqueues periodic tasks until ctx ends.
func RunScheduler(ctx context.Context, o Options) error {
	s, err := NewScheduler(o)
	if err != nil {
		return err
	}
	if err := s.Start(); err != nil {
		return fmt.Errorf("worker: start scheduler: %w", err)
	}
	o.Logger.Info("scheduler started", "balance_sweep", o.BalanceSweepCron)
	<-ctx.Done()
	s.Shutdown()
	return nil
}

// asynqLogger sends asynq's own messages to slog.
type asynqLogger struct{ log *slog.Logger }

func (l asynqLogger) Debug(args ...any) { l.log.Debug(fmt.Sprint(args...)) }
func (l asynqLogger) Info(args ...any)  { l.log.Info(fmt.Sprint(args...)) }
func (l asynqLogger) Warn(args ...any)  { l.log.Warn(fmt.Sprint(args...)) }
func (l asynqLogger) Error(args ...any) { l.log.Error(fmt.Sprint(args...)) }
func (l asynqLogger) Fatal(args ...any) { l.log.Error(fmt.Sprint(args...)) }
