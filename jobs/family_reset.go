package jobs

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// TypeFamilyReset removes a family's financial data and keeps its people
// (DELETE /api/v1/users/reset).
const TypeFamilyReset = "family:reset"

// FamilyResetPayload names the family.
type FamilyResetPayload struct {
	FamilyID uuid.UUID `json:"family_id"`
}

// NewFamilyResetTask builds the reset of a family, unique while queued:
// a second request while one waits joins it.
func NewFamilyResetTask(familyID uuid.UUID) (*asynq.Task, error) {
	return NewTask(TypeFamilyReset, FamilyResetPayload{FamilyID: familyID},
		asynq.TaskID("family:reset:"+familyID.String()), asynq.Queue(QueueLow), asynq.MaxRetry(5),
		asynq.Timeout(10*time.Minute))
}

// FamilyReset handles TypeFamilyReset; a rerun finds less or nothing to
// remove.
func (h *Handlers) FamilyReset(ctx context.Context, t *asynq.Task) error {
	var p FamilyResetPayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	if err := h.Store.ResetFamily(ctx, p.FamilyID); err != nil {
		return err
	}
	h.logger(ctx, t).Info("family data reset", "family_id", p.FamilyID)
	return nil
}
