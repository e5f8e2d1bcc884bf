package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/models"
)

// TypeRestoreRun writes a stored restore (the reference app's export of a
// family) into its family, all or nothing.
const TypeRestoreRun = "restore:run"

// RestorePayload names the restore.
type RestorePayload struct {
	FamilyID  uuid.UUID `json:"family_id"`
	RestoreID uuid.UUID `json:"restore_id"`
}

// NewRestoreRunTask builds the job of a restore; its task id names the
// restore, so it is queued once.
func NewRestoreRunTask(familyID, restoreID uuid.UUID) (*asynq.Task, error) {
	return NewTask(TypeRestoreRun, RestorePayload{FamilyID: familyID, RestoreID: restoreID},
		asynq.TaskID(fmt.Sprintf("%s:%s", TypeRestoreRun, restoreID)), asynq.Queue(QueueDefault),
		asynq.MaxRetry(importMaxRetry), asynq.Timeout(30*time.Minute))
}

// RestoreRun handles TypeRestoreRun: one database transaction writes the
// file and marks the restore complete (models.RunRestore), so a task
// delivered twice restores once. After the last retry the restore is
// marked failed; nothing of it was written.
func (h *Handlers) RestoreRun(ctx context.Context, t *asynq.Task) error {
	var p RestorePayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	r, err := h.Store.RunRestore(ctx, p.FamilyID, p.RestoreID)
	if errors.Is(err, models.ErrNotFound) {
		return nil // deleted with its family
	}
	if err != nil {
		retried, _ := asynq.GetRetryCount(ctx)
		most, _ := asynq.GetMaxRetry(ctx)
		if retried >= most {
			h.logger(ctx, t).Error("restore job gave up", "restore_id", p.RestoreID, "error", err)
			if ferr := h.Store.FailRestore(ctx, p.FamilyID, p.RestoreID, "The restore stopped on an internal error; nothing was written. Try again later."); ferr != nil {
				return errors.Join(err, ferr)
			}
		}
		return err
	}
	h.logger(ctx, t).Info("restore finished", "restore_id", r.ID, "status", r.Status)
	return nil
}
