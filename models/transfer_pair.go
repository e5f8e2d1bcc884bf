package models

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/money"
)

const (
	// TransferMatchDays is how far apart in days the two sides of a
	// transfer may be for "mark as transfer" to pair them on its own and
	// for a pair to be suggested: a bank books the two a day or two apart.
	TransferMatchDays = 3
	// TransferPairDays is how far apart two transactions a person pairs
	// may be, the reference's limit for a confirmed transfer.
	TransferPairDays = 30
)

// RejectedTransfer is a pair of transactions a person said is not a
// transfer (unpaired, or a suggestion turned down): suggestions and the
// "mark as transfer" rule skip it.
type RejectedTransfer struct {
	bun.BaseModel `bun:"table:rejected_transfers,alias:rt"`

	FamilyID             uuid.UUID `bun:"family_id"`
	InflowTransactionID  uuid.UUID `bun:"inflow_transaction_id,pk"`
	OutflowTransactionID uuid.UUID `bun:"outflow_transaction_id,pk"`
	CreatedAt            time.Time `bun:"created_at"`
}

// notPairedSQL holds for a transaction t of family ?0 that is in no
// transfer.
const notPairedSQL = `t.id NOT IN (SELECT tr.inflow_transaction_id FROM transfers tr WHERE tr.family_id = ?0)
  AND t.id NOT IN (SELECT tr.outflow_transaction_id FROM transfers tr WHERE tr.family_id = ?0)`

// pairSide reads what pairing looks at of one live transaction.
func (s *Store) pairSide(ctx context.Context, familyID, id uuid.UUID) (*Transaction, error) {
	t := new(Transaction)
	err := s.db.NewSelect().Model(t).Column("id", "account_id", "date", "amount", "currency", "name", "excluded", "excluded_reason", "split_parent_id").
		Where("t.family_id = ?", familyID).Where("t.id = ?", id).Where("t.deleted_at IS NULL").Scan(ctx)
	return t, dbErr("read transfer side", err)
}

// paired reports whether transaction id is a side of a transfer.
func (s *Store) paired(ctx context.Context, familyID, id uuid.UUID) (bool, error) {
	n, err := s.db.NewSelect().Model((*Transfer)(nil)).Where("family_id = ?", familyID).
		Where("(inflow_transaction_id = ? OR outflow_transaction_id = ?)", id, id).Count(ctx)
	return n > 0, dbErr("check transfer", err)
}

// daysApart is how many days lie between two dates.
func daysApart(a, b civil.Date) int {
	d := a.Time().Sub(b.Time())
	if d < 0 {
		d = -d
	}
	return int(d / (24 * time.Hour))
}

// PairTransfer makes two existing transactions of the family the two
// sides of one transfer, as the reference's PATCH
// /transactions/{id}/transfer does: the one of money in (a negative
// amount) is the inflow. No row is written or changed besides the link,
// so no balance moves. Either transaction missing is ErrNotFound; one
// already paired, one account for both, amounts that do not mirror each
// other, or dates more than TransferPairDays apart an *InvalidError.
func (s *Store) PairTransfer(ctx context.Context, familyID, id, otherID uuid.UUID) (uuid.UUID, error) {
	trID := NewID()
	err := s.RunInTx(ctx, func(tx *Store) error {
		a, err := tx.pairSide(ctx, familyID, id)
		if err != nil {
			return err
		}
		b, err := tx.pairSide(ctx, familyID, otherID)
		if err != nil {
			return err
		}
		for _, side := range []struct {
			id  uuid.UUID
			msg string
		}{{a.ID, "Transaction is already linked to a transfer"}, {b.ID, "Other transaction is already linked to a transfer"}} {
			if in, err := tx.paired(ctx, familyID, side.id); err != nil || in {
				if err != nil {
					return err
				}
				return Invalid(side.msg)
			}
		}
		// A split parent counts through its parts, and a part is a share
		// of one payment: neither is one side of a transfer.
		for _, side := range []*Transaction{a, b} {
			if side.IsSplitParent() || side.SplitParentID != nil {
				return Invalid("A split transaction or a part of one cannot be a transfer")
			}
		}
		in, out := b, a
		if a.Amount < 0 {
			in, out = a, b
		}
		var problems []string
		if a.ID == b.ID || a.AccountID == b.AccountID {
			problems = append(problems, "Transfer must be between two different accounts")
		}
		if in.Amount >= 0 || out.Amount <= 0 || in.Currency == out.Currency && in.Amount+out.Amount != 0 {
			problems = append(problems, "Transfer must have opposite amounts: the same amount leaving one account and arriving in the other")
		}
		if in.Currency != out.Currency && in.Amount < 0 && out.Amount > 0 {
			msg, err := tx.crossCurrencyProblem(ctx, familyID, out, in)
			if err != nil {
				return err
			}
			if msg != "" {
				problems = append(problems, msg)
			}
		}
		if daysApart(in.Date, out.Date) > TransferPairDays {
			problems = append(problems, fmt.Sprintf("Transfer transactions must be within %d days of each other", TransferPairDays))
		}
		if len(problems) > 0 {
			return Invalid(problems...)
		}
		return tx.linkTransfer(ctx, familyID, trID, in.ID, out.ID)
	})
	return trID, err
}

// TransferRateTolerance is how far, in percent, the rate two sides in
// different currencies imply may lie from the family's rate of the
// outflow's day for them to pair: a bank's rate and fee differ a little
// from the market's.
const TransferRateTolerance = 5

// crossCurrencyProblem checks two sides in different currencies against
// the family's rate of the outflow's day: the arrived amount must be
// within TransferRateTolerance of the sent one converted. Without any
// rate nothing can be checked, and the person's word stands.
func (s *Store) crossCurrencyProblem(ctx context.Context, familyID uuid.UUID, out, in *Transaction) (string, error) {
	q, ok, err := s.Quote(ctx, familyID, out.Currency, in.Currency, out.Date)
	if err != nil || !ok {
		return "", err
	}
	implied, _ := money.RateBetween(out.Amount, in.Amount)
	if implied.Within(q.Rate, TransferRateTolerance) {
		return "", nil
	}
	return fmt.Sprintf("Transfer amounts imply %s %s per %s, more than %d%% from the rate of %s (%s)",
		implied.String(), in.Currency, out.Currency, TransferRateTolerance, q.Date, q.Rate.String()), nil
}

// linkTransfer writes the link of a transfer between two stored rows and
// forgets that the pair was ever turned down.
func (s *Store) linkTransfer(ctx context.Context, familyID, id, inflowID, outflowID uuid.UUID) error {
	now := s.now()
	tr := &Transfer{ID: id, FamilyID: familyID, InflowTransactionID: inflowID, OutflowTransactionID: outflowID,
		Status: "confirmed", CreatedAt: now, UpdatedAt: now}
	if _, err := s.db.NewInsert().Model(tr).Exec(ctx); err != nil {
		return dbErr("pair transfer", err)
	}
	_, err := s.db.NewDelete().Model((*RejectedTransfer)(nil)).Where("family_id = ?", familyID).
		Where("inflow_transaction_id = ?", inflowID).Where("outflow_transaction_id = ?", outflowID).Exec(ctx)
	return dbErr("forget rejected transfer", err)
}

// UnpairTransfer undoes a transfer but keeps both transactions, each
// counted again as income or spending; the pair is remembered as not a
// transfer, so it is not suggested or matched again. No balance moves.
func (s *Store) UnpairTransfer(ctx context.Context, familyID, id uuid.UUID) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		var tr Transfer
		err := tx.db.NewSelect().Model(&tr).Column("id", "inflow_transaction_id", "outflow_transaction_id").
			Where("tr.family_id = ?", familyID).Where("tr.id = ?", id).Scan(ctx)
		if err != nil {
			return dbErr("get transfer", err)
		}
		if err := tx.deleteOne(ctx, (*Transfer)(nil), familyID, id, "unpair transfer"); err != nil {
			return err
		}
		return tx.rejectPair(ctx, familyID, tr.InflowTransactionID, tr.OutflowTransactionID)
	})
}

func (s *Store) rejectPair(ctx context.Context, familyID, inflowID, outflowID uuid.UUID) error {
	_, err := s.db.NewInsert().Model(&RejectedTransfer{FamilyID: familyID, InflowTransactionID: inflowID,
		OutflowTransactionID: outflowID, CreatedAt: s.now()}).
		On("CONFLICT (inflow_transaction_id, outflow_transaction_id) DO NOTHING").Exec(ctx)
	return dbErr("reject transfer", err)
}

// RejectTransferPair records that a suggested pair is not a transfer.
// Both transactions must be the family's (ErrNotFound otherwise).
func (s *Store) RejectTransferPair(ctx context.Context, familyID, outflowID, inflowID uuid.UUID) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		for _, id := range []uuid.UUID{outflowID, inflowID} {
			if _, err := tx.pairSide(ctx, familyID, id); err != nil {
				return err
			}
		}
		return tx.rejectPair(ctx, familyID, inflowID, outflowID)
	})
}

// otherSide finds the other side of a transfer already in account
// accountID for transaction t: the mirror amount in the same currency
// within TransferMatchDays, live, not excluded, in no transfer and not
// turned down as t's pair. The nearest date wins, then the oldest row.
func (s *Store) otherSide(ctx context.Context, familyID, accountID uuid.UUID, t *Transaction) (*Transaction, error) {
	from := civil.DateOf(t.Date.Time().AddDate(0, 0, -TransferMatchDays))
	to := civil.DateOf(t.Date.Time().AddDate(0, 0, TransferMatchDays))
	rejected := "t.id NOT IN (SELECT rt.inflow_transaction_id FROM rejected_transfers rt WHERE rt.family_id = ?0 AND rt.outflow_transaction_id = ?1)"
	if t.Amount < 0 { // t is the inflow: the other side is an outflow
		rejected = "t.id NOT IN (SELECT rt.outflow_transaction_id FROM rejected_transfers rt WHERE rt.family_id = ?0 AND rt.inflow_transaction_id = ?1)"
	}
	var found []Transaction
	err := s.db.NewSelect().Model(&found).Column("id", "account_id", "date", "amount", "currency").
		Where("t.family_id = ?", familyID).Where("t.account_id = ?", accountID).
		Where("t.date >= ?", from).Where("t.date <= ?", to).
		Where("t.amount = ?", -t.Amount).Where("t.currency = ?", t.Currency).
		Where("t.deleted_at IS NULL").Where("NOT t.excluded").Where(notSplitSQL).
		Where(notPairedSQL, familyID).Where(rejected, familyID, t.ID).
		OrderExpr("t.created_at, t.id").Limit(20).Scan(ctx)
	if err != nil {
		return nil, dbErr("find transfer side", err)
	}
	var best *Transaction
	for i := range found {
		if best == nil || daysApart(found[i].Date, t.Date) < daysApart(best.Date, t.Date) {
			best = &found[i]
		}
	}
	return best, nil
}

// TransferSuggestion is a pair of transactions that look like the two
// sides of one transfer, for a person to confirm.
type TransferSuggestion struct {
	Outflow *Transaction // money out, with its account
	Inflow  *Transaction // the same amount in, with its account
}

// SuggestedTransfers lists at most limit pairs of the family's
// transactions that look like one transfer, newest first, each side with
// its account: the same amount leaving one active account and arriving in
// another within TransferMatchDays, neither side excluded, deleted or
// paired, the pair never turned down. Each transaction is in one pair at
// most.
//
// It reads the candidates newest first and matches them in one pass,
// keeping only the last few days by amount, and stops at limit pairs: a
// join of the transactions with themselves on the amount costs minutes
// on 40,000 rows where the planner has no statistics yet (PostgreSQL
// right after an import) or no hash join (SQLite).
func (s *Store) SuggestedTransfers(ctx context.Context, familyID uuid.UUID, limit int) ([]TransferSuggestion, error) {
	var turnedDown []RejectedTransfer
	if err := s.db.NewSelect().Model(&turnedDown).Column("inflow_transaction_id", "outflow_transaction_id").
		Where("rt.family_id = ?", familyID).Scan(ctx); err != nil {
		return nil, dbErr("read rejected transfers", err)
	}
	rejected := make(map[[2]uuid.UUID]bool, len(turnedDown))
	for _, r := range turnedDown {
		rejected[[2]uuid.UUID{r.InflowTransactionID, r.OutflowTransactionID}] = true
	}
	rows, err := s.db.NewSelect().Model((*Transaction)(nil)).Column("t.id", "t.account_id", "t.date", "t.amount", "t.currency").
		Join("JOIN accounts AS a ON a.id = t.account_id AND a.family_id = t.family_id").
		Where("t.family_id = ?", familyID).Where("a.status = ?", AccountActive).
		Where("t.deleted_at IS NULL").Where("NOT t.excluded").Where("t.amount <> 0").Where(notSplitSQL).
		Where(notPairedSQL, familyID).OrderExpr("t.date DESC, t.created_at DESC, t.id DESC").Rows(ctx) // transactions_family_order_idx
	if err != nil {
		return nil, dbErr("suggest transfers", err)
	}
	defer rows.Close()
	type side struct {
		id, account uuid.UUID
		date        civil.Date
		amount      int64
		currency    string
		used        bool
	}
	type key struct {
		currency string
		amount   int64
	}
	recent := map[key][]*side{} // by amount, newest first
	var pairs [][2]uuid.UUID    // outflow, inflow
	for len(pairs) < limit && rows.Next() {
		r := new(side)
		if err := rows.Scan(&r.id, &r.account, &r.date, &r.amount, &r.currency); err != nil {
			return nil, dbErr("suggest transfers", err)
		}
		k := key{r.currency, -r.amount}
		bucket := recent[k]
		for len(bucket) > 0 && daysApart(bucket[0].date, r.date) > TransferMatchDays {
			bucket = bucket[1:] // newer than the window: no later row can pair with it
		}
		recent[k] = bucket
		for _, w := range bucket {
			if w.used || w.account == r.account {
				continue
			}
			out, in := w, r
			if r.amount > 0 {
				out, in = r, w
			}
			if rejected[[2]uuid.UUID{in.id, out.id}] {
				continue
			}
			w.used, r.used = true, true
			pairs = append(pairs, [2]uuid.UUID{out.id, in.id})
			break
		}
		if !r.used {
			own := key{r.currency, r.amount}
			recent[own] = append(recent[own], r)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("suggest transfers", err)
	}
	if len(pairs) == 0 {
		return nil, nil
	}
	ids := make([]uuid.UUID, 0, 2*len(pairs))
	for _, p := range pairs {
		ids = append(ids, p[0], p[1])
	}
	var ts []Transaction
	if err := s.db.NewSelect().Model(&ts).Relation("Account").Where("t.family_id = ?", familyID).
		Where("t.id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		return nil, dbErr("read suggested transfers", err)
	}
	byID := map[uuid.UUID]*Transaction{}
	for i := range ts {
		byID[ts[i].ID] = &ts[i]
	}
	out := make([]TransferSuggestion, 0, len(pairs))
	for _, p := range pairs {
		if o, i := byID[p[0]], byID[p[1]]; o != nil && i != nil {
			out = append(out, TransferSuggestion{Outflow: o, Inflow: i})
		}
	}
	return out, nil
}

// TransferCandidates lists the transactions a person may pair with
// transaction id (see PairTransfer): in another account, the mirror
// amount, within TransferPairDays, live and unpaired; nearest date first.
func (s *Store) TransferCandidates(ctx context.Context, familyID, id uuid.UUID) ([]Transaction, error) {
	t, err := s.pairSide(ctx, familyID, id)
	if err != nil {
		return nil, err
	}
	if t.IsSplitParent() || t.SplitParentID != nil {
		return []Transaction{}, nil // neither side of a transfer (see PairTransfer)
	}
	from := civil.DateOf(t.Date.Time().AddDate(0, 0, -TransferPairDays))
	to := civil.DateOf(t.Date.Time().AddDate(0, 0, TransferPairDays))
	var ts []Transaction
	err = s.db.NewSelect().Model(&ts).Relation("Account").
		Where("t.family_id = ?", familyID).Where("t.account_id <> ?", t.AccountID).
		Where("t.date >= ?", from).Where("t.date <= ?", to).
		Where("t.amount = ?", -t.Amount).Where("t.currency = ?", t.Currency).
		Where("t.deleted_at IS NULL").Where(notSplitSQL).Where(notPairedSQL, familyID).
		OrderExpr("t.date DESC, t.id").Limit(50).Scan(ctx)
	if err != nil {
		return nil, dbErr("list transfer candidates", err)
	}
	other, err := s.crossCurrencyCandidates(ctx, familyID, t, from, to)
	if err != nil {
		return nil, err
	}
	ts = append(ts, other...)
	sortByDistance(ts, t.Date)
	return ts, nil
}

// crossCurrencyCandidates lists the rows of other currencies that
// PairTransfer would take with t: the other direction, between from and
// to, live and unpaired, whose implied rate is within
// TransferRateTolerance of the family's rate of the outflow's day. A
// currency without any rate offers none (there is nothing to match on).
func (s *Store) crossCurrencyCandidates(ctx context.Context, familyID uuid.UUID, t *Transaction, from, to civil.Date) ([]Transaction, error) {
	var ts []Transaction
	q := s.db.NewSelect().Model(&ts).Relation("Account").
		Where("t.family_id = ?", familyID).Where("t.account_id <> ?", t.AccountID).
		Where("t.date >= ?", from).Where("t.date <= ?", to).Where("t.currency <> ?", t.Currency).
		Where("t.deleted_at IS NULL").Where(notSplitSQL).Where(notPairedSQL, familyID)
	if t.Amount > 0 {
		q = q.Where("t.amount < 0")
	} else {
		q = q.Where("t.amount > 0")
	}
	if err := q.OrderExpr("t.date DESC, t.id").Limit(50).Scan(ctx); err != nil {
		return nil, dbErr("list transfer candidates", err)
	}
	kept := ts[:0]
	for _, c := range ts {
		out, in := t, &c
		if t.Amount < 0 {
			out, in = &c, t
		}
		q, ok, err := s.Quote(ctx, familyID, out.Currency, in.Currency, out.Date)
		if err != nil {
			return nil, err
		}
		if implied, _ := money.RateBetween(out.Amount, in.Amount); ok && implied.Within(q.Rate, TransferRateTolerance) {
			kept = append(kept, c)
		}
	}
	return kept, nil
}

// sortByDistance orders ts by how far each lies from day d, nearest first.
func sortByDistance(ts []Transaction, d civil.Date) {
	slices.SortStableFunc(ts, func(a, b Transaction) int { return daysApart(a.Date, d) - daysApart(b.Date, d) })
}

// SetTransferNotes replaces a transfer's notes (nil: none).
func (s *Store) SetTransferNotes(ctx context.Context, familyID, id uuid.UUID, notes *string) error {
	res, err := s.db.NewUpdate().Model((*Transfer)(nil)).Set("notes = ?", notes).Set("updated_at = ?", s.now()).
		Where("family_id = ?", familyID).Where("id = ?", id).Exec(ctx)
	return affectedOne(res, err, "update transfer notes")
}
