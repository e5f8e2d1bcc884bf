package simplefin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/models"
)

// Sweep handles TypeSweep: it re-queues due syncs and claims that have no
// task that will run (a web request that committed but could not enqueue,
// a lost worker, a task archived after its last retry), fails fetches
// whose worker is gone, ends syncs that can no longer run, erases
// retryable setup tokens kept over a day, and drops orphaned payloads.
func (h *Handlers) Sweep(ctx context.Context, t *asynq.Task) error {
	now := h.now()
	log := h.logger(ctx, t)
	insp := asynq.NewInspectorFromRedisClient(h.Redis)
	if _, err := h.Store.EraseOldSetupTokens(ctx, now.Add(-24*time.Hour)); err != nil {
		return err
	}
	if _, err := h.Store.ExpireSyncs(ctx, now); err != nil {
		return err
	}
	lost, err := h.Store.LostSyncs(ctx, now, 1000)
	if err != nil {
		return err
	}
	for i := range lost {
		sy := &lost[i]
		live, err := taskLive(insp, jobs.QueueDefault, syncTaskID(sy.ID))
		if err != nil {
			return err
		}
		if live {
			continue // re-queued by an earlier sweep; handled with the stale ones below
		}
		if err := h.Store.FailSync(ctx, sy, "worker lost"); err != nil {
			return err
		}
	}
	stale, err := h.Store.StaleSyncs(ctx, now, 1000)
	if err != nil {
		return err
	}
	for i := range stale {
		sy := &stale[i]
		task, queue, id := syncTaskOf(sy)
		if task == nil {
			continue
		}
		due := sy.NotBefore
		if sy.Status == models.SyncRunning && sy.LeaseUntil != nil {
			due = *sy.LeaseUntil
		}
		// A dead task is replaced for a day; after that the work is taken
		// to kill its worker every time, and it is given up.
		replace := sy.CreatedAt.After(now.Add(-24 * time.Hour))
		err := h.ensureQueued(ctx, insp, task, queue, id, due, replace)
		if errors.Is(err, errTaskDead) {
			err = h.Store.FailSync(ctx, sy, "gave up: its runs kept failing for a day")
		}
		if err != nil {
			log.Warn("sync not re-queued", "sync_id", sy.ID, "error", err)
		}
	}
	claiming, err := h.Store.ClaimingConnections(ctx, 1000)
	if err != nil {
		return err
	}
	for _, c := range claiming {
		task, err := NewClaimTask(c.FamilyID, c.ID, c.ClaimSeq)
		if err == nil {
			// A claim has no due time: one waiting for its retry is left
			// to it, since the claim job decides what a late run means.
			err = h.ensureQueued(ctx, insp, task, jobs.QueueCritical, claimTaskID(c.ID, c.ClaimSeq), time.Time{}, true)
		}
		if err != nil {
			log.Warn("claim not re-queued", "connection_id", c.ID, "error", err)
		}
	}
	return h.Store.DeleteOldSyncPayloads(ctx, now.Add(-24*time.Hour))
}

// syncTaskOf builds the task that runs a sync: the fetch of a parent or
// the import of an account step.
func syncTaskOf(sy *models.Sync) (*asynq.Task, string, string) {
	if sy.Kind == models.SyncKindAccount {
		task, err := NewImportTask(sy.FamilyID, sy.ID)
		if err != nil {
			return nil, "", ""
		}
		return task, jobs.QueueDefault, importTaskID(sy.ID)
	}
	task, err := NewSyncTask(sy.FamilyID, sy.ID)
	if err != nil {
		return nil, "", ""
	}
	return task, jobs.QueueDefault, syncTaskID(sy.ID)
}

// ensureQueued makes sure a task will run for work the database says is
// due (at due; zero when the row has no due time). Task ids are fixed per
// sync and claim, so a plain enqueue meets any older task of the same id,
// and a conflict does not mean that task will run:
//   - archived (its retries are used up) or completed (kept for
//     inspection): it never runs again, so it is replaced by a fresh one;
//   - scheduled or waiting for a retry well past the row's due time (the
//     row was hurried, or a lost worker's task was sent to a long retry):
//     it is run now;
//   - pending, active or aggregating: it is left alone.
//
// A dead task is only replaced when replace is set; else errTaskDead.
func (h *Handlers) ensureQueued(ctx context.Context, insp *asynq.Inspector, task *asynq.Task, queue, id string, due time.Time, replace bool) error {
	enqueue := func() error {
		_, err := h.Queue.EnqueueContext(ctx, task, asynq.ProcessAt(due))
		return err
	}
	err := enqueue()
	if !errors.Is(err, asynq.ErrTaskIDConflict) {
		return err
	}
	info, err := insp.GetTaskInfo(queue, id)
	if errors.Is(err, asynq.ErrTaskNotFound) {
		// It finished between the two calls; a second conflict means
		// someone else queued it meanwhile.
		if err := enqueue(); err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
			return err
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("simplefin: inspect task %s: %w", id, err)
	}
	switch info.State {
	case asynq.TaskStateArchived, asynq.TaskStateCompleted:
		if !replace {
			return errTaskDead
		}
		if err := insp.DeleteTask(queue, id); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
			return fmt.Errorf("simplefin: delete dead task %s: %w", id, err)
		}
		if err := enqueue(); err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
			return err
		}
	case asynq.TaskStateScheduled, asynq.TaskStateRetry:
		if due.IsZero() || due.After(h.now()) {
			return nil
		}
		// A retry may rightly wait up to its own backoff after the failed
		// run that made the row due; only a wait beyond that is stuck.
		slack := time.Minute
		if info.State == asynq.TaskStateRetry && info.Retried > 0 {
			slack += h.retryDelay(info.Retried-1) * 6 / 5
		}
		if info.NextProcessAt.After(due.Add(slack)) {
			if err := insp.RunTask(queue, id); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
				return fmt.Errorf("simplefin: run task %s now: %w", id, err)
			}
		}
	}
	return nil
}

// errTaskDead: the work's task will never run again and was not replaced.
var errTaskDead = errors.New("simplefin: the task is archived")

// taskLive reports whether a task of that id exists and may still run.
func taskLive(insp *asynq.Inspector, queue, id string) (bool, error) {
	info, err := insp.GetTaskInfo(queue, id)
	switch {
	case errors.Is(err, asynq.ErrTaskNotFound), errors.Is(err, asynq.ErrQueueNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("simplefin: inspect task %s: %w", id, err)
	}
	return info.State != asynq.TaskStateArchived && info.State != asynq.TaskStateCompleted, nil
}
