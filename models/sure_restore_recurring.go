package models

import (
	"context"
	"errors"
	"strings"

	"coffer/models/importfile"
	"coffer/models/recur"
)

// recurring restores a "RecurringTransaction" line: the reference's
// (monthly, as its series all are) or coffer's own (with its cadence). A
// series the family already has (the same payee key and cadence) is
// matched, not made twice: the detector would otherwise keep two. A
// series of a merchant the file does not hold (the reference exports only
// the family's own) keeps its name, and is left out when it has none.
func (r *restore) recurring(ctx context.Context, v *importfile.SureRecurring) error {
	rt := &RecurringTransaction{FamilyID: r.familyID, AccountID: r.optID("Account", v.AccountID),
		MerchantID: r.optID("Merchant", v.MerchantID), Name: v.Name, Amount: v.Amount, Currency: strings.ToUpper(v.Currency),
		ExpectedDay: v.ExpectedDay, LastDate: v.LastDate, NextDate: v.NextDate, Status: v.Status,
		Occurrences: v.Occurrences, Manual: v.Manual, AmountMin: v.AmountMin, AmountMax: v.AmountMax,
		Cadence: v.Cadence, PreviousAmount: v.PreviousAmount, Autopay: v.Autopay, Notes: v.Notes}
	if rt.MerchantID == nil && strings.TrimSpace(rt.Name) == "" {
		r.sum.Skipped["recurring_transactions"]++
		return nil
	}
	if rt.Cadence == "" {
		rt.Cadence = string(recur.Monthly)
	}
	if rt.ExpectedDay == 0 && v.NextDate != "" {
		rt.ExpectedDay = v.NextDate.Time().Day()
	}
	key := recur.Key(rt.MerchantID, rt.Name)
	n, err := r.tx.db.NewSelect().Model((*RecurringTransaction)(nil)).
		Where("rt.family_id = ?", r.familyID).Where("rt.match_key = ?", key).Where("rt.cadence = ?", rt.Cadence).Count(ctx)
	if err != nil {
		return dbErr("restore: match recurring transaction", err)
	}
	if n > 0 {
		r.sum.Matched["recurring_transactions"]++
		return nil
	}
	if err := r.tx.CreateRecurringTransaction(ctx, rt); err != nil {
		var bad *InvalidError
		if errors.As(err, &bad) {
			return problem(strings.Join(bad.Problems, "; "))
		}
		return err
	}
	r.mapID("RecurringTransaction", v.ID, rt.ID)
	r.sum.Created["recurring_transactions"]++
	return nil
}
