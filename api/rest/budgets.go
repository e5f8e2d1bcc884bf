package rest

import (
	"github.com/gofiber/fiber/v2"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// budgetJSON is a month's budget in the reference's shape (without its
// budget plans, which coffer does not have).
type budgetJSON struct {
	ID                       string  `json:"id"`
	StartDate                string  `json:"start_date"`
	EndDate                  string  `json:"end_date"`
	Name                     string  `json:"name"`
	Currency                 string  `json:"currency"`
	Initialized              bool    `json:"initialized"`
	Current                  bool    `json:"current"`
	BudgetedSpending         *string `json:"budgeted_spending"`
	BudgetedSpendingCents    *int64  `json:"budgeted_spending_cents"`
	ExpectedIncome           *string `json:"expected_income"`
	ExpectedIncomeCents      *int64  `json:"expected_income_cents"`
	AllocatedSpending        string  `json:"allocated_spending"`
	AllocatedSpendingCents   int64   `json:"allocated_spending_cents"`
	ActualSpending           string  `json:"actual_spending"`
	ActualSpendingCents      int64   `json:"actual_spending_cents"`
	ActualIncome             string  `json:"actual_income"`
	ActualIncomeCents        int64   `json:"actual_income_cents"`
	AvailableToSpend         string  `json:"available_to_spend"`
	AvailableToSpendCents    int64   `json:"available_to_spend_cents"`
	AvailableToAllocate      string  `json:"available_to_allocate"`
	AvailableToAllocateCents int64   `json:"available_to_allocate_cents"`
	CreatedAt                string  `json:"created_at"`
	UpdatedAt                string  `json:"updated_at"`
}

type budgetsJSON struct {
	Budgets    []budgetJSON `json:"budgets"`
	Pagination Pagination   `json:"pagination"`
}

func renderBudget(b *models.BudgetSummary, today civil.Date) budgetJSON {
	show := moneyIn(b.Currency)
	optMoney := func(a *money.Amount) (*string, *int64) {
		if a == nil {
			return nil, nil
		}
		s, n := show(*a)
		return &s, &n
	}
	out := budgetJSON{ID: b.ID.String(), StartDate: string(b.StartDate), EndDate: string(b.EndDate), Name: b.Name(),
		Currency: b.Currency, Initialized: b.Initialized(), Current: b.Current(today),
		CreatedAt: timestamp(b.CreatedAt), UpdatedAt: timestamp(b.UpdatedAt)}
	out.BudgetedSpending, out.BudgetedSpendingCents = optMoney(b.BudgetedSpending)
	out.ExpectedIncome, out.ExpectedIncomeCents = optMoney(b.ExpectedIncome)
	out.AllocatedSpending, out.AllocatedSpendingCents = show(b.AllocatedSpending)
	out.ActualSpending, out.ActualSpendingCents = show(b.ActualSpending)
	out.ActualIncome, out.ActualIncomeCents = show(b.ActualIncome)
	out.AvailableToSpend, out.AvailableToSpendCents = show(b.AvailableToSpend())
	out.AvailableToAllocate, out.AvailableToAllocateCents = show(b.AvailableToAllocate())
	return out
}

func (h *Handler) listBudgets(c *fiber.Ctx) error {
	var f models.BudgetFilter
	var err error
	if f.StartDate, f.EndDate, err = queryRange(c); err != nil {
		return err
	}
	today := civil.DateOf(h.now())
	rows, pg, err := listPage(c, withFilter(h.store.Budgets, f), func(b *models.BudgetSummary) budgetJSON { return renderBudget(b, today) })
	if err != nil {
		return err
	}
	return c.JSON(budgetsJSON{Budgets: rows, Pagination: pg})
}

func (h *Handler) showBudget(c *fiber.Ctx) error {
	today := civil.DateOf(h.now())
	return showOne(c, h.store.Budget, func(b *models.BudgetSummary) budgetJSON { return renderBudget(b, today) })
}

type budgetCategoryRefJSON struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Color      string  `json:"color"`
	LucideIcon string  `json:"lucide_icon"`
	ParentID   *string `json:"parent_id"`
}

// budgetCategoryJSON is a budget line in the reference's shape. The
// derived amounts come with every line, listed or shown.
type budgetCategoryJSON struct {
	ID                           string                `json:"id"`
	BudgetID                     string                `json:"budget_id"`
	Currency                     string                `json:"currency"`
	Subcategory                  bool                  `json:"subcategory"`
	InheritsParentBudget         bool                  `json:"inherits_parent_budget"`
	RolloverEnabled              bool                  `json:"rollover_enabled"`
	BudgetedSpending             string                `json:"budgeted_spending"`
	BudgetedSpendingCents        int64                 `json:"budgeted_spending_cents"`
	DisplayBudgetedSpending      string                `json:"display_budgeted_spending"`
	DisplayBudgetedSpendingCents int64                 `json:"display_budgeted_spending_cents"`
	ActualSpending               string                `json:"actual_spending"`
	ActualSpendingCents          int64                 `json:"actual_spending_cents"`
	RolledOverAmount             string                `json:"rolled_over_amount"`
	RolledOverAmountCents        int64                 `json:"rolled_over_amount_cents"`
	AvailableToSpend             string                `json:"available_to_spend"`
	AvailableToSpendCents        int64                 `json:"available_to_spend_cents"`
	Category                     budgetCategoryRefJSON `json:"category"`
	CreatedAt                    string                `json:"created_at"`
	UpdatedAt                    string                `json:"updated_at"`
}

type budgetCategoriesJSON struct {
	BudgetCategories []budgetCategoryJSON `json:"budget_categories"`
	Pagination       Pagination           `json:"pagination"`
}

func renderBudgetCategory(l *models.BudgetLine) budgetCategoryJSON {
	money := moneyIn(l.Currency)
	out := budgetCategoryJSON{ID: l.ID.String(), BudgetID: l.BudgetID.String(), Currency: l.Currency,
		Subcategory: l.Subcategory(), InheritsParentBudget: l.InheritsParentBudget(), RolloverEnabled: l.RolloverEnabled,
		Category: budgetCategoryRefJSON{ID: l.CategoryID.String(), Name: l.CategoryName, Color: l.CategoryColor,
			LucideIcon: l.CategoryIcon, ParentID: optID(l.ParentID)},
		CreatedAt: timestamp(l.CreatedAt), UpdatedAt: timestamp(l.UpdatedAt)}
	out.BudgetedSpending, out.BudgetedSpendingCents = money(l.BudgetedSpending)
	out.DisplayBudgetedSpending, out.DisplayBudgetedSpendingCents = money(l.DisplayBudgetedSpending())
	out.ActualSpending, out.ActualSpendingCents = money(l.ActualSpending)
	out.RolledOverAmount, out.RolledOverAmountCents = money(l.RolledOver)
	out.AvailableToSpend, out.AvailableToSpendCents = money(l.Available)
	return out
}

func (h *Handler) listBudgetCategories(c *fiber.Ctx) error {
	var f models.BudgetLineFilter
	var err error
	if f.BudgetID, err = queryID(c, "budget_id"); err != nil {
		return err
	}
	if f.CategoryID, err = queryID(c, "category_id"); err != nil {
		return err
	}
	if f.StartDate, f.EndDate, err = queryRange(c); err != nil {
		return err
	}
	rows, pg, err := listPage(c, withFilter(h.store.BudgetLines, f), renderBudgetCategory)
	if err != nil {
		return err
	}
	return c.JSON(budgetCategoriesJSON{BudgetCategories: rows, Pagination: pg})
}

func (h *Handler) showBudgetCategory(c *fiber.Ctx) error {
	return showOne(c, h.store.BudgetLine, renderBudgetCategory)
}
