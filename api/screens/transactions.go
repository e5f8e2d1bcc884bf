package screens

import (
	"errors"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// choices are the family's accounts, categories, merchants and tags, for
// the selects of filters and forms.
type choices struct {
	Accounts   []models.Account
	Categories []models.Category
	Merchants  []models.Merchant
	Tags       []models.Tag
	// Home is the family's currency: an amount in another names its own.
	Home string
}

func (h *Handler) choices(c *fiber.Ctx) (choices, error) {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	var ch choices
	fm, err := h.store.Family(ctx, fam)
	if err != nil {
		return ch, err
	}
	ch.Home = fm.Currency
	if ch.Accounts, _, err = h.store.Accounts(ctx, fam, models.Page{Number: 1, Size: 500}); err != nil {
		return ch, err
	}
	if ch.Categories, _, err = h.store.Categories(ctx, fam, models.Page{Number: 1, Size: 500}); err != nil {
		return ch, err
	}
	ch.Categories = nestedCategories(ch.Categories)
	if ch.Merchants, err = h.store.Merchants(ctx, fam); err != nil {
		return ch, err
	}
	ch.Tags, err = h.store.Tags(ctx, fam)
	return ch, err
}

type transactionsData struct {
	choices
	Rows   []listLine
	Filter url.Values // the filters as typed, for the form and the page links
	Errors map[string]string
	Pager  pager
}

// listLine is one row of the transactions list, as the list draws it and
// as the inline edit of its category redraws it.
type listLine struct {
	*models.Transaction
	Back    string // the list with its filters, where the edit form returns
	Updated string // the version the row was drawn at, for the stale check
	Problem string // why the inline edit was refused
	Home    string // the family's currency
}

func newListLine(t *models.Transaction, back, home string) listLine {
	return listLine{Transaction: t, Back: back, Updated: stamp(t.UpdatedAt), Home: home}
}

// readFilter turns the filter form's query into a store filter; a value
// that does not parse is reported beside its field and ignored.
func readFilter(c *fiber.Ctx) (models.TransactionFilter, url.Values, map[string]string) {
	var f models.TransactionFilter
	q, problems := url.Values{}, map[string]string{}
	keep := func(name string) string {
		v := clipQuery(c.Query(name))
		if v != "" {
			q.Set(name, v)
		}
		return v
	}
	f.Search = keep("q")
	for _, sel := range []struct {
		name string
		dst  *[]uuid.UUID
	}{{"account_id", &f.AccountIDs}, {"category_id", &f.CategoryIDs}, {"merchant_id", &f.MerchantIDs}, {"tag_id", &f.TagIDs}} {
		if v := keep(sel.name); v != "" {
			if sel.name == "category_id" && v == "none" {
				f.Uncategorized = true // the first job after an import: file what no rule filed
			} else if id, err := uuid.Parse(v); err == nil {
				*sel.dst = []uuid.UUID{id}
			} else {
				problems[sel.name] = "Not one of the choices."
			}
		}
	}
	for _, d := range []struct {
		name string
		dst  *civil.Date
	}{{"from", &f.StartDate}, {"to", &f.EndDate}} {
		if v := keep(d.name); v != "" {
			if date, err := civil.ParseDate(v); err == nil {
				*d.dst = date
			} else {
				problems[d.name] = "Use a date such as 2026-01-31."
			}
		}
	}
	switch t := keep("type"); t {
	case "", "income", "expense":
		f.Type = t
	default:
		problems["type"] = "Not one of the choices."
	}
	// Amount bounds are on the size of the amount, whichever way it went.
	for _, b := range []struct {
		name string
		dst  **money.Amount
	}{{"min", &f.MinAmount}, {"max", &f.MaxAmount}} {
		if v := keep(b.name); v != "" {
			if a, err := money.ParseAmount(v); err == nil && a >= 0 {
				*b.dst = &a
			} else {
				problems[b.name] = "Use a positive amount such as 12.50."
			}
		}
	}
	if f.MinAmount != nil || f.MaxAmount != nil {
		f.AbsAmount = true
	}
	return f, q, problems
}

// listCountUpTo is where the transactions list and a register stop
// counting: past it the pager says "at least", so that a page costs what
// its own rows cost, whether the family has a thousand transactions or a
// million, and a search stops reading once it has found that many (see
// BenchmarkScale).
const listCountUpTo = 250

func (h *Handler) listTransactions(c *fiber.Ctx) error {
	fam := web.SessionOf(c).User.FamilyID
	ch, err := h.choices(c)
	if err != nil {
		return err
	}
	f, q, problems := readFilter(c)
	f.WithSplitParents = true // drawn with their parts beneath them
	p := pageOf(c, 50)
	p.CountUpTo = listCountUpTo
	rows, total, err := h.store.Transactions(c.UserContext(), fam, f, p)
	if err != nil {
		return err
	}
	rows = groupSplits(rows, func(t *models.Transaction) *models.Transaction { return t })
	back, lines := "/transactions?"+q.Encode(), make([]listLine, len(rows))
	for i, t := range rows {
		lines[i] = newListLine(t, back, ch.Home)
	}
	return h.pages.Render(c, fiber.StatusOK, "transactions", web.Page{Nav: "transactions", Title: "Transactions",
		Data: transactionsData{choices: ch, Rows: lines, Filter: q, Errors: problems, Pager: newPager(q, p, total)}})
}

type transactionFormData struct {
	choices
	Form    *form
	Tx      *models.Transaction // nil: a new transaction
	Updated string
	TagSet  map[string]bool
}

func (h *Handler) transactionForm(c *fiber.Ctx, status int, d transactionFormData) error {
	ch, err := h.choices(c)
	if err != nil {
		return err
	}
	d.choices = ch
	title := "New transaction"
	if d.Tx != nil {
		title = "Edit transaction"
	}
	return h.pages.Render(c, status, "transaction_form", web.Page{Nav: "transactions", Title: title, Data: d})
}

func (h *Handler) newTransaction(c *fiber.Ctx) error {
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	f.Values["date"] = string(civil.DateOf(h.now()))
	f.Values["type"] = "expense"
	f.Values["account_id"] = clipQuery(c.Query("account_id"))
	return h.transactionForm(c, fiber.StatusOK, transactionFormData{Form: f})
}

// readTransaction applies the form to t: a positive Amount and a Type
// (expense: money out, stored positive; income: money in, stored
// negative).
func readTransaction(f *form, t *models.Transaction) []uuid.UUID {
	if id := f.id("account_id", "Account"); id != nil {
		t.AccountID = *id
	} else if _, bad := f.Errors["account_id"]; !bad {
		f.fail("account_id", "Choose an account.")
	}
	if d, ok := f.date("date", "Date", true); ok {
		t.Date = d
	}
	kind := f.oneOf("type", "Type", "expense", "income")
	if a, ok := f.amount("amount", "Amount", true); ok {
		t.Amount = a
		if kind == "income" {
			t.Amount = -a
		}
	}
	t.Name = f.text("name", "Description", maxName, true)
	t.Notes = web.NonEmpty(f.text("notes", "Notes", 10_000, false))
	t.CategoryID = f.id("category_id", "Category")
	t.MerchantID = f.id("merchant_id", "Merchant")
	return f.ids("tag_ids")
}

func (h *Handler) createTransaction(c *fiber.Ctx) error {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	t := &models.Transaction{FamilyID: fam}
	tags := readTransaction(f, t)
	if f.ok() {
		a, err := h.store.Account(ctx, fam, t.AccountID)
		switch {
		case errors.Is(err, models.ErrNotFound):
			f.fail("account_id", "Choose an account.")
		case err != nil:
			return err
		default:
			t.Currency = a.Currency
		}
	}
	if f.ok() {
		_, _, err := h.store.CreateTransaction(ctx, t, tags)
		if !formProblems(f, err) {
			if err != nil {
				return err
			}
			return h.site.Redirect(c, returnTo(c, "/transactions"), "Transaction added.")
		}
	}
	return h.transactionForm(c, fiber.StatusUnprocessableEntity, transactionFormData{Form: f, TagSet: tagSet(tags)})
}

// formProblems puts a store's refusal (a reference gone in between) on
// the form and reports whether there was one.
func formProblems(f *form, err error) bool {
	var inv *models.InvalidError
	if !errors.As(err, &inv) {
		return false
	}
	for _, p := range inv.Problems {
		f.fail("form", p)
	}
	return true
}

func tagSet(ids []uuid.UUID) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id.String()] = true
	}
	return m
}

// returnTo is the list the form came from (its filters kept), or def.
func returnTo(c *fiber.Ctx, def string) string {
	if r := web.SafeReturnTo(c.FormValue("return_to")); r != "/" {
		return r
	}
	return def
}

func (h *Handler) familyTransaction(c *fiber.Ctx) (*models.Transaction, error) {
	return byPath(c, h.store.Transaction)
}

func (h *Handler) editTransaction(c *fiber.Ctx) error {
	t, err := h.familyTransaction(c)
	if err != nil {
		return err
	}
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	kind := "expense"
	if t.Amount < 0 {
		kind = "income"
	}
	f.Values = map[string]string{"account_id": t.AccountID.String(), "date": string(t.Date), "type": kind,
		"amount": f.amountValue(t.Amount), "name": t.Name, "notes": deref(t.Notes),
		"category_id": optString(t.CategoryID), "merchant_id": optString(t.MerchantID),
		"return_to": web.SafeReturnTo(c.Query("return_to"))}
	ids := make([]uuid.UUID, len(t.Tags))
	for i, tag := range t.Tags {
		ids[i] = tag.ID
	}
	return h.transactionForm(c, fiber.StatusOK, transactionFormData{Form: f, Tx: t, Updated: stamp(t.UpdatedAt), TagSet: tagSet(ids)})
}

func optString(id *uuid.UUID) string {
	if id == nil {
		return ""
	}
	return id.String()
}

// updateTransaction saves the form. On an imported row the store locks
// every field the edit changed, so the next sync keeps the person's
// values, as the API does. The list's script sends the category alone
// (web.Fetched) and gets the redrawn row instead of a redirect, or the row
// as it stands with the problem in it; the stale check is the same.
func (h *Handler) updateTransaction(c *fiber.Ctx) error {
	t, err := h.familyTransaction(c)
	if err != nil {
		return err
	}
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	before := *t
	inline := web.Fetched(c)
	var tags []uuid.UUID
	keepTags := &tags
	if inline {
		t.CategoryID = f.id("category_id", "Category")
		keepTags = nil // the row's tags stay as they are
	} else {
		tags = readTransaction(f, t)
	}
	refuse := func(status int) error {
		if inline {
			return h.transactionRow(c, status, &before, f)
		}
		return h.transactionForm(c, status, transactionFormData{Form: f, Tx: t, Updated: stamp(before.UpdatedAt), TagSet: tagSet(tags)})
	}
	if f.value("updated") != stamp(before.UpdatedAt) {
		stale := "This transaction was changed since you opened the form. Check the values and save again."
		if inline {
			stale = "This transaction was changed meanwhile. This is how it is saved now; change it again if you need to."
		}
		f.fail("form", stale)
		return refuse(fiber.StatusConflict)
	}
	if !f.ok() {
		return refuse(fiber.StatusUnprocessableEntity)
	}
	cols := changedColumns(&before, t)
	_, err = h.store.UpdateTransaction(c.UserContext(), t, cols, keepTags)
	if formProblems(f, err) {
		return refuse(fiber.StatusUnprocessableEntity)
	}
	if errors.Is(err, models.ErrNotFound) {
		f.fail("form", "This transaction was deleted since you opened the form.")
		return refuse(fiber.StatusConflict)
	}
	if err != nil {
		return err
	}
	if inline {
		saved, err := h.familyTransaction(c)
		if err != nil {
			return err
		}
		return h.transactionRow(c, fiber.StatusOK, saved, f)
	}
	return h.site.Redirect(c, returnTo(c, "/transactions"), "Transaction saved.")
}

// transactionRow answers the inline edit with t's row of the list, drawn
// by the list's own template, with the form's problem in it if any.
func (h *Handler) transactionRow(c *fiber.Ctx, status int, t *models.Transaction, f *form) error {
	fm, err := h.store.Family(c.UserContext(), web.SessionOf(c).User.FamilyID)
	if err != nil {
		return err
	}
	line := newListLine(t, returnTo(c, "/transactions"), fm.Currency)
	if line.Problem = f.Errors["form"]; line.Problem == "" {
		line.Problem = f.Errors["category_id"]
	}
	return h.pages.RenderFragment(c, status, "transactions", "row", line)
}

// changedColumns names the columns an edit changes, so that only those
// are written (and, on an imported row, locked).
func changedColumns(a, b *models.Transaction) []string {
	var cols []string
	add := func(changed bool, col string) {
		if changed {
			cols = append(cols, col)
		}
	}
	add(a.AccountID != b.AccountID, "account_id")
	add(a.Date != b.Date, "date")
	add(a.Amount != b.Amount, "amount")
	add(a.Name != b.Name, "name")
	add(deref(a.Notes) != deref(b.Notes), "notes")
	add(optString(a.CategoryID) != optString(b.CategoryID), "category_id")
	add(optString(a.MerchantID) != optString(b.MerchantID), "merchant_id")
	return cols
}

// confirmDeleteTransaction asks before a transaction is deleted: a
// deleted row cannot be brought back, and one click on the edit form was
// too easy to make by mistake.
func (h *Handler) confirmDeleteTransaction(c *fiber.Ctx) error {
	t, err := h.familyTransaction(c)
	if err != nil {
		return err
	}
	back := returnTo(c, "/transactions")
	data := struct {
		Tx       *models.Transaction
		Back     string
		Transfer bool
	}{t, back, t.Transfer != nil}
	return h.pages.Render(c, fiber.StatusOK, "transaction_delete", web.Page{Nav: "transactions", Title: "Delete transaction", Data: data})
}

func (h *Handler) deleteTransaction(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	_, err = h.store.DeleteTransaction(c.UserContext(), web.SessionOf(c).User.FamilyID, id)
	if errors.Is(err, models.ErrReconciled) {
		return h.site.Redirect(c, "/transactions/"+id.String()+"/edit", "This transaction is reconciled; unlock it first to delete it.")
	}
	var inv *models.InvalidError
	if errors.As(err, &inv) { // a split part: the split is changed instead
		return h.site.Redirect(c, "/transactions/"+id.String()+"/split", strings.Join(inv.Problems, " ")+".")
	}
	if err != nil {
		return err
	}
	return h.site.Redirect(c, returnTo(c, "/transactions"), "Transaction deleted.")
}

// bulkTransactions sets the category of, or adds a tag to, the selected
// transactions of this family (ids of another family are ignored).
func (h *Handler) bulkTransactions(c *fiber.Ctx) error {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	f := newForm(c)
	ids := f.ids("ids")
	back := returnTo(c, "/transactions")
	if len(ids) == 0 {
		return h.site.Redirect(c, back, "Select at least one transaction first.")
	}
	var msgs []string
	switch v := f.value("category_id"); v {
	case "":
	case "none":
		n, err := h.store.BulkSetCategory(ctx, fam, ids, nil)
		if err != nil {
			return err
		}
		msgs = append(msgs, plural(n, "transaction")+" now uncategorized.")
	default:
		id := f.id("category_id", "Category")
		if id == nil {
			return httperr.NotFound()
		}
		n, err := h.store.BulkSetCategory(ctx, fam, ids, id)
		if err != nil {
			return err
		}
		msgs = append(msgs, "Category set on "+plural(n, "transaction")+".")
	}
	if tag := f.id("tag_id", "Tag"); tag != nil {
		n, err := h.store.BulkAddTags(ctx, fam, ids, []uuid.UUID{*tag})
		if err != nil {
			return err
		}
		msgs = append(msgs, "Tag added to "+plural(n, "transaction")+".")
	}
	if len(msgs) == 0 {
		return h.site.Redirect(c, back, "Choose a category or a tag to apply.")
	}
	return h.site.Redirect(c, back, strings.Join(msgs, " "))
}
