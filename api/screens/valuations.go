package screens

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"coffer/api/web"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// An account's valuations on screen: "Update value" on the account page
// sets the balance at the end of a day (a statement's, a house's), and
// each valuation is a row of the register that can be edited or deleted.

// signedAmount reads an amount that may be below zero (an overdrawn
// account's value): a leading minus, then the family's format.
func signedAmount(f *form, name, label string) (money.Amount, bool) {
	v := f.value(name)
	neg := strings.HasPrefix(v, "-") || strings.HasPrefix(v, "−")
	if neg {
		f.Values[name] = strings.TrimSpace(strings.TrimLeft(v, "-−"))
	}
	a, ok := f.amount(name, label, true)
	f.Values[name] = v // shown again as typed
	if neg {
		a = -a
	}
	return a, ok
}

// readValuation applies the value form to v: the day is required except
// for an opening balance, whose blank day is the day before the first
// transaction.
func readValuation(f *form, v *models.Valuation) {
	if d, ok := f.date("date", "Date", v.Kind != models.ValuationOpening); ok {
		v.Date = &d
	} else if f.Errors["date"] == "" {
		v.Date = nil
	}
	if a, ok := signedAmount(f, "amount", "Value"); ok {
		v.Amount = a
	}
	v.Notes = web.NonEmpty(f.text("notes", "Notes", 10_000, false))
}

// createValuation is the account page's "Update value": the account was
// worth the amount at the end of the day.
func (h *Handler) createValuation(c *fiber.Ctx) error {
	a, err := h.familyAccount(c)
	if err != nil {
		return err
	}
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	v := &models.Valuation{FamilyID: a.FamilyID, AccountID: a.ID}
	readValuation(f, v)
	if !f.ok() {
		return h.accountPage(c, fiber.StatusUnprocessableEntity, a, f)
	}
	if _, err := h.store.CreateValuation(c.UserContext(), v); err != nil {
		return err
	}
	return h.site.Redirect(c, "/accounts/"+a.ID.String(), "Balance on "+string(*v.Date)+" set to "+formatMoney(v.Amount, a.Currency)+".")
}

type valuationFormData struct {
	Form      *form
	Valuation *models.Valuation
	Account   *models.Account
}

func (h *Handler) valuationScreen(c *fiber.Ctx) (*models.Valuation, *models.Account, *form, error) {
	v, err := byPath(c, h.store.Valuation)
	if err != nil {
		return nil, nil, nil, err
	}
	a, err := h.store.Account(c.UserContext(), v.FamilyID, v.AccountID)
	if err != nil {
		return nil, nil, nil, err
	}
	f, err := h.amountForm(c)
	return v, a, f, err
}

func (h *Handler) editValuation(c *fiber.Ctx) error {
	v, a, f, err := h.valuationScreen(c)
	if err != nil {
		return err
	}
	f.Values["amount"] = f.amountValue(v.Amount)
	if v.Amount < 0 {
		f.Values["amount"] = "-" + f.Values["amount"]
	}
	if v.Date != nil {
		f.Values["date"] = string(*v.Date)
	}
	f.Values["notes"] = deref(v.Notes)
	return h.valuationForm(c, fiber.StatusOK, valuationFormData{Form: f, Valuation: v, Account: a})
}

func (h *Handler) valuationForm(c *fiber.Ctx, status int, d valuationFormData) error {
	title := "Edit the balance set on " + dateOr(d.Valuation.Date, "")
	if d.Valuation.Kind == models.ValuationOpening {
		title = "Edit the opening balance"
	}
	return h.pages.Render(c, status, "valuation_form", web.Page{Nav: "accounts", Title: title, Data: d})
}

func (h *Handler) updateValuation(c *fiber.Ctx) error {
	v, a, f, err := h.valuationScreen(c)
	if err != nil {
		return err
	}
	readValuation(f, v)
	if f.ok() {
		err = h.store.UpdateValuation(c.UserContext(), v)
		if errors.Is(err, models.ErrConflict) {
			f.fail("date", "This account's balance is already set on that day: edit that one instead.")
		} else if err != nil {
			return err
		}
	}
	if !f.ok() {
		return h.valuationForm(c, fiber.StatusUnprocessableEntity, valuationFormData{Form: f, Valuation: v, Account: a})
	}
	return h.site.Redirect(c, "/accounts/"+a.ID.String(), "Balance saved.")
}

func (h *Handler) deleteValuation(c *fiber.Ctx) error {
	v, a, _, err := h.valuationScreen(c)
	if err != nil {
		return err
	}
	if err := h.store.DeleteValuation(c.UserContext(), v.FamilyID, v.ID); err != nil {
		return err
	}
	return h.site.Redirect(c, "/accounts/"+a.ID.String(), "Balance on "+dateOr(v.Date, "")+" deleted.")
}

// dateOr is d, or the text for none.
func dateOr(d *civil.Date, none string) string {
	if d == nil {
		return none
	}
	return string(*d)
}
