package assistant

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/money"
)

// formatMoney is an amount as the API shows it: "$1,234.56".
func formatMoney(a money.Amount, currency string) string {
	return a.Format(money.MustCurrency(currency))
}

// allRows is the page that the tools read lists with: a household's
// accounts and categories fit in it.
var allRows = models.Page{Number: 1, Size: 1000}

type accountResult struct {
	ID             string  `json:"id"`
	Name           string  `json:"name"`
	Balance        string  `json:"balance"`
	Currency       string  `json:"currency"`
	Classification string  `json:"classification"`
	AccountType    *string `json:"account_type"`
	Status         string  `json:"status"`
	// An account in another currency than the household's: its balance in
	// the household's currency at the latest rate, and the rate's day;
	// "not_converted" when there is no rate (it is then left out of totals).
	ConvertedBalance *string `json:"converted_balance,omitempty"`
	RateDate         *string `json:"rate_date,omitempty"`
	NotConverted     bool    `json:"not_converted,omitempty"`
}

// withConversions adds each account's converted balance from the
// household's balance sheet (b) to rendered accounts.
func withConversions(out []accountResult, b *models.BalanceSheet) {
	conv := map[string]models.Conversion{}
	for _, c := range b.Converted {
		conv[c.AccountID.String()] = c
	}
	for i := range out {
		if strings.EqualFold(out[i].Currency, b.Currency) {
			continue
		}
		c, ok := conv[out[i].ID]
		if !ok {
			out[i].NotConverted = true
			continue
		}
		v, d := formatMoney(c.Value, b.Currency), string(c.Rate.Date)
		out[i].ConvertedBalance, out[i].RateDate = &v, &d
	}
}

func renderAccount(a *models.Account) accountResult {
	r := accountResult{ID: a.ID.String(), Name: a.Name, Balance: formatMoney(a.Balance, a.Currency), Currency: a.Currency,
		Classification: a.Classification(), Status: a.Status}
	if a.AccountType != "" {
		r.AccountType = &a.AccountType
	}
	return r
}

// liveAccounts is the family's accounts that are not being deleted.
func liveAccounts(ctx context.Context, s *models.Store, familyID uuid.UUID) ([]models.Account, error) {
	all, _, err := s.Accounts(ctx, familyID, allRows)
	return slices.DeleteFunc(all, func(a models.Account) bool { return a.Status == models.AccountPendingDeletion }), err
}

var getAccounts = Tool{
	Name:        "get_accounts",
	Description: "Lists the household's accounts with their current balances, currency, classification (asset or liability) and status; an account in another currency also has its balance in the household's currency at the latest rate (converted_balance, rate_date).",
	Schema:      object(nil, map[string]any{}),
	Run: func(ctx context.Context, s *models.Store, c Caller, _ json.RawMessage) (any, error) {
		accounts, err := liveAccounts(ctx, s, c.FamilyID)
		if err != nil {
			return nil, err
		}
		b, err := s.BalanceSheet(ctx, c.FamilyID, true)
		if err != nil {
			return nil, err
		}
		out := make([]accountResult, len(accounts))
		for i := range accounts {
			out[i] = renderAccount(&accounts[i])
		}
		withConversions(out, b)
		return map[string]any{"accounts": out, "household_currency": b.Currency}, nil
	},
}

var getBalanceSheet = Tool{
	Name:        "get_balance_sheet",
	Description: "Returns what the household owns and owes now: assets, liabilities and net worth, with the accounts grouped by type. An account in another currency counts at its latest rate (converted_balance, rate_date); one without any rate is left out of the totals and counted in accounts_in_other_currencies.",
	Schema:      object(nil, map[string]any{}),
	Run: func(ctx context.Context, s *models.Store, c Caller, _ json.RawMessage) (any, error) {
		b, err := s.BalanceSheet(ctx, c.FamilyID, false)
		if err != nil {
			return nil, err
		}
		type group struct {
			Classification string          `json:"classification"`
			AccountType    string          `json:"account_type"`
			Total          string          `json:"total"`
			Accounts       []accountResult `json:"accounts"`
		}
		groups := make([]group, len(b.Groups))
		for i, g := range b.Groups {
			groups[i] = group{Classification: g.Classification, AccountType: cmp.Or(g.AccountType, "untyped"), Total: formatMoney(g.Total, b.Currency)}
			for j := range g.Accounts {
				groups[i].Accounts = append(groups[i].Accounts, renderAccount(&g.Accounts[j]))
			}
			withConversions(groups[i].Accounts, b)
		}
		return map[string]any{"currency": b.Currency, "assets": formatMoney(b.Assets, b.Currency),
			"liabilities": formatMoney(b.Liabilities, b.Currency), "net_worth": formatMoney(b.NetWorth(), b.Currency),
			"groups": groups, "accounts_in_other_currencies": b.Unconverted}, nil
	},
}

var getCategories = Tool{
	Name:        "get_categories",
	Description: "Lists the household's categories with their ids, parent and classification (income or expense).",
	Schema:      object(nil, map[string]any{}),
	Run: func(ctx context.Context, s *models.Store, c Caller, _ json.RawMessage) (any, error) {
		cats, _, err := s.Categories(ctx, c.FamilyID, allRows)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, len(cats))
		for i, x := range cats {
			out[i] = map[string]any{"id": x.ID.String(), "name": x.Name, "parent": x.ParentName, "classification": x.Classification}
		}
		return map[string]any{"categories": out}, nil
	},
}

var getMerchants = Tool{
	Name:        "get_merchants",
	Description: "Lists the household's merchants with their ids.",
	Schema:      object(nil, map[string]any{}),
	Run: func(ctx context.Context, s *models.Store, c Caller, _ json.RawMessage) (any, error) {
		ms, err := s.Merchants(ctx, c.FamilyID)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, len(ms))
		for i, x := range ms {
			out[i] = map[string]any{"id": x.ID.String(), "name": x.Name}
		}
		return map[string]any{"merchants": out}, nil
	},
}

var getTags = Tool{
	Name:        "get_tags",
	Description: "Lists the household's tags with their ids.",
	Schema:      object(nil, map[string]any{}),
	Run: func(ctx context.Context, s *models.Store, c Caller, _ json.RawMessage) (any, error) {
		ts, err := s.Tags(ctx, c.FamilyID)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, len(ts))
		for i, x := range ts {
			out[i] = map[string]any{"id": x.ID.String(), "name": x.Name}
		}
		return map[string]any{"tags": out}, nil
	},
}
