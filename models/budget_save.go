package models

import (
	"context"

	"github.com/google/uuid"

	"coffer/models/money"
)

// BudgetAmount is what a budget gives one of its category rows.
type BudgetAmount struct {
	ID       uuid.UUID // the budget category row
	Budgeted money.Amount
	Rollover bool
}

// SaveBudget writes a whole budget form in one transaction: the budget's
// totals and every category row's amount and carry-over choice. A row of
// another budget or family is ErrNotFound and nothing is written.
func (s *Store) SaveBudget(ctx context.Context, b *Budget, lines []BudgetAmount) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.UpdateBudget(ctx, b); err != nil {
			return err
		}
		for _, l := range lines {
			if l.Budgeted < 0 {
				return Invalid("Budgeted spending must not be negative")
			}
			res, err := tx.db.NewUpdate().Model((*BudgetCategory)(nil)).
				Set("budgeted_spending = ?", l.Budgeted).Set("rollover_enabled = ?", l.Rollover).Set("updated_at = ?", tx.now()).
				Where("family_id = ?", b.FamilyID).Where("budget_id = ?", b.ID).Where("id = ?", l.ID).Exec(ctx)
			if err := affectedOne(res, err, "save budget category"); err != nil {
				return err
			}
		}
		return nil
	})
}
