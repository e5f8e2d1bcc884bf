package rest

import (
	"github.com/gofiber/fiber/v2"

	"coffer/models"
	"coffer/models/money"
)

type transferTransactionJSON struct {
	ID          string         `json:"id"`
	Date        string         `json:"date"`
	Amount      string         `json:"amount"`
	AmountCents int64          `json:"amount_cents"`
	Currency    string         `json:"currency"`
	Name        string         `json:"name"`
	Account     transferAcctJS `json:"account"`
}

type transferAcctJS struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	AccountType *string `json:"account_type"`
}

type transferJSON struct {
	ID          string  `json:"id"`
	Status      string  `json:"status"`
	Date        string  `json:"date"`
	Amount      string  `json:"amount"`
	AmountCents int64   `json:"amount_cents"`
	Currency    string  `json:"currency"`
	Notes       *string `json:"notes"`
	// ExchangeRate is the rate the two sides imply between two currencies
	// (inflow currency per unit of the outflow's), null within one.
	ExchangeRate       *string                 `json:"exchange_rate"`
	InflowTransaction  transferTransactionJSON `json:"inflow_transaction"`
	OutflowTransaction transferTransactionJSON `json:"outflow_transaction"`
	CreatedAt          string                  `json:"created_at"`
	UpdatedAt          string                  `json:"updated_at"`
}

type transfersJSON struct {
	Transfers  []transferJSON `json:"transfers"`
	Pagination Pagination     `json:"pagination"`
}

func renderTransferTransaction(t *models.Transaction) transferTransactionJSON {
	cur := money.MustCurrency(t.Currency)
	out := transferTransactionJSON{
		ID: t.ID.String(), Date: string(t.Date), Amount: t.Amount.Format(cur), AmountCents: abs64(t.Amount.Minor(cur)),
		Currency: t.Currency, Name: t.Name,
	}
	if a := t.Account; a != nil {
		out.Account = transferAcctJS{ID: a.ID.String(), Name: a.Name, AccountType: nonEmpty(a.AccountType)}
	}
	return out
}

// renderTransfer shows a transfer as the reference does: its amount and
// currency are what arrived (the inflow's); each side keeps its own.
func renderTransfer(tr *models.Transfer) transferJSON {
	in := tr.Inflow
	cur := money.MustCurrency(in.Currency)
	amount := in.Amount.Abs()
	out := transferJSON{
		ID: tr.ID.String(), Status: tr.Status, Date: string(tr.Outflow.Date),
		Amount: amount.Format(cur), AmountCents: amount.Minor(cur), Currency: in.Currency, Notes: tr.Notes,
		InflowTransaction:  renderTransferTransaction(tr.Inflow),
		OutflowTransaction: renderTransferTransaction(tr.Outflow),
		CreatedAt:          timestamp(tr.CreatedAt), UpdatedAt: timestamp(tr.UpdatedAt),
	}
	if r, ok := tr.ImpliedRate(); ok {
		s := r.String()
		out.ExchangeRate = &s
	}
	return out
}

func (h *Handler) listTransfers(c *fiber.Ctx) error {
	trs, page, err := listPage(c, h.store.Transfers, renderTransfer)
	if err != nil {
		return err
	}
	return c.JSON(transfersJSON{Transfers: trs, Pagination: page})
}

func (h *Handler) showTransfer(c *fiber.Ctx) error {
	return showOne(c, h.store.Transfer, renderTransfer)
}

func (h *Handler) createTransfer(c *fiber.Ctx) error {
	ctx, k := c.UserContext(), KeyOf(c)
	f, err := decodeObject(c, "transfer")
	if err != nil {
		return err
	}
	var nt models.NewTransfer
	from, to := f.id("from_account_id"), f.id("to_account_id")
	for _, m := range []struct {
		name string
		id   bool
	}{{"from_account_id", from != nil}, {"to_account_id", to != nil}} {
		if !m.id && !f.bad(m.name) {
			f.add(m.name + " is required")
		}
	}
	amount, ok := f.amount("amount")
	if !ok && !f.bad("amount") {
		f.add("amount is required")
	}
	// to_amount is what arrived, in the destination's currency: required
	// between two currencies (the store says so, naming it), unused within one.
	toAmount, _ := f.amount("to_amount")
	date, ok := f.date("date")
	if !ok && !f.bad("date") {
		f.add("date is required")
	}
	name, _ := f.str("name", maxName, true)
	notes, hasNotes := f.str("notes", maxNotes, false)
	if err := f.err(); err != nil {
		return err
	}
	nt = models.NewTransfer{FromAccountID: *from, ToAccountID: *to, Amount: amount, ToAmount: toAmount, Date: date, Name: name}
	if hasNotes {
		nt.Notes = &notes
	}
	id, err := h.store.CreateTransfer(ctx, k.FamilyID, nt)
	if err != nil {
		return err
	}
	tr, err := h.store.Transfer(ctx, k.FamilyID, id)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(renderTransfer(tr))
}

func (h *Handler) deleteTransfer(c *fiber.Ctx) error {
	if _, err := byPathID(c, h.store.DeleteTransfer); err != nil {
		return err
	}
	return deleted(c, "Transfer")
}
