package simplefin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/simplefin/bridge"
	"coffer/models"
)

// TypeClaim exchanges a connection's setup token for its access
// URL: one POST, never two.
const TypeClaim = "simplefin:claim"

// Messages a user sees on a failed claim (spec/aggregator.md §4).
const (
	MsgClaimRefused = "This setup token was already used, has expired, or may have been compromised. " +
		"If you did not use it, disable it at SimpleFIN Bridge and create a new one."
	MsgClaimUnconfirmed = "We could not confirm the claim; the token may have been used. Create a new token."
	MsgClaimUnreachable = "SimpleFIN Bridge could not be reached. Retry in a while; the token was not used."
	MsgClaimNotAllowed  = "The setup token points at an address this server does not connect to."
)

// claimDeadline is how long a claim marked as sent may still be in flight
// on another worker before it counts as lost.
const claimDeadline = 2 * time.Minute

// ClaimPayload names the connection and the claim attempt.
type ClaimPayload struct {
	FamilyID     uuid.UUID `json:"family_id"`
	ConnectionID uuid.UUID `json:"connection_id"`
	Seq          int       `json:"seq"`
}

// NewClaimTask builds the claim of one attempt, unique per connection and
// attempt.
func NewClaimTask(familyID, connectionID uuid.UUID, seq int) (*asynq.Task, error) {
	return jobs.NewTask(TypeClaim, ClaimPayload{FamilyID: familyID, ConnectionID: connectionID, Seq: seq},
		asynq.Queue(jobs.QueueCritical), asynq.MaxRetry(3), asynq.Timeout(60*time.Second),
		asynq.TaskID(claimTaskID(connectionID, seq)))
}

func claimTaskID(connectionID uuid.UUID, seq int) string {
	return "simplefin:claim:" + connectionID.String() + ":" + strconv.Itoa(seq)
}

// Claim handles TypeClaim. It records that the POST is about to go before
// sending it; a run that finds that mark (a worker died mid-claim) never
// POSTs again.
func (h *Handlers) Claim(ctx context.Context, t *asynq.Task) error {
	var p ClaimPayload
	if err := jobs.Decode(t, &p); err != nil {
		return err
	}
	step, c, err := h.Store.BeginClaim(ctx, p.FamilyID, p.ConnectionID, p.Seq)
	if err != nil {
		return jobs.IgnoreNotFound(err)
	}
	switch step {
	case models.ClaimSkip:
		if c.Status == models.ConnActive && c.ClaimSeq == p.Seq && len(c.ServerVersions) == 0 {
			// This claim succeeded on a run that died before queueing its
			// /info read, which nothing else queues (the sweep queues the
			// first sync).
			h.enqueueFetchInfo(ctx, t, c)
		}
		return nil
	case models.ClaimUnclear:
		if h.now().Sub(*c.ClaimSentAt) < claimDeadline {
			return fmt.Errorf("simplefin: claim of %s may still be in flight", c.ID)
		}
		return h.Store.ClaimFailed(ctx, c, MsgClaimUnconfirmed, false)
	}

	token, err := h.Store.SetupToken(c)
	if err != nil {
		return h.Store.ClaimFailed(ctx, c, MsgClaimUnconfirmed, false)
	}
	claimURL, err := bridge.ParseSetupToken(token, h.Bridge.AllowHTTP)
	if err != nil {
		return h.Store.ClaimFailed(ctx, c, "The setup token is not valid. Create a new one.", false)
	}
	access, err := h.Bridge.Claim(ctx, claimURL)
	var ce *bridge.ClaimError
	switch {
	case err == nil:
		sy, err := h.Store.ClaimSucceeded(ctx, c, access)
		if err != nil {
			return err
		}
		h.hook(ctx, HookClaimed)
		h.enqueueFetchInfo(ctx, t, c)
		h.enqueueSync(ctx, t, sy)
		return nil
	case errors.As(err, &ce) && ce.Outcome == bridge.Refused:
		return h.Store.ClaimFailed(ctx, c, MsgClaimRefused, false)
	case errors.As(err, &ce) && (ce.Outcome == bridge.NeverSent || ce.Outcome == bridge.Blocked):
		return h.Store.ClaimFailed(ctx, c, MsgClaimUnreachable, true)
	case errors.As(err, &ce) && ce.Outcome == bridge.NotAllowed:
		return h.Store.ClaimFailed(ctx, c, MsgClaimNotAllowed, false)
	default:
		h.logger(ctx, t).Warn("claim outcome unknown", "connection_id", c.ID, "error", err)
		return h.Store.ClaimFailed(ctx, c, MsgClaimUnconfirmed, false)
	}
}

func (h *Handlers) enqueueFetchInfo(ctx context.Context, t *asynq.Task, c *models.Connection) {
	if task, err := NewFetchInfoTask(c.FamilyID, c.ID); err == nil && h.Queue != nil {
		if _, err := h.Queue.EnqueueContext(ctx, task); err != nil && !errors.Is(err, asynq.ErrDuplicateTask) {
			h.logger(ctx, t).Warn("fetch_info not queued", "connection_id", c.ID, "error", err)
		}
	}
}

// TypeFetchInfo reads a connection's server versions once, right
// after a successful claim. A failure is only a warning.
const TypeFetchInfo = "simplefin:fetch_info"

// NewFetchInfoTask builds the /info read of a connection.
func NewFetchInfoTask(familyID, connectionID uuid.UUID) (*asynq.Task, error) {
	return jobs.NewTask(TypeFetchInfo, ConnectionPayload{FamilyID: familyID, ConnectionID: connectionID},
		asynq.Queue(jobs.QueueDefault), asynq.MaxRetry(2), asynq.Timeout(time.Minute),
		asynq.Unique(time.Hour))
}

// FetchInfo handles TypeFetchInfo. The request counts against the
// connection's budget like any other, so versions already stored since
// the last claim (a run that died after its write) are not read again.
func (h *Handlers) FetchInfo(ctx context.Context, t *asynq.Task) error {
	conn, err := h.payloadConnection(ctx, t)
	if err != nil {
		return jobs.IgnoreNotFound(err)
	}
	access, err := h.Store.AccessURL(conn)
	if err != nil || conn.Status == models.ConnDisconnected || len(conn.ServerVersions) > 0 {
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
