package screens

import (
	"errors"
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// reconcileLine is a row the reconciliation still decides, with what it
// does to the balance (Effect, the ledger's way), for the script that
// keeps the difference up to date as rows are ticked.
type reconcileLine struct {
	models.Transaction
	Effect money.Amount
}

// EffectUnits is Effect as the script reads it: a count of
// ten-thousandths.
func (l reconcileLine) EffectUnits() string { return strconv.FormatInt(int64(l.Effect), 10) }

type reconcileData struct {
	Account    *models.Account
	Form       *form                  // the statement: date, ending balance and its sign
	Open       *models.Reconciliation // nil: none in progress, the statement form alone
	Rows       []reconcileLine
	Total      int // rows to decide, of which Rows holds the first MaxReconcileRows
	Cleared    money.Amount
	Difference money.Amount // statement minus cleared
	Problem    string       // why the finish was refused, or the ticks
}

// effect is what a row does to an account's balance: an expense lowers
// an asset and raises what a liability owes (see models.balanceAfter).
func effect(a *models.Account, amount money.Amount) money.Amount {
	if models.Liability(a.AccountType) {
		return amount
	}
	return -amount
}

// reconcileScreen shows an account's reconciliation: the statement form,
// and while one is in progress the cleared balance, the difference and
// the rows up to the statement date to tick.
func (h *Handler) reconcileScreen(c *fiber.Ctx) error {
	a, err := h.familyAccount(c)
	if err != nil {
		return err
	}
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	open, err := h.openReconciliation(c, a)
	if err != nil {
		return err
	}
	f.Values["date"], f.Values["sign"] = string(civil.DateOf(h.now())), "positive"
	if open != nil {
		f.Values["date"], f.Values["balance"] = string(open.StatementDate), f.amountValue(open.StatementBalance.Abs())
		if open.StatementBalance < 0 {
			f.Values["sign"] = "negative"
		}
	}
	return h.renderReconcile(c, fiber.StatusOK, reconcileData{Account: a, Form: f, Open: open})
}

// openReconciliation is the account's reconciliation in progress, or nil.
func (h *Handler) openReconciliation(c *fiber.Ctx, a *models.Account) (*models.Reconciliation, error) {
	open, err := h.store.OpenReconciliation(c.UserContext(), a.FamilyID, a.ID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil
	}
	return open, err
}

func (h *Handler) renderReconcile(c *fiber.Ctx, status int, d reconcileData) error {
	ctx := c.UserContext()
	if d.Open != nil {
		rows, total, err := h.store.ReconcileRows(ctx, d.Open)
		if err != nil {
			return err
		}
		d.Total = total
		for _, r := range rows {
			d.Rows = append(d.Rows, reconcileLine{Transaction: r, Effect: effect(d.Account, r.Amount)})
		}
		if d.Cleared, err = h.store.ClearedBalance(ctx, d.Account.FamilyID, d.Account.ID, d.Open.StatementDate); err != nil {
			return err
		}
		d.Difference = d.Open.StatementBalance - d.Cleared
	}
	return h.pages.Render(c, status, "reconcile", web.Page{Nav: "accounts", Title: "Reconcile " + d.Account.Name, Data: d})
}

// startReconcile reads the statement form and opens the account's
// reconciliation, or changes the statement of the one in progress.
func (h *Handler) startReconcile(c *fiber.Ctx) error {
	a, err := h.familyAccount(c)
	if err != nil {
		return err
	}
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	date, _ := f.date("date", "Statement date", true)
	amount, _ := f.amount("balance", "Ending balance", true)
	if f.oneOf("sign", "The balance's sign", "positive", "negative") == "negative" {
		amount = -amount
	}
	if !f.ok() {
		open, err := h.openReconciliation(c, a)
		if err != nil {
			return err
		}
		return h.renderReconcile(c, fiber.StatusUnprocessableEntity, reconcileData{Account: a, Form: f, Open: open})
	}
	if _, err := h.store.StartReconciliation(c.UserContext(), a.FamilyID, a.ID, web.SessionOf(c).User.ID, date, amount); err != nil {
		return err
	}
	return h.site.Redirect(c, "/accounts/"+a.ID.String()+"/reconcile",
		"Statement of "+string(date)+" entered. Tick the rows it shows.")
}

// saveReconcile records the ticks of the rows shown and, with the Finish
// button, finishes the reconciliation when the difference is zero. A
// refusal shows the screen again with the reason; the ticks stay saved.
func (h *Handler) saveReconcile(c *fiber.Ctx) error {
	ctx := c.UserContext()
	a, err := h.familyAccount(c)
	if err != nil {
		return err
	}
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	open, err := h.openReconciliation(c, a)
	if err != nil {
		return err
	}
	back := "/accounts/" + a.ID.String() + "/reconcile"
	if open == nil {
		return h.site.Redirect(c, back, "No reconciliation is in progress: enter the statement first.")
	}
	f.Values["date"], f.Values["balance"], f.Values["sign"] = string(open.StatementDate), f.amountValue(open.StatementBalance.Abs()), "positive"
	if open.StatementBalance < 0 {
		f.Values["sign"] = "negative"
	}
	refuse := func(err error) error {
		var inv *models.InvalidError
		if !errors.As(err, &inv) {
			return err
		}
		return h.renderReconcile(c, fiber.StatusUnprocessableEntity, reconcileData{Account: a, Form: f, Open: open, Problem: inv.Problems[0]})
	}
	if err := h.store.SetCleared(ctx, a.FamilyID, a.ID, f.ids("shown"), f.ids("cleared")); err != nil {
		return refuse(err)
	}
	if c.FormValue("finish") == "" {
		return h.site.Redirect(c, back, "Ticks saved.")
	}
	done, err := h.store.FinishReconciliation(ctx, a.FamilyID, a.ID, web.SessionOf(c).User.ID)
	if err != nil {
		return refuse(err)
	}
	return h.site.Redirect(c, "/accounts/"+a.ID.String(), "Reconciled to the statement of "+string(done.StatementDate)+
		": the cleared rows up to that day are locked.")
}

// cancelReconcile drops the reconciliation in progress; the ticks stay.
func (h *Handler) cancelReconcile(c *fiber.Ctx) error {
	a, err := h.familyAccount(c)
	if err != nil {
		return err
	}
	if err := h.store.CancelReconciliation(c.UserContext(), a.FamilyID, a.ID); err != nil && !errors.Is(err, models.ErrNotFound) {
		return err
	}
	return h.site.Redirect(c, "/accounts/"+a.ID.String(), "Reconciliation cancelled; the rows keep their ticks.")
}

// unlockTransaction takes a row out of its reconciliation so that it can
// be edited again.
func (h *Handler) unlockTransaction(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	if err := h.store.UnlockTransaction(c.UserContext(), web.SessionOf(c).User.FamilyID, id); err != nil {
		return err
	}
	back := "/transactions/" + id.String() + "/edit"
	if r := returnTo(c, ""); r != "" {
		back += "?return_to=" + url.QueryEscape(r)
	}
	return h.site.Redirect(c, back, "Transaction unlocked: it can be changed again, and its account no longer agrees with the reconciled statement until it is reconciled again.")
}

// reconciliationLine is one reconciliation as an account page lists it.
type reconciliationLine struct {
	models.Reconciliation
	Who string
}

// accountReconciliations are what an account page shows of its
// reconciliations: the latest ten, how many in all, and whether one is
// in progress.
type accountReconciliations struct {
	Lines      []reconciliationLine
	Total      int
	InProgress bool
}

func (h *Handler) accountReconciliations(c *fiber.Ctx, a *models.Account) (accountReconciliations, error) {
	recs, total, err := h.store.Reconciliations(c.UserContext(), a.FamilyID, a.ID, models.Page{Number: 1, Size: 10})
	out := accountReconciliations{Total: total}
	for _, rc := range recs {
		if rc.Status == models.ReconciliationInProgress {
			out.InProgress = true
		}
		out.Lines = append(out.Lines, reconciliationLine{Reconciliation: rc, Who: whoName(rc.User)})
	}
	return out, err
}

// whoName names the member who did a reconciliation.
func whoName(u *models.User) string {
	if u == nil {
		return "a former member"
	}
	if name := models.Str(u.FirstName); name != "" {
		if last := models.Str(u.LastName); last != "" {
			name += " " + last
		}
		return name
	}
	return u.Email
}
