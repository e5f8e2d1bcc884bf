package rest

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// transactionInput is a parsed transaction body; pointers are nil for
// members that were absent.
type transactionInput struct {
	accountID  *uuid.UUID
	date       *civil.Date
	amount     *money.Amount
	name       *string
	notes      *string
	currency   *string
	categoryID *uuid.UUID
	merchantID *uuid.UUID
	nature     string
	externalID string
	source     string
	tagIDs     []uuid.UUID
	hasTags    bool
}

// parseTransaction reads the members of a transaction body. With create,
// the required ones must be present.
func parseTransaction(f *fields, create bool) transactionInput {
	var in transactionInput
	in.accountID = f.id("account_id")
	if create && in.accountID == nil && !f.bad("account_id") {
		f.add("account_id is required")
	}
	if d, ok := f.date("date"); ok {
		in.date = &d
	} else if create && !f.bad("date") {
		f.add("date is required")
	}
	if a, ok := f.amount("amount"); ok {
		in.amount = &a
	} else if create && !f.bad("amount") {
		f.add("amount is required")
	}
	name, ok := f.str("name", maxName, true)
	if !ok || name == "" {
		// description is the reference's other name for the same field.
		if d, dok := f.str("description", maxName, true); dok && d != "" && !f.bad("name") {
			name, ok = d, true
		}
	}
	switch {
	case ok && name != "":
		in.name = &name
	case f.bad("name") || f.bad("description"):
	case create || f.has("name"):
		f.add("name can't be blank")
	}
	if n, ok := f.str("notes", maxNotes, false); ok {
		in.notes = &n
	}
	if c, ok := f.currency("currency"); ok {
		in.currency = &c
	}
	in.categoryID = f.id("category_id")
	in.merchantID = f.id("merchant_id")
	if n, ok := f.str("nature", 32, true); ok {
		in.nature = strings.ToLower(n)
		switch in.nature {
		case "income", "inflow", "expense", "outflow":
		default:
			f.add("nature must be one of: income, expense, inflow, outflow")
		}
	}
	in.externalID, _ = f.key("external_id")
	in.source, _ = f.key("source")
	if in.source != "" && in.externalID == "" && !f.bad("external_id") {
		f.add("source requires external_id")
	}
	if in.externalID != "" && in.source == "" {
		in.source = "api"
	}
	if in.source == "simplefin" {
		// Rows keyed by this source belong to the bank import; a replay of
		// one is still answered (the replay lookup comes first).
		f.add("source simplefin is reserved for imported transactions")
	}
	in.hasTags = f.has("tag_ids")
	in.tagIDs = f.ids("tag_ids")
	return in
}

// signed applies nature to an amount: income and inflow are stored
// negative (money in), expense and outflow positive; no nature keeps the
// sign the client sent.
func signed(a money.Amount, nature string) money.Amount {
	switch nature {
	case "income", "inflow":
		return -a.Abs()
	case "expense", "outflow":
		return a.Abs()
	}
	return a
}

func (h *Handler) createTransaction(c *fiber.Ctx) error {
	key := KeyOf(c)
	f, err := decodeObject(c, "transaction")
	if err != nil {
		return err
	}
	row := newTransaction(parseTransaction(f, true), f.problems, key.Family.Currency)
	// The store reports the balance change to the one policy (jobs.Balances).
	if _, err := h.store.IngestTransactions(c.UserContext(), key.FamilyID, []*models.NewTransaction{row}); err != nil {
		return err
	}
	switch row.Status {
	case models.IngestCreated:
		return c.Status(fiber.StatusCreated).JSON(renderTransaction(row.Row))
	case models.IngestExisting, models.IngestDuplicate: // a replay, or a movement another door wrote: the stored row
		return c.Status(fiber.StatusOK).JSON(renderTransaction(row.Row))
	}
	return httperr.Invalid(row.Problems)
}

// newTransaction is a parsed create body as a row for the ingestion
// pipeline, with the problems its parsing found. A row with problems may
// be partial: the pipeline still recognises a replay of its key, and
// checks its references to report every problem at once.
func newTransaction(in transactionInput, problems []string, familyCurrency string) *models.NewTransaction {
	t := &models.Transaction{Currency: familyCurrency, Notes: in.notes, CategoryID: in.categoryID, MerchantID: in.merchantID}
	if in.accountID != nil {
		t.AccountID = *in.accountID
	}
	if in.date != nil {
		t.Date = *in.date
	}
	if in.amount != nil {
		t.Amount = signed(*in.amount, in.nature)
	}
	if in.name != nil {
		t.Name = *in.name
	}
	if in.currency != nil {
		t.Currency = *in.currency
	}
	if in.externalID != "" {
		ext, src := in.externalID, in.source
		t.ExternalID, t.Source = &ext, &src
	}
	return &models.NewTransaction{Row: t, TagIDs: in.tagIDs, Problems: problems}
}

func (h *Handler) respondTransaction(c *fiber.Ctx, status int, id uuid.UUID) error {
	t, err := h.store.Transaction(c.UserContext(), KeyOf(c).FamilyID, id)
	if err != nil {
		return err
	}
	return c.Status(status).JSON(renderTransaction(t))
}

func (h *Handler) showTransaction(c *fiber.Ctx) error {
	return showOne(c, h.store.Transaction, renderTransaction)
}

func (h *Handler) updateTransaction(c *fiber.Ctx) error {
	ctx := c.UserContext()
	key := KeyOf(c)
	id, f, err := idAndObject(c, "transaction")
	if err != nil {
		return err
	}
	in := parseTransaction(f, false)
	if err := f.err(); err != nil {
		return err
	}
	t, err := h.store.Transaction(ctx, key.FamilyID, id)
	if err != nil {
		return err
	}
	cols := reconcileMembers(f, t)
	if err := f.err(); err != nil {
		return err
	}
	set := func(col string, apply func()) {
		apply()
		cols = append(cols, col)
	}
	if in.accountID != nil {
		set("account_id", func() { t.AccountID = *in.accountID })
	}
	if in.date != nil {
		set("date", func() { t.Date = *in.date })
	}
	if in.amount != nil {
		set("amount", func() { t.Amount = signed(*in.amount, in.nature) })
	} else if in.nature != "" {
		set("amount", func() { t.Amount = signed(t.Amount, in.nature) })
	}
	if in.name != nil {
		set("name", func() { t.Name = *in.name })
	}
	if in.notes != nil || f.isNull("notes") {
		set("notes", func() { t.Notes = in.notes })
	}
	if in.currency != nil {
		set("currency", func() { t.Currency = *in.currency })
	}
	if in.categoryID != nil || f.isNull("category_id") {
		set("category_id", func() { t.CategoryID = in.categoryID })
	}
	if in.merchantID != nil || f.isNull("merchant_id") {
		set("merchant_id", func() { t.MerchantID = in.merchantID })
	}
	if in.externalID != "" {
		set("external_id", func() { t.ExternalID = &in.externalID })
		set("source", func() { t.Source = &in.source })
	}
	var tags *[]uuid.UUID
	if in.hasTags {
		ids := in.tagIDs
		tags = &ids
	}
	if _, err := h.store.UpdateTransaction(ctx, t, cols, tags); err != nil {
		return err
	}
	return h.respondTransaction(c, fiber.StatusOK, id)
}

func (h *Handler) deleteTransaction(c *fiber.Ctx) error {
	if _, err := byPathID(c, h.store.DeleteTransaction); err != nil {
		return err
	}
	return deleted(c, "Transaction")
}
