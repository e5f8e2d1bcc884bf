package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// TypeRequeue rebuilds the queue from the database: the database, not the
// queue, is the source of truth. `coffer dev` runs it at start, because its
// in-process Redis loses queued tasks on restart.
const TypeRequeue = "queue:requeue"

// NewRequeueTask builds the rebuild of the queue.
func NewRequeueTask() *asynq.Task {
	return asynq.NewTask(TypeRequeue, nil, asynq.Queue(QueueCritical), asynq.MaxRetry(3), asynq.Timeout(10*time.Minute),
		asynq.TaskID("queue:requeue"))
}

// Requeue handles TypeRequeue: every balance is recalculated, every chat
// still waiting for the assistant is asked again, families left empty
// are purged, file imports that were importing or reverting go on,
// pending rule runs carry on, unfinished family exports are written and
// unsent emails are sent.
// Task ids keep work that is already queued from doubling.
func (h *Handlers) Requeue(ctx context.Context, t *asynq.Task) error {
	if _, err := h.Queue.EnqueueContext(ctx, NewBalanceSweepTask()); err != nil {
		return fmt.Errorf("jobs: requeue balances: %w", err)
	}
	h.hook(ctx, HookRequeued)
	chats, err := h.Store.ChatsAwaitingReply(ctx)
	if err != nil {
		return err
	}
	for _, c := range chats {
		task, err := NewChatReplyTask(c.FamilyID, c.ID, c.MessageID)
		if err != nil {
			return err
		}
		if err := EnqueueOnce(ctx, h.Queue, task); err != nil {
			return fmt.Errorf("jobs: requeue chat reply: %w", err)
		}
		h.hook(ctx, HookRequeued)
	}
	families, err := h.Store.EmptyFamilies(ctx)
	if err != nil {
		return err
	}
	for _, id := range families {
		task, err := NewFamilyPurgeTask(id)
		if err != nil {
			return err
		}
		if err := EnqueueOnce(ctx, h.Queue, task); err != nil {
			return fmt.Errorf("jobs: requeue family purge: %w", err)
		}
		h.hook(ctx, HookRequeued)
	}
	runs, err := h.Store.PendingRuleRuns(ctx)
	if err != nil {
		return err
	}
	for _, r := range runs {
		task, err := NewRuleApplyTask(r.FamilyID, r.ID)
		if err != nil {
			return err
		}
		if err := EnqueueOnce(ctx, h.Queue, task); err != nil {
			return fmt.Errorf("jobs: requeue rule run: %w", err)
		}
		h.hook(ctx, HookRequeued)
	}
	imports, err := h.Store.ImportsInFlight(ctx)
	if err != nil {
		return err
	}
	for i := range imports {
		task, err := ImportTask(&imports[i])
		if err != nil {
			return err
		}
		if err := EnqueueImport(ctx, h.Queue, task); err != nil {
			return err
		}
		h.hook(ctx, HookRequeued)
	}
	exports, err := h.Store.FamilyExportsInFlight(ctx)
	if err != nil {
		return err
	}
	for _, e := range exports {
		if err := EnqueueFamilyExport(ctx, h.Queue, e.FamilyID, e.ID); err != nil {
			return err
		}
		h.hook(ctx, HookRequeued)
	}
	// Emails left in the outbox: the sweep queues their sends.
	if _, err := h.Queue.EnqueueContext(ctx, NewNotifySweepTask()); err != nil && !errors.Is(err, asynq.ErrDuplicateTask) {
		return fmt.Errorf("jobs: requeue notifications: %w", err)
	}
	h.logger(ctx, t).Info("queue rebuilt from the database", "chats", len(chats), "empty_families", len(families),
		"imports", len(imports), "rule_runs", len(runs), "family_exports", len(exports))
	return nil
}
