package models_test

import (
	"errors"
	"testing"

	"coffer/models"
	"coffer/models/modelstest"
)

func TestSaveBudget(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := t.Context()
	alpha := modelstest.NewFamily(t, s, "alpha")
	beta := modelstest.NewFamily(t, s, "beta")
	for _, f := range []*modelstest.FamilyFixture{alpha, beta} {
		if err := s.CreateCategory(ctx, &models.Category{FamilyID: f.Family.ID, Name: "Food", Color: "#112233", Classification: "expense"}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := s.EnsureBudget(ctx, alpha.Family.ID, "2026-11-05")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := s.EnsureBudget(ctx, beta.Family.ID, "2026-11-05")
	if err != nil {
		t.Fatal(err)
	}
	lines := func(budget *models.BudgetSummary) []models.BudgetLine {
		ls, _, err := s.BudgetLines(ctx, budget.FamilyID, models.BudgetLineFilter{BudgetID: &budget.ID}, models.Page{Number: 1, Size: 100})
		if err != nil || len(ls) != 1 {
			t.Fatalf("budget lines: %v %v", ls, err)
		}
		return ls
	}
	mine, other := lines(b)[0], lines(theirs)[0]
	total := models.Amount(500_0000)
	b.BudgetedSpending = &total

	// A row of another family's budget: nothing is written.
	err = s.SaveBudget(ctx, &b.Budget, []models.BudgetAmount{{ID: mine.ID, Budgeted: 200_0000}, {ID: other.ID, Budgeted: 1}})
	if !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("foreign row: %v", err)
	}
	if got := lines(b)[0]; got.BudgetedSpending != 0 {
		t.Fatalf("half-written budget: %v", got.BudgetedSpending)
	}
	if err := s.SaveBudget(ctx, &b.Budget, []models.BudgetAmount{{ID: mine.ID, Budgeted: -1}}); err == nil {
		t.Fatal("a negative amount was saved")
	}
	if err := s.SaveBudget(ctx, &b.Budget, []models.BudgetAmount{{ID: mine.ID, Budgeted: 200_0000, Rollover: true}}); err != nil {
		t.Fatal(err)
	}
	if got := lines(b)[0]; got.BudgetedSpending != 200_0000 || !got.RolloverEnabled {
		t.Fatalf("saved line: %+v", got.BudgetCategory)
	}
}
