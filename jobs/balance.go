package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/models"
)

// TypeAccountBalance recalculates one account's balance from its
// transactions.
const TypeAccountBalance = "account:balance"

// TypeBalanceSweep recalculates every account: transactions dated in the
// future start to count on their day, and any recalculation that was lost
// (Redis restarted, a task archived) is made good.
const TypeBalanceSweep = "account:balance_sweep"

// AccountBalancePayload names the account to recalculate.
type AccountBalancePayload struct {
	FamilyID  uuid.UUID `json:"family_id"`
	AccountID uuid.UUID `json:"account_id"`
}

// NewAccountBalanceTask builds the recalculation of one account. Its task
// id makes it unique per account while it waits in the queue.
func NewAccountBalanceTask(familyID, accountID uuid.UUID) (*asynq.Task, error) {
	payload, err := json.Marshal(AccountBalancePayload{FamilyID: familyID, AccountID: accountID})
	if err != nil {
		return nil, fmt.Errorf("jobs: account balance payload: %w", err)
	}
	return asynq.NewTask(TypeAccountBalance, payload,
		asynq.TaskID("account:balance:"+accountID.String()),
		asynq.Queue(QueueDefault), asynq.MaxRetry(10), asynq.Timeout(time.Minute)), nil
}

// EnqueueAccountBalance asks for a recalculation after a committed write.
// When one is already queued it covers this write too. When one is already
// running it may have read the data before this write, so a second one is
// queued a moment later under its own id.
func EnqueueAccountBalance(ctx context.Context, q *asynq.Client, familyID, accountID uuid.UUID) error {
	task, err := NewAccountBalanceTask(familyID, accountID)
	if err != nil {
		return err
	}
	_, err = q.EnqueueContext(ctx, task)
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		_, err = q.EnqueueContext(ctx, task,
			asynq.TaskID("account:balance:"+accountID.String()+":again"), asynq.ProcessIn(2*time.Second))
		if errors.Is(err, asynq.ErrTaskIDConflict) {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("jobs: enqueue account balance: %w", err)
	}
	return nil
}

// AccountBalance handles TypeAccountBalance. The account may have been
// deleted since: then there is nothing to do.
func (h *Handlers) AccountBalance(ctx context.Context, t *asynq.Task) error {
	var p AccountBalancePayload
	if err := decode(t, &p); err != nil {
		return err
	}
	err := h.Store.RecalculateBalance(ctx, p.FamilyID, p.AccountID)
	if errors.Is(err, models.ErrNotFound) {
		h.logger(ctx, t).Info("account gone; nothing to recalculate", "account_id", p.AccountID)
		return nil
	}
	return err
}

// NewBalanceSweepTask builds the periodic sweep over every account.
func NewBalanceSweepTask() *asynq.Task {
	return asynq.NewTask(TypeBalanceSweep, nil, asynq.Queue(QueueLow), asynq.MaxRetry(3), asynq.Timeout(10*time.Minute))
}

// BalanceSweep handles TypeBalanceSweep by queueing one recalculation per
// account; the per-account task ids keep this from piling up.
func (h *Handlers) BalanceSweep(ctx context.Context, t *asynq.Task) error {
	refs, err := h.Store.AllAccountRefs(ctx)
	if err != nil {
		return err
	}
	for _, r := range refs {
		task, err := NewAccountBalanceTask(r.FamilyID, r.ID)
		if err != nil {
			return err
		}
		if _, err := h.Queue.EnqueueContext(ctx, task); err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
			return fmt.Errorf("jobs: sweep: %w", err)
		}
	}
	h.logger(ctx, t).Info("balance sweep queued", "accounts", len(refs))
	return nil
}
