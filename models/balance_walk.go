package models

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"

	"github.com/google/uuid"

	"coffer/models/civil"
	"coffer/models/money"
)

// An account's balance on day D is its latest valuation on or before D
// plus what its transactions after that valuation, up to D, moved. An
// undated opening valuation stands before every transaction. Before the
// first dated valuation (an opening dated today under three months of
// imported history), the balance is that valuation less what the
// transactions between D and it moved, so that the imported history ends
// exactly at it. Without any valuation, it is the opening balance plus
// every transaction up to D.
//
// The reports do not walk this: each valuation keeps its Adjustment (the
// step from the balance just before it to its amount), and a report adds
// the adjustments on their days as it adds transactions, resting on the
// stored balance as before. recalculate rewrites both together.

// daySumsSQL sums an account's counted transactions (as RecalculateBalance
// counts them) by day, each sum split at 2^32 as in movementSQL so that
// no SUM overflows.
const daySumsSQL = `
SELECT t.date, CAST(SUM(t.amount / 4294967296) AS BIGINT) AS high, CAST(SUM(t.amount % 4294967296) AS BIGINT) AS low
FROM transactions t
WHERE t.family_id = ? AND t.account_id = ? AND t.currency = ? AND t.deleted_at IS NULL AND NOT t.excluded
GROUP BY t.date
ORDER BY t.date`

// ledger is an account's transactions summed by day, in date order, and
// what a stored unit does to its balance (flow: +1 for a debt, -1 for an
// asset, whose expenses are stored positive).
type ledger struct {
	days []civil.Date
	cum  []*big.Int // cum[i]: the sum of the amounts of days[0..i]
	flow int64
}

// daySumsClearedSQL is daySumsSQL over the rows ticked cleared (see
// clearedBalance).
const daySumsClearedSQL = `
SELECT t.date, CAST(SUM(t.amount / 4294967296) AS BIGINT) AS high, CAST(SUM(t.amount % 4294967296) AS BIGINT) AS low
FROM transactions t
WHERE t.family_id = ? AND t.account_id = ? AND t.currency = ? AND t.deleted_at IS NULL AND NOT t.excluded AND t.cleared
GROUP BY t.date
ORDER BY t.date`

// readLedger reads account a's day sums.
func (s *Store) readLedger(ctx context.Context, a *Account) (*ledger, error) {
	return s.readLedgerOf(ctx, a, daySumsSQL)
}

// readLedgerOf reads account a's day sums by query (daySumsSQL or a
// narrower one of the same columns).
func (s *Store) readLedgerOf(ctx context.Context, a *Account, query string) (*ledger, error) {
	var rows []struct {
		Date civil.Date `bun:"date"`
		High int64      `bun:"high"`
		Low  int64      `bun:"low"`
	}
	if err := s.db.NewRaw(query, a.FamilyID, a.ID, a.Currency).Scan(ctx, &rows); err != nil {
		return nil, dbErr("read ledger", err)
	}
	l := &ledger{flow: -1}
	if Liability(a.AccountType) {
		l.flow = 1
	}
	sum := new(big.Int)
	for _, r := range rows {
		day := new(big.Int).Lsh(big.NewInt(r.High), 32)
		sum.Add(sum, day.Add(day, big.NewInt(r.Low)))
		l.days = append(l.days, r.Date)
		l.cum = append(l.cum, new(big.Int).Set(sum))
	}
	return l, nil
}

// upTo is the sum of the amounts dated on or before d; "" is before
// everything.
func (l *ledger) upTo(d civil.Date) *big.Int {
	if d == "" {
		return new(big.Int)
	}
	i := sort.Search(len(l.days), func(i int) bool { return l.days[i] > d })
	if i == 0 {
		return new(big.Int)
	}
	return new(big.Int).Set(l.cum[i-1])
}

// moved is what the transactions after from, up to to, did to the balance.
func (l *ledger) moved(from, to civil.Date) *big.Int {
	m := l.upTo(to)
	m.Sub(m, l.upTo(from))
	return m.Mul(m, big.NewInt(l.flow))
}

// anchor is a valuation as the walk reads it; date "" for an undated opening.
type anchor struct {
	ID         uuid.UUID    `bun:"id"`
	Date       *civil.Date  `bun:"date"`
	Amount     money.Amount `bun:"amount"`
	Adjustment money.Amount `bun:"adjustment"`
}

func (a anchor) day() civil.Date {
	if a.Date == nil {
		return ""
	}
	return *a.Date
}

// readAnchors reads an account's valuations, an undated opening first,
// then by date.
func (s *Store) readAnchors(ctx context.Context, familyID, accountID uuid.UUID) ([]anchor, error) {
	var as []anchor
	err := s.db.NewSelect().Model((*Valuation)(nil)).Column("id", "date", "amount", "adjustment").
		Where("family_id = ?", familyID).Where("account_id = ?", accountID).
		OrderExpr("CASE WHEN date IS NULL THEN 0 ELSE 1 END, date").Scan(ctx, &as)
	return as, dbErr("read valuations", err)
}

// balanceOn is the balance at the end of day d (see the rule above).
func balanceOn(l *ledger, anchors []anchor, opening money.Amount, d civil.Date) *big.Int {
	last := -1
	for i, a := range anchors {
		if a.day() <= d {
			last = i
		}
	}
	switch {
	case last >= 0:
		b := big.NewInt(int64(anchors[last].Amount))
		return b.Add(b, l.moved(anchors[last].day(), d))
	case len(anchors) > 0:
		b := big.NewInt(int64(anchors[0].Amount))
		return b.Sub(b, l.moved(d, anchors[0].day()))
	default:
		b := big.NewInt(int64(opening))
		return b.Add(b, l.moved("", d))
	}
}

// adjustments is each anchor's step: none for the first, which the
// history before it is counted back from; for a later one, its amount
// less the balance the one before it and the transactions between make.
func adjustments(l *ledger, anchors []anchor) ([]*big.Int, bool) {
	out := make([]*big.Int, len(anchors))
	ok := true
	for i, a := range anchors {
		adj := new(big.Int)
		if i > 0 {
			prev := anchors[i-1]
			adj.SetInt64(int64(a.Amount))
			adj.Sub(adj, big.NewInt(int64(prev.Amount)))
			adj.Sub(adj, l.moved(prev.day(), a.day()))
		}
		ok = ok && fits(adj)
		out[i] = adj
	}
	return out, ok
}

// fits reports whether v fits an Amount (whose negation must fit too).
func fits(v *big.Int) bool { return v.CmpAbs(big.NewInt(math.MaxInt64)) <= 0 }

// BalanceOn is account accountID's balance at the end of day, as the
// account shows it (what is owed, for a debt), computed now from its
// valuations and transactions (not from the stored balance).
func (s *Store) BalanceOn(ctx context.Context, familyID, accountID uuid.UUID, day civil.Date) (money.Amount, error) {
	a, err := s.Account(ctx, familyID, accountID)
	if err != nil {
		return 0, err
	}
	l, err := s.readLedger(ctx, a)
	if err != nil {
		return 0, err
	}
	anchors, err := s.readAnchors(ctx, familyID, accountID)
	if err != nil {
		return 0, err
	}
	b := balanceOn(l, anchors, a.OpeningBalance, day)
	if !fits(b) {
		return 0, fmt.Errorf("models: balance of account %s on %s: %w", accountID, day, ErrBalanceOverflow)
	}
	return money.Amount(b.Int64()), nil
}

// recalculate rewrites account id's balance as of today and its
// valuations' adjustments, inside the caller's transaction (which holds
// the account, see lockAccount). A figure that does not fit an Amount is
// not written: the account keeps its last balance, marked
// BalanceOverflow, and ErrBalanceOverflow is returned.
func (s *Store) recalculate(ctx context.Context, familyID, id uuid.UUID) error {
	a := new(Account)
	q := s.db.NewSelect().Model(a).Column("id", "family_id", "account_type", "currency", "opening_balance").
		Where("a.family_id = ?", familyID).Where("a.id = ?", id)
	if s.Postgres() {
		// Held FOR UPDATE (again, for most callers): no write of the
		// account commits while the walk reads (see lockAccount).
		q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return dbErr("recalculate balance", err)
	}
	if s.Postgres() {
		// The walk counts every row the moves waiting for the account
		// came from (none is being written elsewhere while the account
		// is held), so they are done with; left, a refresh would apply
		// them a second time.
		_, err := s.db.NewDelete().Table("balance_moves_pending").Where("family_id = ?", familyID).
			Where("account_id = ?", id).Exec(ctx)
		if err != nil {
			return dbErr("recalculate balance", err)
		}
	}
	l, err := s.readLedger(ctx, a)
	if err != nil {
		return err
	}
	anchors, err := s.readAnchors(ctx, familyID, id)
	if err != nil {
		return err
	}
	now := s.now()
	balance := balanceOn(l, anchors, a.OpeningBalance, civil.DateOf(now))
	adjs, ok := adjustments(l, anchors)
	up := s.db.NewUpdate().Model((*Account)(nil)).Where("family_id = ?", familyID).Where("id = ?", id)
	if !ok || !fits(balance) {
		if _, err := up.Set("balance_error = ?", BalanceOverflow).Exec(ctx); err != nil {
			return dbErr("recalculate balance", err)
		}
		return fmt.Errorf("models: recalculate balance of account %s: %w", id, ErrBalanceOverflow)
	}
	for i, an := range anchors {
		if adj := money.Amount(adjs[i].Int64()); adj != an.Adjustment {
			_, err := s.db.NewUpdate().Model((*Valuation)(nil)).Set("adjustment = ?", adj).
				Where("family_id = ?", familyID).Where("id = ?", an.ID).Exec(ctx)
			if err != nil {
				return dbErr("recalculate balance", err)
			}
		}
	}
	b := money.Amount(balance.Int64())
	_, err = up.Set("balance = ?", b).Set("cash_balance = ?", cashPart(a.AccountType, b)).
		Set("balance_error = NULL").Set("balance_updated_at = ?", now).Exec(ctx)
	return dbErr("recalculate balance", err)
}

// RecalculateBalance rewrites an account's balance as of today from its
// valuations and transactions (see the rule at the top of this file),
// and the adjustments the reports add on each valuation's day. Running it
// again gives the same result: it is safe to repeat. A balance that does
// not fit an Amount is not written: the account keeps its last balance,
// marked BalanceOverflow, and ErrBalanceOverflow is returned, so that
// nobody retries what cannot succeed until the transactions change.
func (s *Store) RecalculateBalance(ctx context.Context, familyID, id uuid.UUID) error {
	var overflow error
	err := s.RunInTx(ctx, func(tx *Store) error {
		// Two recalculations of one account take turns, so that an older
		// sum never overwrites a newer one. (SQLite's transactions already
		// take the write lock up front.)
		if _, err := tx.lockAccount(ctx, familyID, id); err != nil {
			return err
		}
		if err := tx.recalculate(ctx, familyID, id); errors.Is(err, ErrBalanceOverflow) {
			overflow = err // the mark is written: commit it
		} else if err != nil {
			return err
		}
		return nil
	})
	if err == nil {
		err = overflow
	}
	return err
}
