package models

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/google/uuid"

	"coffer/models/civil"
	"coffer/models/money"
)

// Balances are kept incrementally (issue 30): every write of a
// transaction moves its account's stored balance, as of the day the
// balance counts up to (balance_updated_at), and its valuations'
// adjustments by its own amount (the triggers of migration
// 20261206500000_balance_moves): on SQLite in the write's own database
// transaction, on PostgreSQL when the account's refresh applies the moves
// the write left waiting (migration 20261208100000, lockAndSettle), so that
// concurrent writes of one account do not queue on its row. What is left
// to do after a write is that, and to bring that day up to today, which
// reads only the rows between them (RefreshBalance). The full walk (recalculate)
// stays the definition: a valuation and a change of an account's currency
// or type rewrite the account from it, and CheckBalance compares the two.

// movedSQL sums an account's counted transactions dated after ?3 up to
// ?4, split at 2^32 as daySumsSQL is.
const movedSQL = `
SELECT CAST(COALESCE(SUM(t.amount / 4294967296), 0) AS BIGINT) AS high, CAST(COALESCE(SUM(t.amount % 4294967296), 0) AS BIGINT) AS low
FROM transactions t
WHERE t.family_id = ? AND t.account_id = ? AND t.currency = ? AND t.deleted_at IS NULL AND NOT t.excluded
  AND t.date > ? AND t.date <= ?`

// movedBetween is what account a's transactions after from, up to to,
// did to its balance.
func (s *Store) movedBetween(ctx context.Context, a *Account, from, to civil.Date) (*big.Int, error) {
	var r struct {
		High int64 `bun:"high"`
		Low  int64 `bun:"low"`
	}
	if err := s.db.NewRaw(movedSQL, a.FamilyID, a.ID, a.Currency, from, to).Scan(ctx, &r); err != nil {
		return nil, dbErr("read moves", err)
	}
	m := new(big.Int).Lsh(big.NewInt(r.High), 32)
	m.Add(m, big.NewInt(r.Low))
	if !Liability(a.AccountType) {
		m.Neg(m)
	}
	return m, nil
}

// RefreshBalance brings an account's stored balance, kept by every write
// as of the day it counts up to, to today: it reads only the transactions
// between that day and today (or after the latest valuation between
// them). An account never counted, marked with a balance error, or whose
// day is after today (the clock went back), or whose only valuations are
// after today, is recalculated in full instead. Like RecalculateBalance it
// is safe to repeat; changed reports whether anything was written.
//
// On PostgreSQL the commonest refresh, moves waiting on an account counted
// up to today, only applies them (settleBalance): holding the account FOR
// UPDATE, as a walk of its rows must, waited for the writes in flight and
// held off new ones until it committed: on a busy account (a bank sync, an
// import beside a person's entries) every write waited for it in turn.
func (s *Store) RefreshBalance(ctx context.Context, familyID, id uuid.UUID) (changed bool, err error) {
	if s.Postgres() && !s.inTx() {
		var walk bool
		if changed, walk, err = s.settleBalance(ctx, familyID, id); err != nil || !walk {
			return changed, err
		}
	}
	more, err := s.refreshBalance(ctx, familyID, id)
	return changed || more, err
}

// settleBalance applies the moves waiting on the account, holding it FOR
// NO KEY UPDATE: other settles, walks, valuations and reconciliations
// take turns with it, while writes, which hold it FOR KEY SHARE, go on
// and leave their moves for the next settle (a move is applied by the
// settle that deletes it, so once). walk reports that the balance is not
// counted up to today (or not counted at all): that is refreshBalance's
// work, in a transaction of its own, so that no lock is ever raised
// while writes hold theirs.
func (s *Store) settleBalance(ctx context.Context, familyID, id uuid.UUID) (settled, walk bool, err error) {
	err = s.RunInTx(ctx, func(tx *Store) error {
		a, ok, err := tx.lockAndSettle(ctx, familyID, id, "NO KEY UPDATE")
		if err != nil {
			return err
		}
		settled = ok
		walk = a.BalanceUpdatedAt == nil || a.BalanceError != nil || civil.DateOf(*a.BalanceUpdatedAt) != civil.DateOf(tx.now())
		return nil
	})
	return settled, walk, err
}

// refreshBalance is RefreshBalance under the account's FOR UPDATE.
func (s *Store) refreshBalance(ctx context.Context, familyID, id uuid.UUID) (changed bool, err error) {
	var overflow error
	err = s.RunInTx(ctx, func(tx *Store) error {
		a, settled, err := tx.lockAndSettle(ctx, familyID, id, "UPDATE")
		if err != nil {
			return err
		}
		changed = settled
		now := tx.now()
		today := civil.DateOf(now)
		full := a.BalanceUpdatedAt == nil || a.BalanceError != nil
		var asof civil.Date
		if !full {
			asof = civil.DateOf(*a.BalanceUpdatedAt)
			if asof == today {
				return nil
			}
			full = asof > today
		}
		var base *big.Int
		from := asof
		if !full {
			anchors, err := tx.readAnchors(ctx, familyID, id)
			if err != nil {
				return err
			}
			last := -1
			for i, an := range anchors {
				if an.day() <= today {
					last = i
				}
			}
			switch {
			case last < 0 && len(anchors) > 0:
				full = true // counted back from a valuation after today
			case last >= 0 && anchors[last].day() > asof:
				base, from = big.NewInt(int64(anchors[last].Amount)), anchors[last].day()
			default:
				base = big.NewInt(int64(a.Balance))
			}
		}
		changed = true
		if full {
			if err := tx.recalculate(ctx, familyID, id); errors.Is(err, ErrBalanceOverflow) {
				overflow = err // the mark is written: commit it
			} else if err != nil {
				return err
			}
			return nil
		}
		m, err := tx.movedBetween(ctx, a, from, today)
		if err != nil {
			return err
		}
		balance := base.Add(base, m)
		up := tx.db.NewUpdate().Model((*Account)(nil)).Where("family_id = ?", familyID).Where("id = ?", id)
		if !fits(balance) {
			if _, err := up.Set("balance_error = ?", BalanceOverflow).Exec(ctx); err != nil {
				return dbErr("refresh balance", err)
			}
			overflow = fmt.Errorf("models: refresh balance of account %s: %w", id, ErrBalanceOverflow)
			return nil
		}
		b := money.Amount(balance.Int64())
		_, err = up.Set("balance = ?", b).Set("cash_balance = ?", cashPart(a.AccountType, b)).
			Set("balance_updated_at = ?", now).Exec(ctx)
		return dbErr("refresh balance", err)
	})
	if err == nil {
		err = overflow
	}
	return changed, err
}

// SettleFamilyBalances applies the moves waiting for any account of the
// family (on PostgreSQL, see lockAndSettle), each account by its refresh:
// for a reader that must show every committed write (an export), not
// only those the queued refreshes have applied.
func (s *Store) SettleFamilyBalances(ctx context.Context, familyID uuid.UUID) error {
	if !s.Postgres() {
		return nil
	}
	var ids []uuid.UUID
	err := s.db.NewRaw(`SELECT DISTINCT account_id FROM balance_moves_pending WHERE family_id = ?`, familyID).Scan(ctx, &ids)
	if err != nil {
		return dbErr("settle balances", err)
	}
	for _, id := range ids {
		_, err := s.RefreshBalance(ctx, familyID, id)
		if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrBalanceOverflow) {
			return err
		}
	}
	return nil
}

// AccountsWithWaitingMoves lists the accounts, of every family, that have
// moves waiting to be applied (PostgreSQL): for the periodic sweep that
// queues their refresh, in case the refresh a write queued was lost (a
// process stopped between its commit and the queueing). Ids only.
func (s *Store) AccountsWithWaitingMoves(ctx context.Context) ([]AccountRef, error) {
	if !s.Postgres() {
		return nil, nil
	}
	var refs []AccountRef
	err := s.db.NewRaw(`SELECT DISTINCT family_id, account_id AS id FROM balance_moves_pending ORDER BY 1, 2`).Scan(ctx, &refs)
	return refs, dbErr("list accounts with waiting moves", err)
}

// BalanceDrift is a stored figure of an account that differs from what
// the full walk computes: its balance (or cash balance) on the day the
// stored balance counts up to, or a valuation's adjustment on its day.
// A figure out of range shows as Overflow on its side.
type BalanceDrift struct {
	FamilyID  uuid.UUID
	AccountID uuid.UUID
	What      string     // "balance", "cash_balance" or "adjustment"
	Day       civil.Date // "" for an undated opening balance
	Stored    money.Amount
	Computed  money.Amount
	// StoredOverflow and ComputedOverflow: the side is marked (stored) or
	// found (computed) out of range, and its figure means nothing.
	StoredOverflow, ComputedOverflow bool
}

// CheckBalance compares account id's stored balance and adjustments with
// the full walk of its transactions and valuations (see balance_walk.go)
// and returns every difference. With fix, an account that differs is
// recalculated (RecalculateBalance) in the same database transaction, so
// that no write slips between the check and the repair.
func (s *Store) CheckBalance(ctx context.Context, familyID, id uuid.UUID, fix bool) ([]BalanceDrift, error) {
	var drifts []BalanceDrift
	err := s.RunInTx(ctx, func(tx *Store) error {
		a, err := tx.lockAccount(ctx, familyID, id)
		if err != nil {
			return err
		}
		l, err := tx.readLedger(ctx, a)
		if err != nil {
			return err
		}
		anchors, err := tx.readAnchors(ctx, familyID, id)
		if err != nil {
			return err
		}
		day := civil.DateOf(tx.now())
		if a.BalanceUpdatedAt != nil {
			day = civil.DateOf(*a.BalanceUpdatedAt)
		}
		balance := balanceOn(l, anchors, a.OpeningBalance, day)
		adjs, ok := adjustments(l, anchors)
		marked := a.BalanceError != nil && *a.BalanceError == BalanceOverflow
		drift := func(what string, d civil.Date, stored money.Amount, computed *big.Int) {
			dr := BalanceDrift{FamilyID: familyID, AccountID: id, What: what, Day: d, Stored: stored, StoredOverflow: marked}
			if computed == nil || !fits(computed) {
				dr.ComputedOverflow = true
			} else {
				dr.Computed = money.Amount(computed.Int64())
			}
			drifts = append(drifts, dr)
		}
		switch {
		case !ok || !fits(balance):
			if !marked {
				drift("balance", day, a.Balance, nil)
			}
		case marked || a.BalanceUpdatedAt == nil || a.BalanceError != nil:
			drift("balance", day, a.Balance, balance)
		default:
			if b := money.Amount(balance.Int64()); b != a.Balance {
				drift("balance", day, a.Balance, balance)
			} else if cashPart(a.AccountType, b) != a.CashBalance {
				drift("cash_balance", day, a.CashBalance, big.NewInt(int64(cashPart(a.AccountType, b))))
			}
			for i, an := range anchors {
				if money.Amount(adjs[i].Int64()) != an.Adjustment {
					drift("adjustment", an.day(), an.Adjustment, adjs[i])
				}
			}
		}
		if !fix || len(drifts) == 0 {
			return nil
		}
		if err := tx.recalculate(ctx, familyID, id); err != nil && !errors.Is(err, ErrBalanceOverflow) {
			return err
		}
		return nil
	})
	return drifts, err
}

// CheckBalances runs CheckBalance on every account of every family (an
// operator's command, like the balance sweep) and returns every
// difference, fixed when fix.
func (s *Store) CheckBalances(ctx context.Context, fix bool) ([]BalanceDrift, error) {
	refs, err := s.AllAccountRefs(ctx)
	if err != nil {
		return nil, err
	}
	var all []BalanceDrift
	for _, r := range refs {
		drifts, err := s.CheckBalance(ctx, r.FamilyID, r.ID, fix)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since
		}
		if err != nil {
			return all, err
		}
		all = append(all, drifts...)
	}
	return all, nil
}
