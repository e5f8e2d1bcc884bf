package jobs

import (
	"context"
	"time"

	"github.com/hibiken/asynq"
)

// TypeOAuthCleanup deletes the authorization server's rows whose time is
// over: codes, PKCE challenges, and access and refresh tokens.
const TypeOAuthCleanup = "oauth:cleanup"

// NewOAuthCleanupTask builds the cleanup, unique for an hour: it has no
// payload, as it sweeps every family.
func NewOAuthCleanupTask() *asynq.Task {
	return asynq.NewTask(TypeOAuthCleanup, nil, asynq.Queue(QueueLow), asynq.MaxRetry(3),
		asynq.Timeout(10*time.Minute), asynq.Unique(time.Hour))
}

// OAuthCleanup handles TypeOAuthCleanup. Each delete stands alone and
// takes only rows expired already, so a rerun, or a run cut short, is
// harmless.
func (h *Handlers) OAuthCleanup(ctx context.Context, t *asynq.Task) error {
	now := h.now()
	codes, err := h.Store.DeleteExpiredOAuthCodes(ctx, now)
	if err != nil {
		return err
	}
	h.hook(ctx, HookOAuthCleanStep)
	pkce, err := h.Store.DeleteExpiredOAuthPKCE(ctx, now)
	if err != nil {
		return err
	}
	h.hook(ctx, HookOAuthCleanStep)
	tokens, err := h.Store.DeleteExpiredOAuthTokens(ctx, now)
	if err != nil {
		return err
	}
	h.logger(ctx, t).Info("expired oauth rows deleted", "codes", codes, "pkce", pkce, "tokens", tokens)
	return nil
}
