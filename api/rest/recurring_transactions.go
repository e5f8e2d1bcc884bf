package rest

import (
	"encoding/json"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/models"
	"coffer/models/money"
	"coffer/models/recur"
)

// listRecurringTransactions is GET /api/v1/recurring_transactions, by
// status then next expected date, filtered by status and account_id as
// the reference does (an account_id that is not a UUID is a 422 there).
func (h *Handler) listRecurringTransactions(c *fiber.Ctx) error {
	var f models.RecurringFilter
	if c.Query("account_id") != "" {
		id, err := queryID(c, "account_id")
		if err != nil {
			return httperr.New(fiber.StatusUnprocessableEntity, "validation_failed", "account_id must be a valid UUID")
		}
		f.AccountID = id
	}
	f.Status = c.Query("status") // used during the request only
	rows, page, err := listPage(c, withFilter(h.store.RecurringTransactions, f), renderRecurring)
	if err != nil {
		return err
	}
	return c.JSON(recurringListJSON{RecurringTransactions: rows, Pagination: page})
}

func (h *Handler) showRecurringTransaction(c *fiber.Ctx) error {
	return showOne(c, h.store.RecurringTransaction, renderRecurring)
}

func (h *Handler) createRecurringTransaction(c *fiber.Ctx) error {
	r := &models.RecurringTransaction{FamilyID: KeyOf(c).FamilyID, Manual: true, Cadence: string(recur.Monthly)}
	f, err := decodeObject(c, "recurring_transaction")
	if err != nil {
		return err
	}
	recurringFields(f, r, true)
	if err := f.err(); err != nil {
		return err
	}
	ctx := c.UserContext()
	if err := h.store.CreateRecurringTransaction(ctx, r); err != nil {
		return err
	}
	// Read back with its account and merchant, for the answer.
	out, err := h.store.RecurringTransaction(ctx, r.FamilyID, r.ID)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(renderRecurring(out))
}

func (h *Handler) updateRecurringTransaction(c *fiber.Ctx) error {
	id, f, err := idAndObject(c, "recurring_transaction")
	if err != nil {
		return err
	}
	ctx, familyID := c.UserContext(), KeyOf(c).FamilyID
	r, err := h.store.RecurringTransaction(ctx, familyID, id)
	if err != nil {
		return err
	}
	cols := recurringFields(f, r, false)
	if err := f.err(); err != nil {
		return err
	}
	if len(cols) > 0 {
		if err := h.store.UpdateRecurringTransaction(ctx, r, cols...); err != nil {
			return err
		}
	}
	return c.JSON(renderRecurring(r))
}

func (h *Handler) deleteRecurringTransaction(c *fiber.Ctx) error {
	return deleteOne(c, h.store.DeleteRecurringTransaction, "Recurring transaction")
}

// recurringFields applies the members present in f to r and returns the
// columns they change. A create reads the reference's create parameters
// (and our cadence, monthly when absent); an update its update parameters
// and amount, name and cadence.
func recurringFields(f *fields, r *models.RecurringTransaction, create bool) []string {
	var cols []string
	if create {
		r.AccountID = f.id("account_id")
		r.MerchantID = f.id("merchant_id")
		if s, ok := f.str("name", maxName, true); ok {
			r.Name = s
		}
		if a, ok := f.amount("amount"); ok {
			r.Amount = a
		} else if !f.bad("amount") {
			f.add("amount is required")
		}
		if cur, ok := f.currency("currency"); ok {
			r.Currency = cur
		} else if !f.bad("currency") {
			f.add("currency is required")
		}
		if d, ok := f.date("last_occurrence_date"); ok {
			r.LastDate = &d
		} else if !f.bad("last_occurrence_date") {
			f.add("last_occurrence_date can't be blank")
		}
		if n, ok := f.integer("occurrence_count"); ok {
			r.Occurrences = n
		}
		if v, ok := f.boolean("manual"); ok {
			r.Manual = v
		}
		if a, ok := f.amount("expected_amount_min"); ok {
			r.AmountMin = &a
		}
		if a, ok := f.amount("expected_amount_max"); ok {
			r.AmountMax = &a
		}
		if r.AmountMin != nil && r.AmountMax != nil && *r.AmountMin > *r.AmountMax {
			f.add("expected_amount_min cannot be greater than expected_amount_max")
		}
	} else {
		if s, ok := f.str("name", maxName, true); ok {
			r.Name, cols = s, append(cols, "name")
		}
		if a, ok := f.amount("amount"); ok {
			r.Amount, cols = a, append(cols, "amount")
		}
	}
	if f.has("cadence") {
		if s, ok := f.str("cadence", 16, true); ok {
			r.Cadence, cols = s, append(cols, "cadence")
		}
	}
	if s, ok := f.str("status", 16, true); ok {
		r.Status, cols = s, append(cols, "status")
	}
	if n, ok := f.integer("expected_day_of_month"); ok {
		r.ExpectedDay, cols = n, append(cols, "expected_day_of_month")
	} else if create && !f.bad("expected_day_of_month") && r.LastDate != nil {
		r.ExpectedDay = r.LastDate.Time().Day() // the reference's default: the last occurrence's day
	}
	if d, ok := f.date("next_expected_date"); ok {
		r.NextDate, cols = d, append(cols, "next_expected_date")
	} else if (create || f.has("next_expected_date")) && !f.bad("next_expected_date") {
		f.add("next_expected_date can't be blank")
	}
	if v, ok := f.boolean("autopay"); ok {
		r.Autopay, cols = v, append(cols, "autopay")
	}
	if f.has("notes") {
		r.Notes, cols = nil, append(cols, "notes")
		if s, ok := f.str("notes", maxNotes, false); ok && s != "" {
			r.Notes = &s
		}
	}
	return cols
}

// integer returns a JSON integer member (or a string of one); absent or
// null gives ok false.
func (f *fields) integer(name string) (int, bool) {
	raw, present := f.raw[name]
	if !present || f.isNull(name) {
		return 0, false
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			f.add(name + " must be an integer")
			return 0, false
		}
		n = json.Number(s)
	}
	v, err := strconv.Atoi(n.String())
	if err != nil || v < -1_000_000 || v > 1_000_000 {
		f.add(name + " must be an integer")
		return 0, false
	}
	return v, true
}

type recurringListJSON struct {
	RecurringTransactions []recurringJSON `json:"recurring_transactions"`
	Pagination            Pagination      `json:"pagination"`
}

// recurringJSON is the reference's shape, plus cadence and the previous
// amount of a price change.
type recurringJSON struct {
	ID                     string           `json:"id"`
	Amount                 string           `json:"amount"`
	AmountCents            int64            `json:"amount_cents"`
	Currency               string           `json:"currency"`
	Cadence                string           `json:"cadence"`
	ExpectedDayOfMonth     int              `json:"expected_day_of_month"`
	LastOccurrenceDate     *string          `json:"last_occurrence_date"`
	NextExpectedDate       string           `json:"next_expected_date"`
	Status                 string           `json:"status"`
	OccurrenceCount        int              `json:"occurrence_count"`
	Name                   string           `json:"name"`
	Manual                 bool             `json:"manual"`
	PaymentURL             *string          `json:"payment_url"`
	Autopay                bool             `json:"autopay"`
	Notes                  *string          `json:"notes"`
	PreviousAmount         *string          `json:"previous_amount"`
	PreviousAmountCents    *int64           `json:"previous_amount_cents"`
	ExpectedAmountMin      *string          `json:"expected_amount_min"`
	ExpectedAmountMinCents *int64           `json:"expected_amount_min_cents"`
	ExpectedAmountMax      *string          `json:"expected_amount_max"`
	ExpectedAmountMaxCents *int64           `json:"expected_amount_max_cents"`
	ExpectedAmountAvg      *string          `json:"expected_amount_avg"`
	ExpectedAmountAvgCents *int64           `json:"expected_amount_avg_cents"`
	CreatedAt              string           `json:"created_at"`
	UpdatedAt              string           `json:"updated_at"`
	Account                *recurringAcct   `json:"account"`
	Merchant               *merchantRefJSON `json:"merchant"`
}

type recurringAcct struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	AccountType *string `json:"account_type"`
}

func renderRecurring(r *models.RecurringTransaction) recurringJSON {
	in := moneyIn(r.Currency)
	opt := func(a *money.Amount) (*string, *int64) {
		if a == nil {
			return nil, nil
		}
		s, n := in(*a)
		return &s, &n
	}
	out := recurringJSON{ID: r.ID.String(), Currency: r.Currency, Cadence: r.Cadence, ExpectedDayOfMonth: r.ExpectedDay,
		NextExpectedDate: string(r.NextDate), Status: r.Status, OccurrenceCount: r.Occurrences, Name: r.Name,
		Manual: r.Manual, Autopay: r.Autopay, Notes: r.Notes, CreatedAt: timestamp(r.CreatedAt), UpdatedAt: timestamp(r.UpdatedAt)}
	out.Amount, out.AmountCents = in(r.Amount)
	out.PreviousAmount, out.PreviousAmountCents = opt(r.PreviousAmount)
	out.ExpectedAmountMin, out.ExpectedAmountMinCents = opt(r.AmountMin)
	out.ExpectedAmountMax, out.ExpectedAmountMaxCents = opt(r.AmountMax)
	if r.LastDate != nil {
		d := string(*r.LastDate)
		out.LastOccurrenceDate = &d
	}
	if r.Account != nil {
		out.Account = &recurringAcct{ID: r.Account.ID.String(), Name: r.Account.Name, AccountType: nonEmpty(r.Account.AccountType)}
	}
	if r.Merchant != nil {
		out.Merchant = &merchantRefJSON{ID: r.Merchant.ID.String(), Name: r.Merchant.Name}
		if out.Name == "" {
			out.Name = r.Merchant.Name
		}
	}
	return out
}
