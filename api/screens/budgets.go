package screens

import (
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
)

type budgetsData struct {
	Budget     *models.BudgetSummary
	Lines      []models.BudgetLine
	LeftOut    *models.LeftOut // what the month's figures do not count
	Form       *form
	Month      string // YYYY-MM
	Prev, Next string
}

// month reads ?month=YYYY-MM (default: this month) as its first day.
func (h *Handler) month(c *fiber.Ctx) (models.Date, error) {
	v := c.Query("month")
	if v == "" {
		v = h.now().UTC().Format("2006-01")
	}
	t, err := time.Parse("2006-01", v)
	if err != nil || t.Year() < 1900 || t.Year() > 2200 {
		return "", httperr.NotFound()
	}
	return models.DateOf(t), nil
}

// budget sets up (if need be) and reads the month's budget and its lines.
func (h *Handler) budget(c *fiber.Ctx, first models.Date) (*models.BudgetSummary, []models.BudgetLine, error) {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	b, err := h.store.EnsureBudget(ctx, fam, first)
	if err != nil {
		return nil, nil, err
	}
	lines, _, err := h.store.BudgetLines(ctx, fam, models.BudgetLineFilter{BudgetID: &b.ID}, models.Page{Number: 1, Size: 500})
	lines = nested(lines, func(l *models.BudgetLine) uuid.UUID { return l.CategoryID }, func(l *models.BudgetLine) *uuid.UUID { return l.ParentID })
	return b, lines, err
}

func (h *Handler) budgetsPage(c *fiber.Ctx, status int, first models.Date, f *form) error {
	b, lines, err := h.budget(c, first)
	if err != nil {
		return err
	}
	if f == nil {
		f = newForm(c)
		if b.BudgetedSpending != nil {
			f.Values["budgeted_spending"] = amountValue(*b.BudgetedSpending)
		}
		if b.ExpectedIncome != nil {
			f.Values["expected_income"] = amountValue(*b.ExpectedIncome)
		}
		for _, l := range lines {
			if l.BudgetedSpending != 0 {
				f.Values["amount_"+l.ID.String()] = amountValue(l.BudgetedSpending)
			}
			if l.RolloverEnabled {
				f.Values["rollover_"+l.ID.String()] = "1"
			}
		}
	}
	leftOut, err := h.store.LeftOutOf(c.UserContext(), b.FamilyID, models.Period{From: b.StartDate, To: b.EndDate})
	if err != nil {
		return err
	}
	t := first.Time()
	d := budgetsData{Budget: b, Lines: lines, LeftOut: leftOut, Form: f, Month: t.Format("2006-01"),
		Prev: t.AddDate(0, -1, 0).Format("2006-01"), Next: t.AddDate(0, 1, 0).Format("2006-01")}
	return h.pages.Render(c, status, "budgets", web.Page{Nav: "budgets", Title: "Budget for " + b.Name(), Data: d})
}

// showBudget is a month's budget: the current month unless ?month= says
// otherwise. Visiting a month sets its budget up, as the reference does.
func (h *Handler) showBudget(c *fiber.Ctx) error {
	first, err := h.month(c)
	if err != nil {
		return err
	}
	return h.budgetsPage(c, fiber.StatusOK, first, nil)
}

// saveBudget writes the whole form (totals and one amount per category)
// in one transaction, or none of it.
func (h *Handler) saveBudget(c *fiber.Ctx) error {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	first, err := h.month(c)
	if err != nil {
		return err
	}
	b, lines, err := h.budget(c, first)
	if err != nil {
		return err
	}
	f := newForm(c)
	if a, ok := f.amount("budgeted_spending", "Budgeted spending", false); ok {
		b.BudgetedSpending = &a
	} else {
		b.BudgetedSpending = nil
	}
	if a, ok := f.amount("expected_income", "Expected income", false); ok {
		b.ExpectedIncome = &a
	} else {
		b.ExpectedIncome = nil
	}
	amounts := make([]models.BudgetAmount, len(lines))
	for i, l := range lines {
		a, _ := f.amount("amount_"+l.ID.String(), l.CategoryName, false)
		amounts[i] = models.BudgetAmount{ID: l.ID, Budgeted: a, Rollover: f.value("rollover_"+l.ID.String()) == "1"}
	}
	if c.FormValue("copy") == "1" {
		err := h.store.CopyPreviousBudget(ctx, fam, b.ID)
		if formProblems(f, err) {
			return h.budgetsPage(c, fiber.StatusUnprocessableEntity, first, f)
		}
		if err != nil {
			return err
		}
		return h.site.Redirect(c, "/budgets?month="+c.Query("month"), "Copied last month's budget.")
	}
	if f.ok() {
		err = h.store.SaveBudget(ctx, &b.Budget, amounts)
		if errors.Is(err, models.ErrNotFound) {
			f.fail("form", "The categories changed while you were editing. Check the amounts and save again.")
		} else if !formProblems(f, err) && err != nil {
			return err
		}
	}
	if !f.ok() {
		return h.budgetsPage(c, fiber.StatusUnprocessableEntity, first, f)
	}
	return h.site.Redirect(c, "/budgets?month="+first.Time().Format("2006-01"), "Budget saved.")
}
