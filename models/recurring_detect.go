package models

import (
	"context"
	"time"

	"github.com/google/uuid"

	"coffer/models/civil"
	"coffer/models/money"
	"coffer/models/recur"
)

// recurringHistory is how far back the detector reads: two years, so a
// yearly series has its three occurrences.
const recurringHistoryDays = 2*366 + 14

// recurringTxnsSQL reads what the detector needs of the family's counted
// transactions since ?1: not excluded, not deleted, not pending, not a leg
// of a transfer (notTransferSQL explains the NOT IN).
const recurringTxnsSQL = `SELECT t.name, t.merchant_id, t.account_id, t.amount, t.currency, t.date
FROM transactions t
WHERE t.family_id = ?0 AND t.date >= ?1
  AND t.deleted_at IS NULL AND NOT t.excluded AND NOT t.pending` + notTransferSQL

type recurringTxn struct {
	Name       string       `bun:"name"`
	MerchantID *uuid.UUID   `bun:"merchant_id"`
	AccountID  uuid.UUID    `bun:"account_id"`
	Amount     money.Amount `bun:"amount"`
	Currency   string       `bun:"currency"`
	Date       civil.Date   `bun:"date"`
}

// DetectResult counts what DetectRecurring did.
type DetectResult struct {
	Found, Created, Updated int
}

// DetectRecurring finds the family's recurring series in its last two
// years of transactions and keeps them: a series new to the family is
// stored as suggested; one it already has (same match key and cadence,
// suggested, active, paused or inactive, manual or not) gets the newest
// dates, count and, unless manual, amount; one it has ended (cancelled or
// dismissed) is left alone and never made again. Running it twice changes
// nothing the second time.
func (s *Store) DetectRecurring(ctx context.Context, familyID uuid.UUID) (DetectResult, error) {
	var res DetectResult
	now := s.now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	since := civil.DateOf(today.AddDate(0, 0, -recurringHistoryDays))
	var rows []recurringTxn
	if err := s.db.NewRaw(recurringTxnsSQL, familyID, since).Scan(ctx, &rows); err != nil {
		return res, dbErr("read transactions for recurring", err)
	}
	txns := make([]recur.Txn, len(rows))
	for i, r := range rows {
		txns[i] = recur.Txn{Name: r.Name, MerchantID: r.MerchantID, AccountID: r.AccountID, Amount: int64(r.Amount),
			Currency: r.Currency, Date: r.Date.Time()}
	}
	rows = nil
	found := recur.Detect(txns, today)
	res.Found = len(found)
	if len(found) == 0 {
		return res, nil
	}
	err := s.RunInTx(ctx, func(tx *Store) error {
		var existing []RecurringTransaction
		if err := tx.db.NewSelect().Model(&existing).Where("rt.family_id = ?", familyID).Scan(ctx); err != nil {
			return dbErr("read recurring transactions", err)
		}
		have := map[[2]string]*RecurringTransaction{}
		for i := range existing {
			e := &existing[i]
			k := [2]string{e.MatchKey, e.Cadence}
			// An ended row wins: it is the tombstone that keeps a dismissed
			// series from coming back.
			if have[k] == nil || e.Status == RecurringEnded {
				have[k] = e
			}
		}
		for _, sg := range found {
			e := have[[2]string{sg.Key, string(sg.Cadence)}]
			switch {
			case e == nil:
				if err := tx.createSuggested(ctx, familyID, sg); err != nil {
					return err
				}
				res.Created++
			case e.Status == RecurringEnded:
			default:
				changed, err := tx.refreshRecurring(ctx, e, sg)
				if err != nil {
					return err
				}
				if changed {
					res.Updated++
				}
			}
		}
		return nil
	})
	return res, err
}

func (s *Store) createSuggested(ctx context.Context, familyID uuid.UUID, sg recur.Suggestion) error {
	last := civil.DateOf(sg.Last)
	r := &RecurringTransaction{
		ID: NewID(), FamilyID: familyID, AccountID: sg.AccountID, MerchantID: sg.MerchantID,
		Name: sg.Name, MatchKey: sg.Key, Amount: money.Amount(sg.Amount), Currency: sg.Currency,
		Cadence: string(sg.Cadence), ExpectedDay: sg.ExpectedDay, LastDate: &last, NextDate: civil.DateOf(sg.Next),
		Occurrences: sg.Count, Status: RecurringSuggested,
	}
	setDetectedAmounts(r, sg)
	if len(r.Name) > 255 {
		r.Name = r.Name[:255]
	}
	if r.Name == "" {
		r.Name = sg.Key
	}
	r.CreatedAt = s.now()
	r.UpdatedAt = r.CreatedAt
	_, err := s.db.NewInsert().Model(r).Exec(ctx)
	return dbErr("create suggested recurring transaction", err)
}

func setDetectedAmounts(r *RecurringTransaction, sg recur.Suggestion) {
	r.Amount = money.Amount(sg.Amount)
	lo, hi := money.Amount(sg.Min), money.Amount(sg.Max)
	r.AmountMin, r.AmountMax = &lo, &hi
	r.PreviousAmount = nil
	if sg.PreviousAmount != nil {
		p := money.Amount(*sg.PreviousAmount)
		r.PreviousAmount = &p
	}
}

// refreshRecurring brings an existing series up to what the detector saw,
// when it saw something newer; it reports whether it wrote.
func (s *Store) refreshRecurring(ctx context.Context, e *RecurringTransaction, sg recur.Suggestion) (bool, error) {
	last := civil.DateOf(sg.Last)
	if e.LastDate != nil && *e.LastDate >= last {
		return false, nil
	}
	e.LastDate, e.NextDate, e.Occurrences = &last, civil.DateOf(sg.Next), sg.Count
	cols := []string{"last_occurrence_date", "next_expected_date", "occurrence_count"}
	if !e.Manual {
		setDetectedAmounts(e, sg)
		e.ExpectedDay = sg.ExpectedDay
		cols = append(cols, "amount", "previous_amount", "expected_amount_min", "expected_amount_max", "expected_day_of_month")
	}
	e.UpdatedAt = s.now()
	return true, s.updateOne(ctx, e, e.FamilyID, e.ID, "refresh recurring transaction", cols...)
}
