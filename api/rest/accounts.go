package rest

import (
	"github.com/gofiber/fiber/v2"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/money"
)

type accountsJSON struct {
	Accounts   []accountJSON `json:"accounts"`
	Pagination Pagination    `json:"pagination"`
}

func (h *Handler) listAccounts(c *fiber.Ctx) error {
	as, page, err := listPage(c, h.store.Accounts, renderAccount)
	if err != nil {
		return err
	}
	return c.JSON(accountsJSON{Accounts: as, Pagination: page})
}

func (h *Handler) showAccount(c *fiber.Ctx) error {
	a, err := byPathID(c, h.store.Account)
	if err != nil {
		return err
	}
	return h.renderOneAccount(c, fiber.StatusOK, a)
}

// renderOneAccount answers one account with the day of its opening
// balance, which lists leave out (a read per account).
func (h *Handler) renderOneAccount(c *fiber.Ctx, status int, a *models.Account) error {
	js := renderAccount(a)
	d, _, err := h.store.OpeningDate(c.UserContext(), a.FamilyID, a.ID)
	if err != nil {
		return err
	}
	if d != nil {
		s := string(*d)
		js.OpeningBalanceDate = &s
	}
	return c.Status(status).JSON(js)
}

// accountFields applies the members present in f to a and returns the
// columns they change.
func accountFields(f *fields, a *models.Account, create bool) []string {
	var cols []string
	if create || f.has("name") {
		a.Name = f.required("name", maxName)
		cols = append(cols, "name")
	}
	if t, ok := f.oneOf("account_type", models.AccountTypes...); ok {
		a.AccountType = t
		cols = append(cols, "account_type")
	} else if create && !f.bad("account_type") {
		f.add("account_type is required")
	}
	if s, ok := f.str("subtype", 64, true); ok || f.isNull("subtype") {
		a.Subtype = nonEmpty(s)
		cols = append(cols, "subtype")
	}
	if cur, ok := f.currency("currency"); ok {
		a.Currency = cur
		cols = append(cols, "currency")
	}
	if st, ok := f.oneOf("status", models.AccountActive, models.AccountDisabled, models.AccountPendingDeletion); ok {
		a.Status = st
		cols = append(cols, "status")
	}
	if b, ok := f.amount("balance"); ok {
		a.OpeningBalance = b
		cols = append(cols, "opening_balance")
	}
	if d, ok := openingDate(f); ok {
		a.OpeningDate = d
		cols = append(cols, "opening_balance_date")
	}
	for _, m := range []struct {
		name string
		dst  **string
	}{{"institution_name", &a.InstitutionName}, {"institution_domain", &a.InstitutionDomain}} {
		if s, ok := f.str(m.name, maxName, true); ok || f.isNull(m.name) {
			*m.dst = nonEmpty(s)
			cols = append(cols, m.name)
		}
	}
	return cols
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (h *Handler) createAccount(c *fiber.Ctx) error {
	ctx, k := c.UserContext(), KeyOf(c)
	f, err := decodeObject(c, "account")
	if err != nil {
		return err
	}
	a := &models.Account{FamilyID: k.FamilyID}
	accountFields(f, a, true)
	if err := f.err(); err != nil {
		return err
	}
	if a.Currency == "" {
		a.Currency = k.Family.Currency
	}
	if err := h.store.CreateAccount(ctx, a); err != nil {
		return err
	}
	if a.Currency != k.Family.Currency { // its rates are fetched now, not at the next daily run
		if err := jobs.QueueExchangeRatesIfMissing(ctx, h.store, h.queue, k.FamilyID, a.ID); err != nil {
			h.log.Error("exchange rates for a new account", "family_id", k.FamilyID, "error", err)
		}
	}
	return h.renderOneAccount(c, fiber.StatusCreated, a)
}

func (h *Handler) updateAccount(c *fiber.Ctx) error {
	ctx, k := c.UserContext(), KeyOf(c)
	id, f, err := idAndObject(c, "account")
	if err != nil {
		return err
	}
	a, err := h.store.Account(ctx, k.FamilyID, id)
	if err != nil {
		return err
	}
	cols := accountFields(f, a, false)
	if err := f.err(); err != nil {
		return err
	}
	if len(cols) > 0 {
		if err := h.store.UpdateAccount(ctx, a, cols...); err != nil {
			return err
		}
	}
	return h.renderOneAccount(c, fiber.StatusOK, a)
}

func (h *Handler) deleteAccount(c *fiber.Ctx) error {
	return deleteOne(c, h.store.DeleteAccount, "Account")
}

type accountJSON struct {
	ID                string  `json:"id"`
	Name              string  `json:"name"`
	Balance           string  `json:"balance"`
	BalanceCents      int64   `json:"balance_cents"`
	CashBalance       string  `json:"cash_balance"`
	CashBalanceCents  int64   `json:"cash_balance_cents"`
	Currency          string  `json:"currency"`
	Classification    string  `json:"classification"`
	AccountType       *string `json:"account_type"`
	Subtype           *string `json:"subtype"`
	Status            string  `json:"status"`
	InstitutionName   *string `json:"institution_name"`
	InstitutionDomain *string `json:"institution_domain"`
	BalanceError      *string `json:"balance_error"`
	// OpeningBalanceDate is the day the opening balance is dated (see
	// models.Store.OpeningDate); one account's answer only.
	OpeningBalanceDate *string `json:"opening_balance_date,omitempty"`
	CreatedAt          string  `json:"created_at"`
	UpdatedAt          string  `json:"updated_at"`
}

func renderAccount(a *models.Account) accountJSON {
	cur := money.MustCurrency(a.Currency)
	return accountJSON{
		ID:                a.ID.String(),
		Name:              a.Name,
		Balance:           a.Balance.Format(cur),
		BalanceCents:      a.Balance.Minor(cur),
		CashBalance:       a.CashBalance.Format(cur),
		CashBalanceCents:  a.CashBalance.Minor(cur),
		Currency:          a.Currency,
		Classification:    a.Classification(),
		AccountType:       nonEmpty(a.AccountType),
		Subtype:           a.Subtype,
		Status:            a.Status,
		InstitutionName:   a.InstitutionName,
		InstitutionDomain: a.InstitutionDomain,
		BalanceError:      a.BalanceError,
		CreatedAt:         timestamp(a.CreatedAt),
		UpdatedAt:         timestamp(a.UpdatedAt),
	}
}
