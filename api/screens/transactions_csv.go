package screens

import (
	"bufio"
	"context"
	"encoding/csv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"coffer/api/web"
	"coffer/models"
	"coffer/models/money"
)

// csvPage is how many transactions the CSV download reads at a time.
const csvPage = 500

// transactionsCSV is the transaction list with its current filters as
// CSV, in the columns of the reference's transactions.csv: every row the
// filters find (a split's parts, not the row they were split from),
// newest first, read a page at a time. A filter value that does not parse
// is left out, as the list leaves it out.
func (h *Handler) transactionsCSV(c *fiber.Ctx) error {
	fam := web.SessionOf(c).User.FamilyID
	f, _, _ := readFilter(c)
	// The first page is read here, so that a failure is the error page
	// rather than a cut-off file.
	first, total, err := h.store.Transactions(c.UserContext(), fam, f, models.Page{Number: 1, Size: csvPage})
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="transactions.csv"`)
	c.Set("Cache-Control", "no-store")
	store, log, pages := h.store, h.log, models.Page{Size: csvPage}.Pages(total)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"date", "account_name", "amount", "name", "category", "tags", "notes", "currency"})
		rows := first
		for n := 1; ; n++ {
			for _, t := range rows {
				_ = cw.Write(csvRow(t))
			}
			if n >= pages {
				break
			}
			var err error
			// The handler has returned: the request's context is gone.
			rows, _, err = store.Transactions(context.Background(), fam, f, models.Page{Number: n + 1, Size: csvPage})
			if err != nil {
				log.Error("transactions CSV broke off", "family_id", fam, "error", err)
				break
			}
		}
		cw.Flush()
	})
	return nil
}

func csvRow(t *models.Transaction) []string {
	account, category := "", ""
	if t.Account != nil {
		account = t.Account.Name
	}
	if t.Category != nil {
		category = t.Category.Name
	}
	tags := make([]string, len(t.Tags))
	for i, tg := range t.Tags {
		tags[i] = strings.NewReplacer(`\`, `\\`, `,`, `\,`, `|`, `\|`).Replace(tg.Name)
	}
	return []string{string(t.Date), account, csvAmount(t.Amount), t.Name, category, strings.Join(tags, ","),
		models.Str(t.Notes), t.Currency}
}

// csvAmount is an amount as the reference's CSV writes it: signed (money
// out positive), no trailing zeros but one ("12.5", "100.0").
func csvAmount(a money.Amount) string {
	s := strings.TrimRight(a.String(), "0")
	if strings.HasSuffix(s, ".") {
		s += "0"
	}
	return s
}
