package models_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/modelstest"
	"coffer/models/money"
)

func budgetLines(t *testing.T, l *ledger, budgetID uuid.UUID) map[uuid.UUID]models.BudgetLine {
	t.Helper()
	lines, n, err := l.s.BudgetLines(context.Background(), l.f.Family.ID, models.BudgetLineFilter{BudgetID: &budgetID}, models.Page{Number: 1, Size: 100})
	must(t, err)
	if n != len(lines) {
		t.Fatalf("count %d, %d lines", n, len(lines))
	}
	byCategory := map[uuid.UUID]models.BudgetLine{}
	for _, line := range lines {
		byCategory[line.CategoryID] = line
	}
	return byCategory
}

type lineWant struct {
	budgeted, display, actual, rolled, available string
	inherits                                     bool
}

func checkLine(t *testing.T, name string, got models.BudgetLine, want lineWant) {
	t.Helper()
	if got.BudgetedSpending != mustAmount(t, want.budgeted) || got.DisplayBudgetedSpending() != mustAmount(t, want.display) ||
		got.ActualSpending != mustAmount(t, want.actual) || got.RolledOver != mustAmount(t, want.rolled) ||
		got.Available != mustAmount(t, want.available) || got.InheritsParentBudget() != want.inherits {
		t.Errorf("%s: budgeted %v display %v actual %v rolled %v available %v inherits %v, want %+v", name, got.BudgetedSpending,
			got.DisplayBudgetedSpending(), got.ActualSpending, got.RolledOver, got.Available, got.InheritsParentBudget(), want)
	}
}

func TestBudgets(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	fam := l.f.Family.ID
	jan, err := l.s.EnsureBudget(ctx, fam, "2024-01-17")
	must(t, err)
	again, err := l.s.EnsureBudget(ctx, fam, "2024-01-01")
	must(t, err)
	if again.ID != jan.ID || jan.StartDate != "2024-01-01" || jan.EndDate != "2024-01-31" || jan.Initialized() || jan.Name() != "January 2024" ||
		jan.ActualSpending != mustAmount(t, "195.50") || jan.ActualIncome != mustAmount(t, "3000") || jan.Currency != "USD" {
		t.Fatalf("january %+v (again %v)", jan, again.ID)
	}
	lines := budgetLines(t, l, jan.ID)
	if len(lines) != 3 { // groceries, food, dining; never the income category
		t.Fatalf("lines %+v", lines)
	}

	set := func(b uuid.UUID, c *models.Category, amount string, rollover bool) {
		t.Helper()
		must(t, l.s.UpdateBudgetCategory(ctx, fam, budgetLines(t, l, b)[c.ID].ID, mustAmount(t, amount), rollover))
	}
	spending, income := mustAmount(t, "500"), mustAmount(t, "3000")
	jan.BudgetedSpending, jan.ExpectedIncome = &spending, &income
	must(t, l.s.UpdateBudget(ctx, &jan.Budget))
	set(jan.ID, l.groceries, "100", true)
	set(jan.ID, l.food, "200", true)
	lines = budgetLines(t, l, jan.ID)
	checkLine(t, "jan groceries", lines[l.groceries.ID], lineWant{"100", "100", "120", "0", "-20", false})
	checkLine(t, "jan food", lines[l.food.ID], lineWant{"200", "200", "45.50", "0", "154.50", false})
	checkLine(t, "jan dining", lines[l.dining.ID], lineWant{"0", "200", "45.50", "0", "154.50", true})
	jan, err = l.s.Budget(ctx, fam, jan.ID)
	must(t, err)
	if !jan.Initialized() || jan.AllocatedSpending != mustAmount(t, "300") || jan.AvailableToAllocate() != mustAmount(t, "200") ||
		jan.AvailableToSpend() != mustAmount(t, "304.50") {
		t.Errorf("january figures %+v", jan)
	}

	// February keeps January's carry-over choices, and copies its amounts.
	feb, err := l.s.EnsureBudget(ctx, fam, "2024-02-10")
	must(t, err)
	if lines = budgetLines(t, l, feb.ID); !lines[l.groceries.ID].RolloverEnabled || lines[l.dining.ID].RolloverEnabled || lines[l.groceries.ID].BudgetedSpending != 0 {
		t.Errorf("new february lines %+v", lines)
	}
	must(t, l.s.CopyPreviousBudget(ctx, fam, feb.ID))
	lines = budgetLines(t, l, feb.ID)
	checkLine(t, "feb groceries", lines[l.groceries.ID], lineWant{"100", "100", "0", "-20", "80", false})
	checkLine(t, "feb food", lines[l.food.ID], lineWant{"200", "200", "80", "154.50", "274.50", false})
	set(feb.ID, l.dining, "50", false)
	lines = budgetLines(t, l, feb.ID)
	checkLine(t, "feb food with a limited dining", lines[l.food.ID], lineWant{"200", "200", "80", "154.50", "224.50", false})
	checkLine(t, "feb dining", lines[l.dining.ID], lineWant{"50", "50", "0", "0", "50", false})
	if feb, err = l.s.Budget(ctx, fam, feb.ID); err != nil || feb.BudgetedSpending == nil || *feb.BudgetedSpending != spending {
		t.Errorf("february budget %+v %v", feb, err)
	}

	// March carries February's groceries (80) though nothing is budgeted;
	// May, after a month without a budget, carries nothing.
	mar, err := l.s.EnsureBudget(ctx, fam, "2024-03-31")
	must(t, err)
	checkLine(t, "mar groceries", budgetLines(t, l, mar.ID)[l.groceries.ID], lineWant{"0", "0", "0", "80", "80", false})
	may, err := l.s.EnsureBudget(ctx, fam, "2024-05-01")
	must(t, err)
	set(may.ID, l.groceries, "10", true)
	checkLine(t, "may groceries", budgetLines(t, l, may.ID)[l.groceries.ID], lineWant{"10", "10", "0", "0", "10", false})
	set(feb.ID, l.groceries, "100", false)
	checkLine(t, "mar groceries, february not carrying", budgetLines(t, l, mar.ID)[l.groceries.ID], lineWant{"0", "0", "0", "0", "0", false})

	if err := l.s.CopyPreviousBudget(ctx, fam, jan.ID); err == nil {
		t.Error("copying from a month without a budget was accepted")
	}

	budgets, n, err := l.s.Budgets(ctx, fam, models.BudgetFilter{}, models.Page{Number: 1, Size: 2})
	must(t, err)
	if n != 4 || len(budgets) != 2 || budgets[0].ID != may.ID || budgets[1].ID != mar.ID {
		t.Fatalf("budgets n=%d %+v", n, budgets)
	}
	budgets, n, err = l.s.Budgets(ctx, fam, models.BudgetFilter{StartDate: "2024-01-01", EndDate: "2024-02-29"}, models.Page{Number: 1, Size: 10})
	must(t, err)
	if n != 2 || budgets[0].ID != feb.ID || budgets[0].ActualSpending != mustAmount(t, "80") || budgets[0].ActualIncome != mustAmount(t, "20") ||
		budgets[1].AllocatedSpending != mustAmount(t, "300") {
		t.Fatalf("budgets in range n=%d %+v", n, budgets)
	}
	all, n, err := l.s.BudgetLines(ctx, fam, models.BudgetLineFilter{CategoryID: &l.groceries.ID}, models.Page{Number: 1, Size: 10})
	must(t, err)
	if n != 4 || all[0].StartDate != "2024-05-01" || all[3].StartDate != "2024-01-01" {
		t.Fatalf("groceries lines n=%d %+v", n, all)
	}
	one, err := l.s.BudgetLine(ctx, fam, all[2].ID)
	must(t, err)
	if one.ID != all[2].ID || one.Available != all[2].Available {
		t.Errorf("one line %+v, listed %+v", one, all[2])
	}

	// Another family sees none of it.
	other := modelstest.NewFamily(t, l.s, "stranger")
	if _, err := l.s.Budget(ctx, other.Family.ID, jan.ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("other family's budget: %v", err)
	}
	if _, err := l.s.BudgetLine(ctx, other.Family.ID, all[0].ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("other family's line: %v", err)
	}
	if err := l.s.UpdateBudgetCategory(ctx, other.Family.ID, all[0].ID, 1, false); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("other family's update: %v", err)
	}
	if err := l.s.CopyPreviousBudget(ctx, other.Family.ID, feb.ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("other family's copy: %v", err)
	}
	if lines, n, err := l.s.BudgetLines(ctx, other.Family.ID, models.BudgetLineFilter{}, models.Page{Number: 1, Size: 10}); err != nil || n != 0 || len(lines) != 0 {
		t.Errorf("other family's lines: %d %v", n, err)
	}
	if err := l.s.UpdateBudgetCategory(ctx, fam, all[0].ID, -1, false); err == nil {
		t.Error("a negative budget was accepted")
	}

	// Deleting a category removes its lines.
	must(t, l.s.DeleteCategory(ctx, fam, l.dining.ID))
	if lines := budgetLines(t, l, feb.ID); len(lines) != 2 {
		t.Errorf("after deleting dining: %d lines", len(lines))
	}
}

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
	total := money.Amount(500_0000)
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
