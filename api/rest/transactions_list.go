package rest

import (
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

type transactionsJSON struct {
	Transactions []transactionJSON `json:"transactions"`
	Pagination   Pagination        `json:"pagination"`
}

func (h *Handler) listTransactions(c *fiber.Ctx) error {
	f, err := parseTransactionFilter(c)
	if err != nil {
		return err
	}
	txs, pg, err := listPage(c, withFilter(h.store.Transactions, f),
		func(t **models.Transaction) transactionJSON { return renderTransaction(*t) })
	if err != nil {
		return err
	}
	return c.JSON(transactionsJSON{Transactions: txs, Pagination: pg})
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
			// category_id=none (or "none" among category_ids[]) asks for
			// the transactions without a category, alone or besides those.
			if single == "category_id" && string(v) == "none" {
				f.Uncategorized = true
				continue
			}
			id, err := uuid.Parse(string(v))
			if err != nil || len(v) != 36 {
				return nil, httperr.BadRequest(strings.TrimSuffix(multi, "[]") + " must contain UUIDs only")
			}
			out = append(out, id)
		}
		if len(out) > 100 {
			return nil, httperr.BadRequest(multi + " has too many values (maximum is 100)")
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
		dst  *civil.Date
	}{{"start_date", &f.StartDate}, {"end_date", &f.EndDate}} {
		if v := c.Query(d.name); v != "" {
			date, err := civil.ParseDate(v)
			if err != nil {
				return f, httperr.BadRequest(d.name + " must be a date, YYYY-MM-DD")
			}
			*d.dst = date
		}
	}
	for _, a := range []struct {
		name string
		dst  **money.Amount
	}{{"min_amount", &f.MinAmount}, {"max_amount", &f.MaxAmount}} {
		if v := c.Query(a.name); v != "" {
			amount, err := money.ParseAmount(v)
			if err != nil {
				return f, httperr.BadRequest(a.name + " must be a decimal number")
			}
			*a.dst = &amount
		}
	}
	switch t := c.Query("type"); t {
	case "", "income", "expense":
		f.Type = t
	default:
		return f, httperr.BadRequest("type must be income or expense")
	}
	if s := c.Query("search"); s != "" {
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) || utf8.RuneCountInString(s) > maxName {
			return f, httperr.BadRequest("search must be valid text of at most 255 characters")
		}
		f.Search = strings.Clone(s)
	}
	return f, nil
}

type accountRefJSON struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	AccountType *string `json:"account_type"` // null: untyped, as a connection creates it
	Status      string  `json:"status"`
}

func accountRef(a *models.Account) accountRefJSON {
	return accountRefJSON{ID: a.ID.String(), Name: a.Name, AccountType: nonEmpty(a.AccountType), Status: a.Status}
}

type categoryRefJSON struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Color string `json:"color"`
	Icon  string `json:"icon"`
}

type merchantRefJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type tagRefJSON struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Color string `json:"color"`
}

type transferRefJSON struct {
	ID           string          `json:"id"`
	Amount       string          `json:"amount"`
	Currency     string          `json:"currency"`
	OtherAccount *accountRefJSON `json:"other_account"`
	// Between two currencies: the rate the two sides imply (units arrived
	// per unit sent); null within one.
	ExchangeRate *string `json:"exchange_rate"`
}

type transactionJSON struct {
	ID                string           `json:"id"`
	Date              string           `json:"date"`
	Amount            string           `json:"amount"`
	AmountCents       int64            `json:"amount_cents"`
	SignedAmountCents int64            `json:"signed_amount_cents"`
	Currency          string           `json:"currency"`
	Name              string           `json:"name"`
	Notes             *string          `json:"notes"`
	ExternalID        *string          `json:"external_id"`
	Source            *string          `json:"source"`
	Classification    string           `json:"classification"`
	Account           accountRefJSON   `json:"account"`
	Category          *categoryRefJSON `json:"category"`
	Merchant          *merchantRefJSON `json:"merchant"`
	Tags              []tagRefJSON     `json:"tags"`
	Transfer          *transferRefJSON `json:"transfer"`
	Pending           bool             `json:"pending"`
	Cleared           bool             `json:"cleared"`
	Reconciled        bool             `json:"reconciled"`
	CreatedAt         string           `json:"created_at"`
	UpdatedAt         string           `json:"updated_at"`
	// A split parent shows its parts and whether a bank sync changed its
	// amount since; a part names its parent and whether it is excluded.
	Splits           []transactionJSON `json:"splits,omitempty"`
	SplitNeedsReview *bool             `json:"split_needs_review,omitempty"`
	SplitParentID    *string           `json:"split_parent_id,omitempty"`
	Excluded         *bool             `json:"excluded,omitempty"`
}

func renderTransaction(t *models.Transaction) transactionJSON {
	cur := money.MustCurrency(t.Currency)
	minor := t.Amount.Minor(cur)
	out := transactionJSON{
		ID:                t.ID.String(),
		Date:              string(t.Date),
		Amount:            t.Amount.Format(cur),
		AmountCents:       abs64(minor),
		SignedAmountCents: -minor, // stored positive is money out; clients count money in as positive
		Currency:          t.Currency,
		Name:              t.Name,
		Notes:             t.Notes,
		ExternalID:        t.ExternalID,
		Source:            t.Source,
		Classification:    "expense",
		Tags:              make([]tagRefJSON, 0, len(t.Tags)),
		Pending:           t.Pending,
		Cleared:           t.Cleared,
		Reconciled:        t.Reconciled(),
		CreatedAt:         timestamp(t.CreatedAt),
		UpdatedAt:         timestamp(t.UpdatedAt),
	}
	if t.Amount < 0 {
		out.Classification = "income"
	}
	if t.Account != nil {
		out.Account = accountRef(t.Account)
	}
	if c := t.Category; c != nil {
		out.Category = &categoryRefJSON{ID: c.ID.String(), Name: c.Name, Color: c.Color, Icon: c.Icon}
	}
	if m := t.Merchant; m != nil {
		out.Merchant = &merchantRefJSON{ID: m.ID.String(), Name: m.Name}
	}
	for _, tag := range t.Tags {
		out.Tags = append(out.Tags, tagRefJSON{ID: tag.ID.String(), Name: tag.Name, Color: tag.Color})
	}
	if tr := t.Transfer; tr != nil {
		ref := &transferRefJSON{ID: tr.ID.String(), Amount: tr.Amount.Format(money.MustCurrency(tr.Currency)), Currency: tr.Currency}
		if tr.OtherAccount != nil {
			other := accountRef(tr.OtherAccount)
			ref.OtherAccount = &other
		}
		if !tr.Rate.IsZero() {
			rate := tr.Rate.String()
			ref.ExchangeRate = &rate
		}
		out.Transfer = ref
	}
	if t.IsSplitParent() {
		review := t.SplitNeedsReview
		out.SplitNeedsReview = &review
		out.Splits = make([]transactionJSON, len(t.Splits))
		for i, p := range t.Splits {
			out.Splits[i] = renderTransaction(p)
		}
	}
	if t.SplitParentID != nil {
		parent, excluded := t.SplitParentID.String(), t.Excluded
		out.SplitParentID, out.Excluded = &parent, &excluded
	}
	return out
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
