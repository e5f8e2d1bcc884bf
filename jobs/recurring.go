package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// TypeRecurringDetect finds a family's recurring transactions in its own
// transactions and stores them as suggestions (models.DetectRecurring).
const TypeRecurringDetect = "recurring:detect"

// TypeRecurringSweep queues a detection and a missed-occurrence check for
// every family: the nightly run.
const TypeRecurringSweep = "recurring:sweep"

// TypeRecurringMissed records as missed the family's occurrences whose
// date and grace passed unpaid (models.MarkMissedRecurring).
const TypeRecurringMissed = "recurring:missed"

// RecurringSweepCron is when the nightly detection runs (UTC), after the
// balance sweep and the daily SimpleFIN syncs.
const RecurringSweepCron = "40 4 * * *"

// RecurringDetectPayload names the family to look at.
type RecurringDetectPayload struct {
	FamilyID uuid.UUID `json:"family_id"`
}

// NewRecurringDetectTask builds a family's detection. Its task id makes
// it unique per family while it waits or runs: a burst of imports queues
// one detection.
func NewRecurringDetectTask(familyID uuid.UUID) (*asynq.Task, error) {
	return NewTask(TypeRecurringDetect, RecurringDetectPayload{FamilyID: familyID},
		asynq.TaskID("recurring:detect:"+familyID.String()), asynq.Queue(QueueLow), asynq.MaxRetry(3),
		asynq.Timeout(10*time.Minute))
}

// QueueRecurringDetect queues the family's detection; one already waiting
// or running is enough.
func QueueRecurringDetect(ctx context.Context, queue *asynq.Client, familyID uuid.UUID) error {
	if queue == nil { // a process without a queue: the nightly sweep detects
		return nil
	}
	task, err := NewRecurringDetectTask(familyID)
	if err != nil {
		return err
	}
	if err := EnqueueOnce(ctx, queue, task); err != nil {
		return fmt.Errorf("jobs: queue recurring detect: %w", err)
	}
	return nil
}

// RecurringDetect handles TypeRecurringDetect. It is idempotent: the store
// upserts on the series' match key and cadence, so a second run of the same
// data writes nothing.
func (h *Handlers) RecurringDetect(ctx context.Context, t *asynq.Task) error {
	var p RecurringDetectPayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	res, err := h.Store.DetectRecurring(ctx, p.FamilyID)
	if err != nil {
		return fmt.Errorf("jobs: recurring detect: %w", err)
	}
	h.logger(ctx, t).Info("recurring detected", "family_id", p.FamilyID, "found", res.Found,
		"created", res.Created, "updated", res.Updated)
	return nil
}

// NewRecurringMissedTask builds a family's check for missed occurrences;
// its task id keeps one waiting per family.
func NewRecurringMissedTask(familyID uuid.UUID) (*asynq.Task, error) {
	return NewTask(TypeRecurringMissed, RecurringDetectPayload{FamilyID: familyID},
		asynq.TaskID("recurring:missed:"+familyID.String()), asynq.Queue(QueueLow), asynq.MaxRetry(3),
		asynq.Timeout(5*time.Minute))
}

// RecurringMissed handles TypeRecurringMissed. It is idempotent: a missed
// occurrence moves its item on, and a due date is recorded once.
func (h *Handlers) RecurringMissed(ctx context.Context, t *asynq.Task) error {
	var p RecurringDetectPayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	n, err := h.Store.MarkMissedRecurring(ctx, p.FamilyID)
	if err != nil {
		return fmt.Errorf("jobs: recurring missed: %w", err)
	}
	if n > 0 {
		h.logger(ctx, t).Info("recurring occurrences missed", "family_id", p.FamilyID, "missed", n)
	}
	return nil
}

// NewRecurringSweepTask builds the nightly fan-out.
func NewRecurringSweepTask() *asynq.Task {
	return asynq.NewTask(TypeRecurringSweep, nil, asynq.Queue(QueueLow), asynq.MaxRetry(3), asynq.Timeout(10*time.Minute))
}

// RecurringSweep handles TypeRecurringSweep by queueing one detection and
// one missed-occurrence check per family.
func (h *Handlers) RecurringSweep(ctx context.Context, t *asynq.Task) error {
	families, err := h.Store.Families(ctx)
	if err != nil {
		return err
	}
	for _, f := range families {
		if err := QueueRecurringDetect(ctx, h.Queue, f.ID); err != nil {
			return err
		}
		task, err := NewRecurringMissedTask(f.ID)
		if err != nil {
			return err
		}
		if err := EnqueueOnce(ctx, h.Queue, task); err != nil {
			return fmt.Errorf("jobs: queue recurring missed: %w", err)
		}
	}
	h.logger(ctx, t).Info("recurring sweep queued", "families", len(families))
	return nil
}
