package rest

import (
	"bytes"

	"github.com/gofiber/fiber/v2"

	"coffer/models"
	"coffer/models/money"
)

// reconciliationJSON is one check of an account against its statement
// (coffer's own; the reference has none). Balances are the ledger's way:
// held for an asset, owed for a liability.
type reconciliationJSON struct {
	ID                    string  `json:"id"`
	AccountID             string  `json:"account_id"`
	Status                string  `json:"status"`
	StatementDate         string  `json:"statement_date"`
	StatementBalance      string  `json:"statement_balance"`
	StatementBalanceCents int64   `json:"statement_balance_cents"`
	ClearedBalance        *string `json:"cleared_balance"`
	Currency              string  `json:"currency"`
	UserID                *string `json:"user_id"`
	CreatedAt             string  `json:"created_at"`
	FinishedAt            *string `json:"finished_at"`
}

type reconciliationsJSON struct {
	Reconciliations []reconciliationJSON `json:"reconciliations"`
	Pagination      Pagination           `json:"pagination"`
}

func renderReconciliation(rc *models.Reconciliation, currency string) reconciliationJSON {
	cur := money.MustCurrency(currency)
	out := reconciliationJSON{ID: rc.ID.String(), AccountID: rc.AccountID.String(), Status: rc.Status,
		StatementDate: string(rc.StatementDate), StatementBalance: rc.StatementBalance.Format(cur),
		StatementBalanceCents: rc.StatementBalance.Minor(cur), Currency: currency, CreatedAt: timestamp(rc.CreatedAt)}
	if rc.ClearedBalance != nil {
		out.ClearedBalance = models.Ptr(rc.ClearedBalance.Format(cur))
	}
	if rc.UserID != nil {
		out.UserID = models.Ptr(rc.UserID.String())
	}
	if rc.FinishedAt != nil {
		out.FinishedAt = models.Ptr(timestamp(*rc.FinishedAt))
	}
	return out
}

// listReconciliations lists an account's reconciliations, latest first;
// another family's account is a 404.
func (h *Handler) listReconciliations(c *fiber.Ctx) error {
	a, err := byPathID(c, h.store.Account)
	if err != nil {
		return err
	}
	p, err := parsePage(c)
	if err != nil {
		return err
	}
	rows, total, err := h.store.Reconciliations(c.UserContext(), a.FamilyID, a.ID, p)
	if err != nil {
		return err
	}
	out := reconciliationsJSON{Reconciliations: make([]reconciliationJSON, len(rows)), Pagination: pagination(p, total)}
	for i := range rows {
		out.Reconciliations[i] = renderReconciliation(&rows[i], a.Currency)
	}
	return c.JSON(out)
}

// reconcileMembers reads the members of a transaction edit that concern
// reconciliation: cleared (true or false) and reconciled, which only
// false (unlock) may set. It returns the columns they change on t.
func reconcileMembers(f *fields, t *models.Transaction) []string {
	var cols []string
	if v, ok := boolMember(f, "cleared"); ok {
		t.Cleared = v
		cols = append(cols, "cleared")
	}
	if v, ok := boolMember(f, "reconciled"); ok {
		if v {
			f.add("reconciled can only be set to false, to unlock the transaction; a reconciliation locks rows when it finishes")
		} else if t.Reconciled() {
			t.ReconciliationID = nil
			cols = append(cols, "reconciliation_id")
		}
	}
	return cols
}

// boolMember reads a boolean member; absent gives ok false, anything but
// true or false is a problem.
func boolMember(f *fields, name string) (v, ok bool) {
	raw, present := f.raw[name]
	if !present {
		return false, false
	}
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	f.add(name + " must be true or false")
	return false, false
}
