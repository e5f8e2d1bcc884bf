package simplefin

import (
	"context"
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/civil"
)

// Periodic SimpleFIN work, registered on the one scheduler.
const (
	// TypeSchedule creates the day's sync of every connection.
	TypeSchedule = "simplefin:schedule"
	// TypeSweep re-queues lost work and erases stale secrets.
	TypeSweep = "simplefin:sweep"
)

// NewScheduleTask builds the daily fan-out; Unique keeps two
// schedulers on one tick to one run, and the database keeps it to one
// sync per connection and day whatever happens.
func NewScheduleTask() *asynq.Task {
	return asynq.NewTask(TypeSchedule, nil, asynq.Queue(jobs.QueueLow), asynq.MaxRetry(1),
		asynq.Timeout(5*time.Minute), asynq.Unique(time.Hour))
}

// NewSweepTask builds the sweep that runs every 10 minutes.
func NewSweepTask() *asynq.Task {
	return asynq.NewTask(TypeSweep, nil, asynq.Queue(jobs.QueueLow), asynq.MaxRetry(0),
		asynq.Timeout(2*time.Minute), asynq.Unique(9*time.Minute))
}

// jitter is a connection's stable delay after the cron tick: the same
// every day, spread over the window so the Bridge never sees a burst.
func jitter(connectionID uuid.UUID, window time.Duration) time.Duration {
	if window <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write(connectionID[:])
	return time.Duration(h.Sum64() % uint64(window))
}

// Schedule handles TypeSchedule: one scheduled sync per active,
// payment_required (a daily probe) or expired rate_limited connection,
// each queued after its jitter.
func (h *Handlers) Schedule(ctx context.Context, t *asynq.Task) error {
	o := h.Options.withDefaults()
	now := h.now()
	loc := o.Location
	if loc == nil {
		loc = time.UTC
	}
	today := civil.DateOf(time.Date(now.In(loc).Year(), now.In(loc).Month(), now.In(loc).Day(), 12, 0, 0, 0, time.UTC))
	after := uuid.Nil
	for {
		refs, err := h.Store.SchedulableConnections(ctx, now, after, 500)
		if err != nil {
			return err
		}
		for _, ref := range refs {
			delay := jitter(ref.ID, o.Jitter)
			sy, created, err := h.Store.CreateSync(ctx, &models.Sync{FamilyID: ref.FamilyID, ConnectionID: ref.ID,
				Trigger: models.TriggerSchedule, ScheduledFor: &today, NotBefore: now.Add(delay)})
			if err != nil {
				return err
			}
			if created {
				if err := EnqueueSync(ctx, h.Queue, sy, delay); err != nil {
					h.logger(ctx, t).Warn("scheduled sync not queued", "sync_id", sy.ID, "error", err)
				}
			}
		}
		if len(refs) < 500 {
			return nil
		}
		after = refs[len(refs)-1].ID
	}
}

// retryWait is the wait before retry n+1 of a SimpleFIN task: 2, 8,
// 32 min (×RetryBase/2 min) ±20 %, or longer when a 5xx said Retry-After.
// A deferral never gets here: jobs.Table.RetryDelay runs it at its time.
func (h *Handlers) retryWait(n int, err error, t *asynq.Task) time.Duration {
	d := time.Duration(float64(h.retryDelay(n)) * (0.8 + 0.4*rand.Float64()))
	var ra *retryAfterError
	if errors.As(err, &ra) && ra.after > d {
		return ra.after // the Bridge asked for a longer wait
	}
	return d
}

// retryDelay is the middle of the wait before retry n+1 of a SimpleFIN
// task; retryWait spreads it by ±20 %.
func (h *Handlers) retryDelay(n int) time.Duration {
	base := h.Options.RetryBase
	if base <= 0 {
		base = 2 * time.Minute
	}
	d := base
	for i := 0; i < n && i < 6; i++ {
		d *= 4
	}
	return d
}
