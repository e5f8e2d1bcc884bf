package screens

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/web"
	"coffer/models"
	"coffer/models/money"
)

// The split editor: a transaction's parts as rows of name, category and
// amount, all plain form fields. "Add a row" and "Remove" are submit
// buttons that draw the form again with what was typed, so it works
// without JavaScript; the amount left to allocate is worked out on the
// server each time. Amounts are typed positive, in the family's format,
// in the direction of the transaction.

// splitRowsMax is the most rows the editor draws (the store's limit).
const splitRowsMax = models.MaxSplitParts

// splitLine is one row of the editor as typed.
type splitLine struct {
	Index    int
	Name     string
	Category string
	Amount   string
	Excluded bool
}

type splitData struct {
	choices
	Tx         *models.Transaction
	Form       *form
	Lines      []splitLine
	Remaining  money.Amount // what is left to allocate, in the transaction's direction
	Unreadable bool         // a row's amount could not be read: it counts as nothing
	Back       string
}

// splitParent is the transaction of the path, or the parent of the part
// it names.
func (h *Handler) splitParent(c *fiber.Ctx) (*models.Transaction, error) {
	t, err := h.familyTransaction(c)
	if err != nil || t.SplitParentID == nil {
		return t, err
	}
	return h.store.Transaction(c.UserContext(), t.FamilyID, *t.SplitParentID)
}

func (h *Handler) splitEditor(c *fiber.Ctx) error {
	t, err := h.splitParent(c)
	if err != nil {
		return err
	}
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	var lines []splitLine
	if t.IsSplitParent() {
		for i, p := range t.Splits {
			lines = append(lines, splitLine{Index: i, Name: p.Name, Category: optString(p.CategoryID),
				Amount: f.amountValue(p.Amount), Excluded: p.Excluded})
		}
	} else {
		// The whole amount on the first row, a second row to take a share.
		lines = []splitLine{{Index: 0, Name: t.Name, Category: optString(t.CategoryID), Amount: f.amountValue(t.Amount)}, {Index: 1}}
	}
	back := web.SafeReturnTo(c.Query("return_to"))
	if back == "/" {
		back = "/transactions"
	}
	return h.renderSplit(c, fiber.StatusOK, t, f, lines, back)
}

// renderSplit draws the editor with lines, the amount left to allocate
// worked out from them.
func (h *Handler) renderSplit(c *fiber.Ctx, status int, t *models.Transaction, f *form, lines []splitLine, back string) error {
	ch, err := h.choices(c)
	if err != nil {
		return err
	}
	d := splitData{choices: ch, Tx: t, Form: f, Lines: lines, Remaining: t.Amount.Abs(), Back: back}
	for _, l := range lines {
		if l.Amount == "" {
			continue
		}
		if a, ok := f.numbers.parse(l.Amount); ok {
			d.Remaining -= a
		} else {
			d.Unreadable = true
		}
	}
	return h.pages.Render(c, status, "transaction_split", web.Page{Nav: "transactions", Title: "Split transaction", Data: d})
}

// readSplitLines reads the rows as typed, in order; rows beyond the limit
// are dropped.
func readSplitLines(f *form) []splitLine {
	n, err := strconv.Atoi(f.value("rows"))
	if err != nil || n < 0 {
		n = 0
	}
	n = min(n, splitRowsMax)
	lines := make([]splitLine, 0, n)
	for i := range n {
		k := strconv.Itoa(i)
		lines = append(lines, splitLine{Index: i, Name: f.value("name_" + k), Category: f.value("category_" + k),
			Amount: f.value("amount_" + k), Excluded: f.value("excluded_"+k) == "1"})
	}
	return lines
}

// renumber gives lines the indexes of their places, after a row was
// added or removed.
func renumber(lines []splitLine) []splitLine {
	for i := range lines {
		lines[i].Index = i
	}
	return lines
}

func (h *Handler) saveSplit(c *fiber.Ctx) error {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	t, err := h.splitParent(c)
	if err != nil {
		return err
	}
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	back := returnTo(c, "/transactions")
	lines := readSplitLines(f)
	action := f.value("action")
	switch {
	case action == "add":
		if len(lines) < splitRowsMax {
			lines = append(lines, splitLine{Index: len(lines)})
		}
		return h.renderSplit(c, fiber.StatusOK, t, f, lines, back)
	case strings.HasPrefix(action, "remove_"):
		if i, err := strconv.Atoi(strings.TrimPrefix(action, "remove_")); err == nil && i >= 0 && i < len(lines) {
			lines = renumber(append(lines[:i], lines[i+1:]...))
		}
		return h.renderSplit(c, fiber.StatusOK, t, f, lines, back)
	}
	if f.value("updated") != stamp(t.UpdatedAt) {
		f.fail("form", "This transaction was changed since you opened the form. Check the parts and save again.")
		return h.renderSplit(c, fiber.StatusConflict, t, f, lines, back)
	}
	parts := make([]models.SplitPart, 0, len(lines))
	for _, l := range lines {
		k := strconv.Itoa(l.Index)
		if l.Name == "" && l.Amount == "" && l.Category == "" {
			continue // an empty row is no part
		}
		name := f.text("name_"+k, "Name", maxName, false)
		a, ok := f.amount("amount_"+k, "Amount", true)
		if ok && t.Amount < 0 {
			a = -a
		}
		parts = append(parts, models.SplitPart{Name: name, Amount: a, CategoryID: f.id("category_"+k, "Category"), Excluded: l.Excluded})
	}
	if len(parts) == 0 {
		f.fail("total", models.MsgSplitEmpty+".")
	}
	if f.ok() {
		if problems := models.CheckSplitParts(parts, t.Amount, t.Currency); len(problems) > 0 {
			f.fail("total", problems[0]+".")
		}
	}
	if !f.ok() {
		return h.renderSplit(c, fiber.StatusUnprocessableEntity, t, f, lines, back)
	}
	if t.IsSplitParent() {
		_, err = h.store.ReplaceSplit(ctx, fam, t.ID, parts)
	} else {
		_, err = h.store.SplitTransaction(ctx, fam, t.ID, parts)
	}
	if formProblems(f, err) {
		return h.renderSplit(c, fiber.StatusUnprocessableEntity, t, f, lines, back)
	}
	if err != nil {
		return err
	}
	return h.site.Redirect(c, back, "Split into "+plural(len(parts), "part")+".")
}

// unsplit removes a transaction's split: its parts go and it counts again.
func (h *Handler) unsplit(c *fiber.Ctx) error {
	t, err := h.splitParent(c)
	if err != nil {
		return err
	}
	back := returnTo(c, "/transactions")
	_, err = h.store.Unsplit(c.UserContext(), t.FamilyID, t.ID)
	var inv *models.InvalidError
	if errors.As(err, &inv) {
		return h.site.Redirect(c, back, strings.Join(inv.Problems, " ")+".")
	}
	if err != nil {
		return err
	}
	return h.site.Redirect(c, back, "Split removed: the transaction counts whole again.")
}

// groupSplits orders a page of transactions so that a split parent comes
// just above its first part on the page (a parent moves no money, so the
// register's running balances stay right). Parents without a part on the
// page stay where they are.
func groupSplits[T any](rows []T, tx func(T) *models.Transaction) []T {
	onPage := map[uuid.UUID]int{}
	for i, r := range rows {
		if tx(r).IsSplitParent() {
			onPage[tx(r).ID] = i
		}
	}
	if len(onPage) == 0 {
		return rows
	}
	hasPart := map[uuid.UUID]bool{}
	for _, r := range rows {
		if p := tx(r).SplitParentID; p != nil {
			if _, ok := onPage[*p]; ok {
				hasPart[*p] = true
			}
		}
	}
	out := make([]T, 0, len(rows))
	placed := map[uuid.UUID]bool{}
	for _, r := range rows {
		t := tx(r)
		if hasPart[t.ID] {
			continue // drawn above its first part
		}
		if p := t.SplitParentID; p != nil && hasPart[*p] && !placed[*p] {
			out = append(out, rows[onPage[*p]])
			placed[*p] = true
		}
		out = append(out, r)
	}
	return out
}
