package jobs

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// TypeFamilyPurge removes a family whose last user was deleted, with all
// its data.
const TypeFamilyPurge = "family:purge"

// FamilyPurgePayload names the family.
type FamilyPurgePayload struct {
	FamilyID uuid.UUID `json:"family_id"`
}

// NewFamilyPurgeTask builds the purge of a family, unique while queued.
func NewFamilyPurgeTask(familyID uuid.UUID) (*asynq.Task, error) {
	return NewTask(TypeFamilyPurge, FamilyPurgePayload{FamilyID: familyID},
		asynq.TaskID("family:purge:"+familyID.String()), asynq.Queue(QueueLow), asynq.MaxRetry(5),
		asynq.Timeout(10*time.Minute))
}

// FamilyPurge handles TypeFamilyPurge. A family that still has users, or
// is gone already, is left as it is, so a rerun is harmless.
func (h *Handlers) FamilyPurge(ctx context.Context, t *asynq.Task) error {
	var p FamilyPurgePayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	deleted, err := h.Store.PurgeFamilyIfEmpty(ctx, p.FamilyID)
	if deleted {
		h.hook(ctx, HookFamilyPurged)
		h.logger(ctx, t).Info("empty family purged", "family_id", p.FamilyID)
	}
	return err
}
