package screens

import (
	"errors"
	"html/template"
	"net/url"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/web"
	"coffer/jobs"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// accountGroup is the accounts of one type and their total.
type accountGroup struct {
	Label    string
	Type     string
	Accounts []models.Account
	Total    money.Amount
	Currency string
	Mixed    bool // accounts in several currencies: no single total
}

type accountsData struct {
	Assets, Liabilities []accountGroup
	Archived            []models.Account
	Currency            string
}

// groupAccounts sorts the family's active accounts by type, in the order
// of models.AccountTypes, assets first.
func groupAccounts(accounts []models.Account, currency string) (assets, liabilities []accountGroup, archived []models.Account) {
	byType := map[string]*accountGroup{}
	for _, a := range accounts {
		if a.Status != models.AccountActive {
			archived = append(archived, a)
			continue
		}
		g := byType[a.AccountType]
		if g == nil {
			g = &accountGroup{Label: typeLabel(a.AccountType), Type: a.AccountType, Currency: a.Currency}
			byType[a.AccountType] = g
		}
		g.Accounts = append(g.Accounts, a)
		if a.Currency != g.Currency {
			g.Mixed = true
		}
		g.Total += a.Balance
	}
	for _, t := range append(append([]string{}, models.AccountTypes...), "") {
		if g := byType[t]; g != nil {
			if models.Liability(t) {
				liabilities = append(liabilities, *g)
			} else {
				assets = append(assets, *g)
			}
		}
	}
	return assets, liabilities, archived
}

func (h *Handler) listAccounts(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	accounts, _, err := h.store.Accounts(c.UserContext(), u.FamilyID, models.Page{Number: 1, Size: 500})
	if err != nil {
		return err
	}
	fam, err := h.store.Family(c.UserContext(), u.FamilyID)
	if err != nil {
		return err
	}
	d := accountsData{Currency: fam.Currency}
	d.Assets, d.Liabilities, d.Archived = groupAccounts(accounts, fam.Currency)
	return h.pages.Render(c, fiber.StatusOK, "accounts", web.Page{Nav: "accounts", Title: "Accounts", Data: d})
}

type accountFormData struct {
	Form    *form
	Account *models.Account // nil: a new account
	Types   []string
	Updated string // the row's updated_at when the form was drawn
}

func (h *Handler) accountForm(c *fiber.Ctx, status int, d accountFormData) error {
	d.Types = models.AccountTypes
	title := "New account"
	if d.Account != nil {
		title = "Edit " + d.Account.Name
	}
	return h.pages.Render(c, status, "account_form", web.Page{Nav: "accounts", Title: title, Data: d})
}

func (h *Handler) newAccount(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	fam, err := h.store.Family(c.UserContext(), u.FamilyID)
	if err != nil {
		return err
	}
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	f.Values["currency"] = fam.Currency
	f.Values["account_type"] = "depository"
	return h.accountForm(c, fiber.StatusOK, accountFormData{Form: f})
}

// readAccount applies the account form to a; the opening balance of a
// card or loan is what is owed, as in the API.
func readAccount(f *form, a *models.Account) {
	a.Name = f.text("name", "Name", maxName, true)
	a.AccountType = f.oneOf("account_type", "Type", models.AccountTypes...)
	cur := f.value("currency")
	if _, ok := money.LookupCurrency(cur); !ok {
		f.fail("currency", "Currency must be a three-letter ISO code such as USD.")
	}
	a.Currency = cur
	if b, ok := f.amount("opening_balance", "Opening balance", false); ok {
		a.OpeningBalance = b
	} else {
		a.OpeningBalance = 0
	}
	if d, ok := f.date("opening_balance_date", "Opening balance date", false); ok {
		a.OpeningDate = &d
	} else {
		a.OpeningDate = nil
	}
	a.InstitutionName = web.NonEmpty(f.text("institution_name", "Institution", maxName, false))
}

func (h *Handler) createAccount(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	a := &models.Account{FamilyID: u.FamilyID}
	readAccount(f, a)
	if !f.ok() {
		return h.accountForm(c, fiber.StatusUnprocessableEntity, accountFormData{Form: f})
	}
	if err := h.store.CreateAccount(c.UserContext(), a); err != nil {
		return err
	}
	// An account in another currency gets its rates now, not at the next
	// daily run.
	if err := jobs.QueueExchangeRatesIfMissing(c.UserContext(), h.store, h.queue, a.FamilyID, a.ID); err != nil {
		h.log.Error("exchange rates for a new account", "family_id", a.FamilyID, "error", err)
	}
	return h.site.Redirect(c, "/accounts/"+a.ID.String(), "Account "+a.Name+" added.")
}

// familyAccount loads the :id account of the signed-in family; another
// family's id is a 404.
func (h *Handler) familyAccount(c *fiber.Ctx) (*models.Account, error) {
	return byPath(c, h.store.Account)
}

func (h *Handler) editAccount(c *fiber.Ctx) error {
	a, err := h.familyAccount(c)
	if err != nil {
		return err
	}
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	f.Values = map[string]string{"name": a.Name, "account_type": a.AccountType, "currency": a.Currency,
		"opening_balance": f.amountValue(a.OpeningBalance), "institution_name": deref(a.InstitutionName)}
	if d, set, err := h.store.OpeningDate(c.UserContext(), a.FamilyID, a.ID); err != nil {
		return err
	} else if set {
		f.Values["opening_balance_date"] = string(*d)
	}
	return h.accountForm(c, fiber.StatusOK, accountFormData{Form: f, Account: a, Updated: stamp(a.UpdatedAt)})
}

func (h *Handler) updateAccount(c *fiber.Ctx) error {
	a, err := h.familyAccount(c)
	if err != nil {
		return err
	}
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	if f.value("updated") != stamp(a.UpdatedAt) {
		return h.accountForm(c, fiber.StatusConflict, accountFormData{Form: f, Account: a, Updated: stamp(a.UpdatedAt)}.
			stale("This account was changed by someone else since you opened the form. Check the values and save again."))
	}
	readAccount(f, a)
	if !f.ok() {
		return h.accountForm(c, fiber.StatusUnprocessableEntity, accountFormData{Form: f, Account: a, Updated: stamp(a.UpdatedAt)})
	}
	if err := h.store.UpdateAccount(c.UserContext(), a, "name", "account_type", "currency", "opening_balance", "opening_balance_date", "institution_name"); err != nil {
		return err
	}
	return h.site.Redirect(c, "/accounts/"+a.ID.String(), "Account saved.")
}

// stale puts the stale-form message on the form, keeping what was typed.
func (d accountFormData) stale(msg string) accountFormData {
	d.Form.Errors["form"] = msg
	return d
}

// archiveAccount hides an account from the dashboard and the lists while
// keeping its history; unarchive brings it back.
func (h *Handler) archiveAccount(c *fiber.Ctx) error {
	a, err := h.familyAccount(c)
	if err != nil {
		return err
	}
	msg := "Account " + a.Name + " archived."
	a.Status = models.AccountDisabled
	if c.FormValue("unarchive") == "1" {
		a.Status, msg = models.AccountActive, "Account "+a.Name+" restored."
	}
	if err := h.store.UpdateAccount(c.UserContext(), a, "status"); err != nil {
		return err
	}
	return h.site.Redirect(c, "/accounts/"+a.ID.String(), msg)
}

type accountDeleteData struct {
	Account      *models.Account
	Transactions int
}

// confirmDeleteAccount says what deleting takes with it before it is done.
func (h *Handler) confirmDeleteAccount(c *fiber.Ctx) error {
	a, err := h.familyAccount(c)
	if err != nil {
		return err
	}
	_, n, err := h.store.Transactions(c.UserContext(), a.FamilyID, models.TransactionFilter{AccountIDs: []uuid.UUID{a.ID}}, models.Page{Number: 1, Size: 1})
	if err != nil {
		return err
	}
	return h.pages.Render(c, fiber.StatusOK, "account_delete", web.Page{Nav: "accounts", Title: "Delete " + a.Name,
		Data: accountDeleteData{Account: a, Transactions: n}})
}

func (h *Handler) deleteAccount(c *fiber.Ctx) error {
	a, err := h.familyAccount(c)
	if err != nil {
		return err
	}
	if err := h.store.DeleteAccount(c.UserContext(), a.FamilyID, a.ID); err != nil && !errors.Is(err, models.ErrNotFound) {
		return err
	}
	return h.site.Redirect(c, "/accounts", "Account "+a.Name+" deleted, with its transactions.")
}

// registerLine is one row of an account's register: a transaction, or a
// valuation (Valuation set); Balance is set when the register is in full
// (no search), as the balance after the row.
type registerLine struct {
	*models.Transaction
	Valuation *models.Valuation
	Balance   *money.Amount
	// Moved is a valuation's adjustment as a transaction's amount would
	// be stored (positive: money out of an asset, more owed on a debt),
	// so that it shows as money in or out.
	Moved money.Amount
}

type accountData struct {
	Account *models.Account
	Rows    []registerLine
	Query   url.Values
	Pager   pager
	Chart   template.HTML
	Series  []models.SeriesPoint
	// Reconciliations are the account's checks against its statements.
	Reconciliations accountReconciliations
	// Opening is the day the opening balance is dated (nil: none yet);
	// OpeningSet whether a person set it.
	Opening    *civil.Date
	OpeningSet bool
	// Value is the "Update value" form.
	Value *form
	Today civil.Date
	// Home is the family's currency; ConvertedBalance is the balance in
	// it, at the rate of RateDate, for an account in another (nil: none
	// or no rate).
	Home             string
	ConvertedBalance *money.Amount
	Rate             *models.RateQuote
}

// showAccount is an account's register: its transactions and valuations,
// newest first, with the running balance, and the balance over the last
// year.
func (h *Handler) showAccount(c *fiber.Ctx) error {
	a, err := h.familyAccount(c)
	if err != nil {
		return err
	}
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	return h.accountPage(c, fiber.StatusOK, a, f)
}

// accountPage draws the account page with value as its "Update value"
// form (as typed, with its problems, after a refused submit).
func (h *Handler) accountPage(c *fiber.Ctx, status int, a *models.Account, value *form) error {
	ctx := c.UserContext()
	var err error
	p := pageOf(c, 50)
	p.CountUpTo = listCountUpTo
	today := civil.DateOf(h.now())
	d := accountData{Account: a, Query: url.Values{}, Value: value, Today: today}
	fam, err := h.store.Family(ctx, a.FamilyID)
	if err != nil {
		return err
	}
	if d.Home = fam.Currency; a.Currency != d.Home {
		q, ok, err := h.store.Quote(ctx, a.FamilyID, a.Currency, d.Home, today)
		if err != nil {
			return err
		}
		if conv, err := money.Convert(a.Balance, q.Rate); ok && err == nil {
			d.ConvertedBalance, d.Rate = &conv, &q
		}
	}
	if _, ok := value.Values["date"]; !ok {
		value.Values["date"] = string(today)
	}
	if d.Opening, d.OpeningSet, err = h.store.OpeningDate(ctx, a.FamilyID, a.ID); err != nil {
		return err
	}
	var total int
	if search := clipQuery(c.Query("q")); search != "" {
		d.Query.Set("q", search)
		f := models.TransactionFilter{AccountIDs: []uuid.UUID{a.ID}, Search: search, WithSplitParents: true}
		rows, n, err := h.store.Transactions(ctx, a.FamilyID, f, p)
		if err != nil {
			return err
		}
		for _, r := range rows {
			d.Rows = append(d.Rows, registerLine{Transaction: r})
		}
		total = n
	} else {
		rows, n, err := h.store.AccountRegister(ctx, a.FamilyID, a.ID, p)
		if err != nil {
			return err
		}
		for i := range rows {
			line := registerLine{Transaction: &rows[i].Transaction, Valuation: rows[i].Valuation, Balance: &rows[i].Balance}
			if v := rows[i].Valuation; v != nil {
				line.Moved = -v.Adjustment
				if models.Liability(a.AccountType) {
					line.Moved = v.Adjustment
				}
			}
			d.Rows = append(d.Rows, line)
		}
		total = n
	}
	d.Rows = groupSplits(d.Rows, func(l registerLine) *models.Transaction { return l.Transaction })
	d.Pager = newPager(d.Query, p, total)
	year := models.Period{From: civil.DateOf(h.now().AddDate(-1, 0, 0)), To: today}
	if d.Series, err = h.store.AccountBalanceSeries(ctx, a.FamilyID, a.ID, year, models.Week); err != nil {
		return err
	}
	d.Chart = lineChart(a.Name+" balance over the last year", a.Currency, d.Series)
	if d.Reconciliations, err = h.accountReconciliations(c, a); err != nil {
		return err
	}
	return h.pages.Render(c, status, "account", web.Page{Nav: "accounts", Title: a.Name, Data: d})
}
