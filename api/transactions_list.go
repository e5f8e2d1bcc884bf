package api

import (
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/models"
)

type transactionsJSON struct {
	Transactions []transactionJSON `json:"transactions"`
	Pagination   Pagination        `json:"pagination"`
}

func (h *Handler) listTransactions(c *fiber.Ctx) error {
	p, err := parsePage(c)
	if err != nil {
		return err
	}
	f, err := parseTransactionFilter(c)
	if err != nil {
		return err
	}
	txs, total, err := h.store.Transactions(c.UserContext(), keyOf(c).FamilyID, f, p)
	if err != nil {
		return err
	}
	out := transactionsJSON{Transactions: make([]transactionJSON, len(txs)), Pagination: pagination(p, total)}
	for i, t := range txs {
		out.Transactions[i] = renderTransaction(t)
	}
	return c.JSON(out)
}

// parseTransactionFilter reads the list filters; a malformed value is a
// 400 naming the parameter.
func parseTransactionFilter(c *fiber.Ctx) (models.TransactionFilter, error) {
	var f models.TransactionFilter
	args := c.Context().QueryArgs()
	ids := func(single, multi string) ([]uuid.UUID, error) {
		var out []uuid.UUID
		values := args.PeekMulti(multi)
		if v := args.Peek(single); len(v) > 0 {
			values = append(values, v)
		}
		for _, v := range values {
			id, err := uuid.Parse(string(v))
			if err != nil || len(v) != 36 {
				return nil, badRequest(strings.TrimSuffix(multi, "[]") + " must contain UUIDs only")
			}
			out = append(out, id)
		}
		if len(out) > 100 {
			return nil, badRequest(multi + " has too many values (maximum is 100)")
		}
		return out, nil
	}
	var err error
	if f.AccountIDs, err = ids("account_id", "account_ids[]"); err != nil {
		return f, err
	}
	if f.CategoryIDs, err = ids("category_id", "category_ids[]"); err != nil {
		return f, err
	}
	if f.MerchantIDs, err = ids("merchant_id", "merchant_ids[]"); err != nil {
		return f, err
	}
	if f.TagIDs, err = ids("tag_id", "tag_ids[]"); err != nil {
		return f, err
	}
	for _, d := range []struct {
		name string
		dst  *models.Date
	}{{"start_date", &f.StartDate}, {"end_date", &f.EndDate}} {
		if v := c.Query(d.name); v != "" {
			date, err := models.ParseDate(v)
			if err != nil {
				return f, badRequest(d.name + " must be a date, YYYY-MM-DD")
			}
			*d.dst = date
		}
	}
	for _, a := range []struct {
		name string
		dst  **models.Amount
	}{{"min_amount", &f.MinAmount}, {"max_amount", &f.MaxAmount}} {
		if v := c.Query(a.name); v != "" {
			amount, err := models.ParseAmount(v)
			if err != nil {
				return f, badRequest(a.name + " must be a decimal number")
			}
			*a.dst = &amount
		}
	}
	switch t := c.Query("type"); t {
	case "", "income", "expense":
		f.Type = t
	default:
		return f, badRequest("type must be income or expense")
	}
	if s := c.Query("search"); s != "" {
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) || utf8.RuneCountInString(s) > maxName {
			return f, badRequest("search must be valid text of at most 255 characters")
		}
		f.Search = strings.Clone(s)
	}
	return f, nil
}
