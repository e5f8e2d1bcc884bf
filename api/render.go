package api

import (
	"time"

	"coffer/models"
)

// timestamp renders a time as RFC 3339 in UTC, to the second.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

func optTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timestamp(*t)
	return &s
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
	CreatedAt         string           `json:"created_at"`
	UpdatedAt         string           `json:"updated_at"`
}

func renderTransaction(t *models.Transaction) transactionJSON {
	cur := models.MustCurrency(t.Currency)
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
		ref := &transferRefJSON{ID: tr.ID.String(), Amount: tr.Amount.Format(models.MustCurrency(tr.Currency)), Currency: tr.Currency}
		if tr.OtherAccount != nil {
			other := accountRef(tr.OtherAccount)
			ref.OtherAccount = &other
		}
		out.Transfer = ref
	}
	return out
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
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
	CreatedAt         string  `json:"created_at"`
	UpdatedAt         string  `json:"updated_at"`
}

func renderAccount(a *models.Account) accountJSON {
	cur := models.MustCurrency(a.Currency)
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
		CreatedAt:         timestamp(a.CreatedAt),
		UpdatedAt:         timestamp(a.UpdatedAt),
	}
}

type parentJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type categoryJSON struct {
	ID                 string      `json:"id"`
	Name               string      `json:"name"`
	Color              string      `json:"color"`
	Icon               string      `json:"icon"`
	Parent             *parentJSON `json:"parent"`
	SubcategoriesCount int         `json:"subcategories_count"`
	Classification     string      `json:"classification"`
	CreatedAt          string      `json:"created_at"`
	UpdatedAt          string      `json:"updated_at"`
}

func renderCategory(c *models.Category) categoryJSON {
	out := categoryJSON{
		ID: c.ID.String(), Name: c.Name, Color: c.Color, Icon: c.Icon,
		SubcategoriesCount: c.SubcategoriesCount, Classification: c.Classification,
		CreatedAt: timestamp(c.CreatedAt), UpdatedAt: timestamp(c.UpdatedAt),
	}
	if c.ParentID != nil && c.ParentName != nil {
		out.Parent = &parentJSON{ID: c.ParentID.String(), Name: *c.ParentName}
	}
	return out
}

type tagJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Color     string `json:"color"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func renderTag(t *models.Tag) tagJSON {
	return tagJSON{ID: t.ID.String(), Name: t.Name, Color: t.Color, CreatedAt: timestamp(t.CreatedAt), UpdatedAt: timestamp(t.UpdatedAt)}
}

type merchantJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func renderMerchant(m *models.Merchant) merchantJSON {
	return merchantJSON{ID: m.ID.String(), Name: m.Name, CreatedAt: timestamp(m.CreatedAt), UpdatedAt: timestamp(m.UpdatedAt)}
}

type messageJSON struct {
	ID        string  `json:"id"`
	ChatID    string  `json:"chat_id"`
	Type      string  `json:"type"`
	Role      string  `json:"role"`
	Content   string  `json:"content"`
	Model     *string `json:"model"`
	CreatedAt string  `json:"created_at"`
	UpdatedAt string  `json:"updated_at"`
}

func renderMessage(m *models.Message) messageJSON {
	return messageJSON{
		ID: m.ID.String(), ChatID: m.ChatID.String(), Type: m.Type, Role: m.Role(), Content: m.Content,
		Model: m.Model, CreatedAt: timestamp(m.CreatedAt), UpdatedAt: timestamp(m.UpdatedAt),
	}
}

type chatJSON struct {
	ID            string  `json:"id"`
	Title         string  `json:"title"`
	LastMessageAt *string `json:"last_message_at"`
	MessageCount  int     `json:"message_count"`
	Error         *string `json:"error"`
	CreatedAt     string  `json:"created_at"`
	UpdatedAt     string  `json:"updated_at"`
}

func renderChat(c *models.Chat) chatJSON {
	return chatJSON{
		ID: c.ID.String(), Title: c.Title, LastMessageAt: optTimestamp(c.LastMessageAt), MessageCount: c.MessageCount,
		Error: c.Error, CreatedAt: timestamp(c.CreatedAt), UpdatedAt: timestamp(c.UpdatedAt),
	}
}
