package models

import (
	"context"
	"slices"

	"github.com/google/uuid"
)

// OnBalanceChange sets fn to run after every committed write that can
// change an account's balance: a transaction created, edited, deleted,
// excluded by a rule, imported or reverted, a transfer, an account's
// opening balance or currency. fn gets the family and its accounts, each
// once per commit. The store's own writers report it, so a door (the API,
// the screens, a job, the assistant) cannot forget to: what the balance
// then does (queue it, compute it now) is fn's policy, one for every door.
// Set it before the store is shared.
func (s *Store) OnBalanceChange(fn func(ctx context.Context, familyID uuid.UUID, accountIDs []uuid.UUID)) {
	s.balanceChanged = fn
}

// afterCommit is what a database transaction announces once it commits:
// a change to grants (see OnAuthChange) and the accounts whose balances
// it changed, by family.
type afterCommit struct {
	auth     bool
	balances map[uuid.UUID][]uuid.UUID
}

// balanceChange reports that the balances of accounts of familyID
// change. Inside a transaction it only records them: the policy must see
// the committed rows, and nothing of a rolled back one.
func (s *Store) balanceChange(ctx context.Context, familyID uuid.UUID, accountIDs ...uuid.UUID) {
	if len(accountIDs) == 0 {
		return
	}
	if s.after != nil {
		if s.after.balances == nil {
			s.after.balances = map[uuid.UUID][]uuid.UUID{}
		}
		s.after.balances[familyID] = appendNew(s.after.balances[familyID], accountIDs...)
		return
	}
	if s.balanceChanged != nil {
		s.balanceChanged(ctx, familyID, appendNew(nil, accountIDs...))
	}
}

// appendNew appends the ids that ids does not hold yet.
func appendNew(ids []uuid.UUID, more ...uuid.UUID) []uuid.UUID {
	for _, id := range more {
		if id != uuid.Nil && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// announcing runs a database transaction (run) that records what it
// changes in after, and announces that once run has returned nil, that
// is once the transaction has committed. Inside an outer transaction it
// records into the outer one, which announces at its own commit.
func (s *Store) announcing(ctx context.Context, run func(after *afterCommit) error) error {
	if s.after != nil {
		return run(s.after)
	}
	after := &afterCommit{}
	if err := run(after); err != nil {
		return err
	}
	s.announce(ctx, after)
	return nil
}

// announce reports what a committed transaction changed. s is outside
// any transaction.
func (s *Store) announce(ctx context.Context, after *afterCommit) {
	if after.auth {
		s.authChange(ctx)
	}
	for familyID, ids := range after.balances {
		s.balanceChange(ctx, familyID, ids...)
	}
}
