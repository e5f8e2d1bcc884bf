package jobs

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// digestData is the weekly digest's facts, taken when it is decided (the
// email tells of the week as it stood then): last week's spending by
// category beside the month's budget, the coming week's bills, and what
// waits for a person (recurring items suggested, splits to review).
func (h *Handlers) digestData(ctx context.Context, familyID uuid.UUID, week models.Period, today civil.Date,
	bills []models.RecurringTransaction) (map[string]any, error) {
	fam, err := h.Store.Family(ctx, familyID)
	if err != nil {
		return nil, err
	}
	totals, err := h.Store.CategoryTotals(ctx, familyID, week)
	if err != nil {
		return nil, err
	}
	budgeted := map[uuid.UUID]models.BudgetLine{}
	b, err := h.Store.BudgetForMonth(ctx, familyID, week.To)
	switch {
	case errors.Is(err, models.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		lines, _, err := h.Store.BudgetLines(ctx, familyID, models.BudgetLineFilter{BudgetID: &b.ID}, models.Page{Number: 1, Size: 1000})
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			budgeted[l.CategoryID] = l
		}
	}
	var spent money.Amount
	var cats []map[string]any
	for _, t := range totals {
		if t.Classification != "expense" {
			continue
		}
		spent += t.Total
		row := map[string]any{"category": "Uncategorised", "spent": t.Total.String()}
		if t.Name != nil {
			row["category"] = *t.Name
		}
		if t.CategoryID != nil {
			if l, ok := budgeted[*t.CategoryID]; ok && l.BudgetedSpending > 0 {
				row["budgeted_month"], row["spent_month"] = l.BudgetedSpending.String(), l.ActualSpending.String()
			}
		}
		cats = append(cats, row)
	}
	next := civil.DateOf(today.Time().AddDate(0, 0, 7))
	var coming []map[string]any
	for _, r := range bills {
		if r.NextDate <= next {
			coming = append(coming, map[string]any{"name": r.Name, "amount": r.Amount.String(), "currency": r.Currency,
				"due_date": string(r.NextDate)})
		}
	}
	_, suggested, err := h.Store.RecurringTransactions(ctx, familyID, models.RecurringFilter{Status: models.RecurringSuggested},
		models.Page{Number: 1, Size: 1})
	if err != nil {
		return nil, err
	}
	splits, err := h.Store.SplitsNeedingReview(ctx, familyID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"from": string(week.From), "to": string(week.To), "currency": fam.Currency, "spent": spent.String(),
		"categories": cats, "bills": coming, "suggested_recurring": suggested, "splits_to_review": splits}, nil
}
