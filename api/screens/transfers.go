package screens

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"coffer/api/web"
	"coffer/models"
	"coffer/models/civil"
)

type transferFormData struct {
	choices
	Form *form
}

func (h *Handler) transferForm(c *fiber.Ctx, status int, f *form) error {
	ch, err := h.choices(c)
	if err != nil {
		return err
	}
	return h.pages.Render(c, status, "transfer_form", web.Page{Nav: "transactions", Title: "Record a transfer",
		Data: transferFormData{choices: ch, Form: f}})
}

func (h *Handler) newTransfer(c *fiber.Ctx) error {
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	f.Values["date"] = string(civil.DateOf(h.now()))
	return h.transferForm(c, fiber.StatusOK, f)
}

// createTransfer records money moving between two of the family's
// accounts: an outflow on one and an inflow on the other, which count as
// neither income nor spending.
func (h *Handler) createTransfer(c *fiber.Ctx) error {
	fam := web.SessionOf(c).User.FamilyID
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	var nt models.NewTransfer
	from, to := f.id("from_account_id", "From"), f.id("to_account_id", "To")
	if from == nil {
		f.fail("from_account_id", "Choose the account the money left.")
	}
	if to == nil {
		f.fail("to_account_id", "Choose the account the money went to.")
	}
	if from != nil && to != nil && *from == *to {
		f.fail("to_account_id", "Choose two different accounts.")
	}
	nt.Amount, _ = f.amount("amount", "Amount", true)
	nt.Date, _ = f.date("date", "Date", true)
	nt.Name = f.text("name", "Description", maxName, false)
	if !f.ok() {
		return h.transferForm(c, fiber.StatusUnprocessableEntity, f)
	}
	nt.FromAccountID, nt.ToAccountID = *from, *to
	_, err = h.store.CreateTransfer(c.UserContext(), fam, nt)
	var inv *models.InvalidError
	switch {
	case errors.As(err, &inv), errors.Is(err, models.ErrNotFound):
		formProblems(f, err)
		if errors.Is(err, models.ErrNotFound) {
			f.fail("form", "One of those accounts no longer exists.")
		}
		return h.transferForm(c, fiber.StatusUnprocessableEntity, f)
	case err != nil:
		return err
	}
	return h.site.Redirect(c, "/transactions", "Transfer recorded.")
}
