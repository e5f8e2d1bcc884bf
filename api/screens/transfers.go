package screens

import (
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/web"
	"coffer/models"
	"coffer/models/civil"
)

type transferFormData struct {
	choices
	Form *form
	// The chosen accounts' currencies, when chosen: the received amount
	// is asked for, and labelled, in To's.
	FromCurrency, ToCurrency string
}

// Differ reports whether the chosen accounts are of two currencies.
func (d transferFormData) Differ() bool {
	return d.FromCurrency != "" && d.ToCurrency != "" && d.FromCurrency != d.ToCurrency
}

func (h *Handler) transferForm(c *fiber.Ctx, status int, f *form) error {
	ch, err := h.choices(c)
	if err != nil {
		return err
	}
	d := transferFormData{choices: ch, Form: f}
	d.FromCurrency, d.ToCurrency = accountCurrency(ch.Accounts, f.Values["from_account_id"]), accountCurrency(ch.Accounts, f.Values["to_account_id"])
	return h.pages.Render(c, status, "transfer_form", web.Page{Nav: "transactions", Title: "Record a transfer", Data: d})
}

// accountCurrency is the currency of the account of id among accounts, or "".
func accountCurrency(accounts []models.Account, id string) string {
	for _, a := range accounts {
		if a.ID.String() == id {
			return a.Currency
		}
	}
	return ""
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
	nt.Amount, _ = f.amount("amount", "Amount sent", true)
	nt.Date, _ = f.date("date", "Date", true)
	nt.Name = f.text("name", "Description", maxName, false)
	if from != nil && to != nil {
		if err := h.receivedAmount(c, f, &nt, *from, *to); err != nil {
			return err
		}
	}
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

// receivedAmount reads what arrived, in the To account's currency, when
// the two accounts' currencies differ: required and positive then;
// within one currency the field is not used.
func (h *Handler) receivedAmount(c *fiber.Ctx, f *form, nt *models.NewTransfer, from, to uuid.UUID) error {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	src, err := h.store.Account(ctx, fam, from)
	if errors.Is(err, models.ErrNotFound) {
		return nil // the store says so
	}
	if err != nil {
		return err
	}
	dst, err := h.store.Account(ctx, fam, to)
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if src.Currency == dst.Currency {
		return nil
	}
	label := "Amount received in " + dst.Currency
	got, ok := f.amount("to_amount", label, false)
	switch {
	case f.Errors["to_amount"] != "":
	case !ok:
		f.fail("to_amount", fmt.Sprintf("Enter the amount that arrived in %s, the To account's currency: it is not %s, the From account's.", dst.Currency, src.Currency))
	case got <= 0:
		f.fail("to_amount", label+" must be more than zero.")
	default:
		nt.ToAmount = got
	}
	return nil
}
