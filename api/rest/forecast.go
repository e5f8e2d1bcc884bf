package rest

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/models"
)

// forecastPointJSON is a projected balance at the end of a day, rendered
// as /balances renders a balance: the display string and the minor units.
type forecastPointJSON struct {
	Date         string `json:"date"`
	Balance      string `json:"balance"`
	BalanceCents int64  `json:"balance_cents"`
}

type forecastAccountJSON struct {
	Account struct {
		ID          string  `json:"id"`
		Name        string  `json:"name"`
		AccountType *string `json:"account_type"`
		Currency    string  `json:"currency"`
	} `json:"account"`
	Balances []forecastPointJSON `json:"balances"`
}

type forecastJSON struct {
	Currency string                `json:"currency"`
	Days     int                   `json:"days"`
	Family   []forecastPointJSON   `json:"family"`
	Accounts []forecastAccountJSON `json:"accounts"`
	Lowest   struct {
		Date   string    `json:"date"`
		Amount moneyJSON `json:"amount"`
	} `json:"lowest"`
	SafeToSpend struct {
		Amount moneyJSON `json:"amount"`
		Until  *string   `json:"until"`
	} `json:"safe_to_spend"`
	LeftOut struct {
		Accounts              []leftOutAccountJSON `json:"accounts"`
		RecurringTransactions int                  `json:"recurring_transactions"`
	} `json:"left_out"`
}

type leftOutAccountJSON struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Currency string `json:"currency"`
}

func renderPoints(ps []models.ForecastPoint, currency string) []forecastPointJSON {
	show := moneyIn(currency)
	out := make([]forecastPointJSON, len(ps))
	for i, p := range ps {
		out[i].Date = string(p.Date)
		out[i].Balance, out[i].BalanceCents = show(p.Balance)
	}
	return out
}

// showForecast is GET /api/v1/forecast: the family's projected balances
// for days (1..365, default 90) from its active recurring items, with
// account_id narrowing the accounts' series to one.
func (h *Handler) showForecast(c *fiber.Ctx) error {
	days := models.ForecastDays
	if v := c.Query("days"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > models.MaxForecastDays {
			return httperr.BadRequest("days must be a whole number from 1 to 365")
		}
		days = n
	}
	only, err := queryID(c, "account_id")
	if err != nil {
		return err
	}
	ctx, fam := c.UserContext(), KeyOf(c).FamilyID
	if only != nil {
		if _, err := h.store.Account(ctx, fam, *only); err != nil {
			return err
		}
	}
	f, err := h.store.Forecast(ctx, fam, days)
	if err != nil {
		return err
	}
	out := forecastJSON{Currency: f.Currency, Days: days, Family: renderPoints(f.Family, f.Currency), Accounts: []forecastAccountJSON{}}
	for _, a := range f.Accounts {
		if only != nil && a.Account.ID != *only {
			continue
		}
		var j forecastAccountJSON
		j.Account.ID, j.Account.Name, j.Account.AccountType, j.Account.Currency = a.Account.ID.String(), a.Account.Name, nonEmpty(a.Account.AccountType), a.Account.Currency
		j.Balances = renderPoints(a.Points, a.Account.Currency)
		out.Accounts = append(out.Accounts, j)
	}
	out.Lowest.Date, out.Lowest.Amount = string(f.Lowest.Date), renderMoney(f.Lowest.Balance, f.Currency)
	out.SafeToSpend.Amount = renderMoney(f.SafeToSpend, f.Currency)
	if f.NextIncome != nil {
		d := string(*f.NextIncome)
		out.SafeToSpend.Until = &d
	}
	out.LeftOut.Accounts = make([]leftOutAccountJSON, len(f.LeftOut))
	for i, a := range f.LeftOut {
		out.LeftOut.Accounts[i] = leftOutAccountJSON{ID: a.ID.String(), Name: a.Name, Currency: a.Currency}
	}
	out.LeftOut.RecurringTransactions = f.LeftOutItems
	return c.JSON(out)
}
