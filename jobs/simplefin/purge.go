package simplefin

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/jobs"
	"coffer/models"
)

// TypePurge deletes what a disconnected connection imported, when
// the user asked for it.
const TypePurge = "simplefin:purge"

// NewPurgeTask builds the purge of a connection's imported data.
func NewPurgeTask(familyID, connectionID uuid.UUID) (*asynq.Task, error) {
	return jobs.NewTask(TypePurge, ConnectionPayload{FamilyID: familyID, ConnectionID: connectionID},
		asynq.Queue(jobs.QueueLow), asynq.MaxRetry(5), asynq.Timeout(30*time.Minute),
		asynq.TaskID("simplefin:purge:"+connectionID.String()))
}

// Purge handles TypePurge: the connection's imported transactions go in
// batches of 5,000, then its remote accounts and the ledger accounts they
// fed that are now empty. Only a disconnected connection is purged;
// running it again finds nothing left.
func (h *Handlers) Purge(ctx context.Context, t *asynq.Task) error {
	conn, err := h.payloadConnection(ctx, t)
	if err != nil {
		return jobs.IgnoreNotFound(err)
	}
	if conn.Status != models.ConnDisconnected {
		return nil // reconnected meanwhile: keep everything
	}
	for {
		n, err := h.Store.PurgeConnectionBatch(ctx, conn.FamilyID, conn.ID, 5000)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		h.hook(ctx, HookPurged)
	}
	return h.Store.PurgeConnectionAccounts(ctx, conn.FamilyID, conn.ID)
}

// ForgetConnection removes what a disconnected connection left in Redis:
// its queued sync tasks (best effort: handlers re-check the status) and
// its request budget.
func ForgetConnection(ctx context.Context, rdb redis.UniversalClient, connectionID uuid.UUID, ended []models.Sync) {
	insp := asynq.NewInspectorFromRedisClient(rdb)
	for _, sy := range ended {
		if sy.Kind == models.SyncKindAccount {
			_ = insp.DeleteTask(jobs.QueueDefault, importTaskID(sy.ID))
		} else {
			_ = insp.DeleteTask(jobs.QueueDefault, syncTaskID(sy.ID))
		}
	}
	rdb.Del(ctx, budgetKey(connectionID))
}
