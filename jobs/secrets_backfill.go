package jobs

import (
	"context"
	"time"

	"github.com/hibiken/asynq"
)

// TypeSecretsBackfill seals secrets stored in plain text by older rows and
// re-seals values of former keys after a rotation.
const TypeSecretsBackfill = "secrets:backfill"

// NewSecretsBackfillTask builds the backfill, unique while queued; every
// worker enqueues it at start.
func NewSecretsBackfillTask() *asynq.Task {
	return asynq.NewTask(TypeSecretsBackfill, nil, asynq.TaskID(TypeSecretsBackfill),
		asynq.Queue(QueueLow), asynq.MaxRetry(3), asynq.Timeout(10*time.Minute))
}

// SecretsBackfill handles TypeSecretsBackfill; a second run changes
// nothing.
func (h *Handlers) SecretsBackfill(ctx context.Context, t *asynq.Task) error {
	r, err := h.Store.BackfillSecrets(ctx, false)
	if err != nil {
		return err
	}
	h.logger(ctx, t).Info("secrets backfill", "scanned", r.Scanned, "encrypted", r.Encrypted,
		"reencrypted", r.Reencrypted, "current", r.Current, "unreadable", r.Unreadable)
	return nil
}
