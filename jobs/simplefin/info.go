package simplefin

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/simplefin/bridge"
	"coffer/models"
)

// TypeFetchInfo reads a connection's server versions once, right
// after a successful claim. A failure is only a warning.
const TypeFetchInfo = "simplefin:fetch_info"

// ConnectionPayload names a connection.
type ConnectionPayload struct {
	FamilyID     uuid.UUID `json:"family_id"`
	ConnectionID uuid.UUID `json:"connection_id"`
}

// NewFetchInfoTask builds the /info read of a connection.
func NewFetchInfoTask(familyID, connectionID uuid.UUID) (*asynq.Task, error) {
	return jobs.NewTask(TypeFetchInfo, ConnectionPayload{FamilyID: familyID, ConnectionID: connectionID},
		asynq.Queue(jobs.QueueDefault), asynq.MaxRetry(2), asynq.Timeout(time.Minute),
		asynq.Unique(time.Hour))
}

// payloadConnection loads the connection that t's ConnectionPayload names.
func (h *Handlers) payloadConnection(ctx context.Context, t *asynq.Task) (*models.Connection, error) {
	var p ConnectionPayload
	if err := jobs.Decode(t, &p); err != nil {
		return nil, err
	}
	return h.Store.Connection(ctx, p.FamilyID, p.ConnectionID)
}

// FetchInfo handles TypeFetchInfo. The request counts against the
// connection's budget like any other.
func (h *Handlers) FetchInfo(ctx context.Context, t *asynq.Task) error {
	conn, err := h.payloadConnection(ctx, t)
	if err != nil {
		return jobs.IgnoreNotFound(err)
	}
	access, err := h.Store.AccessURL(conn)
	if err != nil || conn.Status == models.ConnDisconnected {
		return nil
	}
	b := budget{rdb: h.Redis, limit: h.Options.withDefaults().DailyBudget}
	slots, _, err := b.reserve(ctx, conn.ID, 1, h.now())
	if err != nil || slots == nil {
		h.logger(ctx, t).Warn("server versions not read: no request budget", "connection_id", conn.ID)
		return nil
	}
	versions, err := h.Bridge.Info(ctx, access)
	if errors.Is(err, bridge.ErrNotSent) {
		if err := b.release(ctx, conn.ID, slots[0]); err != nil {
			return err
		}
	}
	if err != nil {
		h.logger(ctx, t).Warn("server versions not read", "connection_id", conn.ID, "error", err)
		return nil
	}
	return h.Store.SetServerVersions(ctx, conn, versions)
}
