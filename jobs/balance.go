package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/models"
)

// TypeAccountBalance brings one account's balance, kept by every write as
// of the day it counts up to, to today (models.Store.RefreshBalance); the
// sweep's recalculates it in full instead.
const TypeAccountBalance = "account:balance"

// TypeBalanceSweep recalculates every account in full: transactions dated
// in the future start to count on their day, and any drift of a kept
// balance from the full walk is made good.
const TypeBalanceSweep = "account:balance_sweep"

// AccountBalancePayload names the account to bring up to date; Full asks
// for the full recalculation (the sweep's).
type AccountBalancePayload struct {
	FamilyID  uuid.UUID `json:"family_id"`
	AccountID uuid.UUID `json:"account_id"`
	Full      bool      `json:"full,omitempty"`
}

// NewAccountBalanceTask builds the recalculation of one account. Its task
// id makes it unique per account while it waits in the queue.
func NewAccountBalanceTask(familyID, accountID uuid.UUID) (*asynq.Task, error) {
	return newAccountBalanceTask(AccountBalancePayload{FamilyID: familyID, AccountID: accountID})
}

func newAccountBalanceTask(p AccountBalancePayload) (*asynq.Task, error) {
	return NewTask(TypeAccountBalance, p,
		asynq.TaskID("account:balance:"+p.AccountID.String()), asynq.Queue(QueueDefault), asynq.MaxRetry(10),
		asynq.Timeout(time.Minute))
}

// Balances is the one balance policy of every door: the store reports each
// committed write that changes a balance (models.Store.OnBalanceChange)
// to Changed, which queues a debounced refresh, so that a busy account
// gets about one delayed refresh per second from each process instead of
// one per write. The write itself has already moved the kept balance (see
// models/balance_keep.go); the refresh only brings the day it counts up
// to to today, reading the rows between. A write made with a context from
// SettleBalances is refreshed at once instead, by the same refresh the
// job runs.
type Balances struct {
	store  *models.Store
	q      *asynq.Client
	log    *slog.Logger
	mu     sync.Mutex
	queued map[uuid.UUID]time.Time // until when a task this process queued covers an account's writes

	nQueued, nSettled atomic.Int64 // accounts handed to Changed, by what was done
}

const (
	balanceDelay  = time.Second            // how long a queued recalculation waits
	balanceWindow = 700 * time.Millisecond // writes within this covered by the waiting task
	// balanceSkew is how much later than its second a follow-up starts:
	// room for the clocks of the web and worker hosts to differ (asynq
	// keeps start times in whole seconds).
	balanceSkew = time.Second
)

// NewBalances returns the policy for the writes of s, queueing through q.
// UseBalances also makes it the store's.
func NewBalances(s *models.Store, q *asynq.Client, log *slog.Logger) *Balances {
	return &Balances{store: s, q: q, log: log, queued: map[uuid.UUID]time.Time{}}
}

// UseBalances makes a new Balances the policy of every write of s (see
// models.Store.OnBalanceChange) and returns it: main.go calls it once per
// process, before the store is shared, and the tests as main.go does.
func UseBalances(s *models.Store, q *asynq.Client, log *slog.Logger) *Balances {
	b := NewBalances(s, q, log)
	s.OnBalanceChange(b.Changed)
	return b
}

// settleKey marks a context whose writes' balances are recalculated at once.
type settleKey struct{}

// SettleBalances returns ctx marked so that the balances its writes change
// are recalculated before the write returns rather than queued: for a
// person who looks at the balance on the very next page.
func SettleBalances(ctx context.Context) context.Context {
	return context.WithValue(ctx, settleKey{}, true)
}

// Changed is the policy run after a committed write changed the balances
// of accounts of familyID. The write has succeeded whatever happens here:
// a failure is logged, and the periodic sweep makes the balance right
// later.
func (b *Balances) Changed(ctx context.Context, familyID uuid.UUID, accountIDs []uuid.UUID) {
	ctx = context.WithoutCancel(ctx) // what committed is due even if the request or task ends now
	settle, _ := ctx.Value(settleKey{}).(bool)
	for _, id := range accountIDs {
		var err error
		if settle {
			b.nSettled.Add(1)
			_, err = recalculate(ctx, b.store, b.log, AccountBalancePayload{FamilyID: familyID, AccountID: id})
		} else {
			b.nQueued.Add(1)
			err = b.Enqueue(ctx, familyID, id)
		}
		if err != nil {
			b.log.Error("balance after a write", "family_id", familyID, "account_id", id, "error", err)
		}
	}
}

// Counts reports how many account balances Changed queued and settled
// since b was made: tests see by it that a door went through the policy.
func (b *Balances) Counts() (queued, settled int64) { return b.nQueued.Load(), b.nSettled.Load() }

// Enqueue asks for a recalculation of an account after a committed write.
// A task that has not started yet covers the write: the one this process
// queued less than balanceWindow ago, or the one it queues now. When the
// account's task is already queued (and may be running) the write gets a
// follow-up for the second it committed in, starting after that second
// ends: it covers every write of that second, from every process, so the
// process queues nothing more for the account until the second is over.
func (b *Balances) Enqueue(ctx context.Context, familyID, accountID uuid.UUID) error {
	now := time.Now()
	b.mu.Lock()
	until, ok := b.queued[accountID]
	b.mu.Unlock()
	if ok && now.Before(until) {
		return nil
	}
	task, err := NewAccountBalanceTask(familyID, accountID)
	if err != nil {
		return err
	}
	_, err = b.q.EnqueueContext(ctx, task, asynq.ProcessIn(balanceDelay))
	if err == nil {
		b.remember(accountID, now.Add(balanceWindow))
		return nil
	}
	if !errors.Is(err, asynq.ErrTaskIDConflict) {
		return fmt.Errorf("jobs: enqueue account balance: %w", err)
	}
	second := now.Truncate(time.Second)
	_, err = b.q.EnqueueContext(ctx, task, asynq.ProcessAt(second.Add(time.Second+balanceSkew)),
		asynq.TaskID(BalanceFollowUpID(accountID, second)))
	if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
		return fmt.Errorf("jobs: enqueue account balance: %w", err)
	}
	b.remember(accountID, second.Add(time.Second))
	return nil
}

// BalanceFollowUpID is the task id of an account's follow-up
// recalculation for the writes of the second that starts at second.
func BalanceFollowUpID(accountID uuid.UUID, second time.Time) string {
	return "account:balance:" + accountID.String() + ":" + strconv.FormatInt(second.Unix(), 10)
}

func (b *Balances) remember(accountID uuid.UUID, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queued[accountID] = until
	if len(b.queued) > 10_000 { // forget what no longer matters, so the map stays small
		now := time.Now()
		for id, t := range b.queued {
			if !now.Before(t) {
				delete(b.queued, id)
			}
		}
	}
}

// AccountBalance handles TypeAccountBalance. The account may have been
// deleted since: then there is nothing to do. A balance too large to hold
// is recorded on the account by the store; retrying cannot help until a
// transaction changes, and that queues a recalculation of its own.
func (h *Handlers) AccountBalance(ctx context.Context, t *asynq.Task) error {
	var p AccountBalancePayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	saved, err := recalculate(ctx, h.Store, h.logger(ctx, t), p)
	if saved {
		h.hook(ctx, HookBalanceSaved)
	}
	return err
}

// recalculate is the one update of an account's balance, the job's and a
// settled change's: brought up to today, or recalculated in full for
// p.Full; saved reports that a new balance committed.
func recalculate(ctx context.Context, s *models.Store, log *slog.Logger, p AccountBalancePayload) (saved bool, err error) {
	accountID, changed := p.AccountID, true
	if p.Full {
		err = s.RecalculateBalance(ctx, p.FamilyID, p.AccountID)
	} else {
		changed, err = s.RefreshBalance(ctx, p.FamilyID, p.AccountID)
	}
	switch {
	case errors.Is(err, models.ErrNotFound):
		log.Info("account gone; nothing to recalculate", "account_id", accountID)
		return false, nil
	case errors.Is(err, models.ErrBalanceOverflow):
		log.Warn("balance out of range; recorded on the account", "account_id", accountID)
		return false, nil
	}
	return err == nil && changed, err
}

// NewBalanceSweepTask builds the periodic sweep over every account.
func NewBalanceSweepTask() *asynq.Task {
	return asynq.NewTask(TypeBalanceSweep, nil, asynq.Queue(QueueLow), asynq.MaxRetry(3), asynq.Timeout(10*time.Minute))
}

// BalanceSweep handles TypeBalanceSweep by queueing one recalculation per
// account; per-account, per-day task ids keep a rerun from piling up.
func (h *Handlers) BalanceSweep(ctx context.Context, t *asynq.Task) error {
	refs, err := h.Store.AllAccountRefs(ctx)
	if err != nil {
		return err
	}
	// Its own task ids, one set per day: a recalculation stuck under the
	// usual id (archived after its retries) cannot keep the sweep out.
	day := h.now().UTC().Format("20060102")
	for _, r := range refs {
		task, err := newAccountBalanceTask(AccountBalancePayload{FamilyID: r.FamilyID, AccountID: r.ID, Full: true})
		if err != nil {
			return err
		}
		_, err = h.Queue.EnqueueContext(ctx, task, asynq.TaskID("account:balance:"+r.ID.String()+":sweep:"+day))
		if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
			return fmt.Errorf("jobs: sweep: %w", err)
		}
		h.hook(ctx, HookBalanceQueued)
	}
	h.logger(ctx, t).Info("balance sweep queued", "accounts", len(refs))
	return nil
}

// TypeBalanceMovesSweep queues the refresh of every account with balance
// moves waiting (models.Store.AccountsWithWaitingMoves): a write appends
// its moves and queues the refresh that applies them only after its commit,
// so a process stopped between the two leaves them for this sweep (every
// 15 s) rather than for the nightly one.
const TypeBalanceMovesSweep = "account:balance_moves_sweep"

// NewBalanceMovesSweepTask builds the sweep of waiting balance moves.
func NewBalanceMovesSweepTask() *asynq.Task {
	return asynq.NewTask(TypeBalanceMovesSweep, nil, asynq.Queue(QueueDefault), asynq.MaxRetry(1),
		asynq.Timeout(time.Minute), asynq.Unique(15*time.Second))
}

// BalanceMovesSweep handles TypeBalanceMovesSweep. An account whose
// refresh is already queued keeps that one (same task id).
func (h *Handlers) BalanceMovesSweep(ctx context.Context, t *asynq.Task) error {
	refs, err := h.Store.AccountsWithWaitingMoves(ctx)
	if err != nil {
		return err
	}
	for _, r := range refs {
		task, err := NewAccountBalanceTask(r.FamilyID, r.ID)
		if err != nil {
			return err
		}
		if _, err := h.Queue.EnqueueContext(ctx, task); err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
			return fmt.Errorf("jobs: balance moves sweep: %w", err)
		}
		h.hook(ctx, HookBalanceQueued)
	}
	if len(refs) > 0 {
		h.logger(ctx, t).Info("balance moves sweep queued", "accounts", len(refs))
	}
	return nil
}

// TypeSumsCompactSweep compacts the kept sums (models/transaction_sums.go)
// of every family that gathered more unmerged deltas than a reader would
// leave: readers compact a batch as they read, and this covers the
// families that write and do not read. Merging never changes what a
// reader sums, so a rerun or two at once do no harm.
const TypeSumsCompactSweep = "sums:compact_sweep"

// NewSumsCompactSweepTask builds the periodic compaction of kept sums.
func NewSumsCompactSweepTask() *asynq.Task {
	return asynq.NewTask(TypeSumsCompactSweep, nil, asynq.Queue(QueueLow), asynq.MaxRetry(1),
		asynq.Timeout(10*time.Minute), asynq.Unique(5*time.Minute))
}

// SumsCompactSweep handles TypeSumsCompactSweep.
func (h *Handlers) SumsCompactSweep(ctx context.Context, t *asynq.Task) error {
	ids, err := h.Store.FamiliesWithUnmergedSums(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := h.Store.CompactTransactionSums(ctx, id); err != nil {
			return err
		}
	}
	if len(ids) > 0 {
		h.logger(ctx, t).Info("kept sums compacted", "families", len(ids))
	}
	return nil
}
