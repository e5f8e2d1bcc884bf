package assistant

import (
	"context"
	"encoding/json"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// The days get_upcoming_bills looks ahead by default and at most, and how
// far back it lists missed bills ("last month", as /upcoming does).
const (
	upcomingDays    = 30
	maxUpcomingDays = 90
	missedDays      = 31
	upcomingMax     = 500
)

// forecastArgs are get_forecast's arguments, as GET /api/v1/forecast's
// query.
type forecastArgs struct {
	Days      *int   `json:"days"`
	AccountID string `json:"account_id"`
}

// forecastPoint is a projected balance at the end of a day.
type forecastPoint struct {
	Date    string `json:"date"`
	Balance string `json:"balance"`
}

// changes is a series of projected balances as the model reads it: the
// first day, each day the balance changes, and the last day. A day-by-day
// series of 90 points would fill the model's context with repeats.
func changes(ps []models.ForecastPoint, currency string) []forecastPoint {
	out := []forecastPoint{}
	for i, p := range ps {
		if i == 0 || i == len(ps)-1 || p.Balance != ps[i-1].Balance {
			out = append(out, forecastPoint{Date: string(p.Date), Balance: formatMoney(p.Balance, currency)})
		}
	}
	return out
}

var getForecast = Tool{
	Name: "get_forecast",
	Description: `Projects the household's balance over the coming days (default 90, at most 365) from today's balances and its active
recurring bills and income, as the dashboard and GET /api/v1/forecast do: the lowest point and its date, and safe_to_spend, what
can be spent until the next income (safe_to_spend.until; null when no income is expected) without the spendable accounts going
below zero. balances lists the household's projected balance on the first day, each day it changes and the last day; each
account has its own series in its currency. Pass account_id (from get_accounts) to list that account's series only. Accounts in a
currency without an exchange rate, and the recurring items on them, are left out of the household's figures (left_out).`,
	Schema: object(nil, map[string]any{
		"days":       map[string]any{"type": "integer", "minimum": 1, "maximum": models.MaxForecastDays, "description": "How many days ahead (defaults to 90)"},
		"account_id": str("An account id from get_accounts: only that account's series is listed"),
	}),
	Run: func(ctx context.Context, s *models.Store, c Caller, raw json.RawMessage) (any, error) {
		var a forecastArgs
		if err := decode(raw, &a); err != nil {
			return nil, err
		}
		days := models.ForecastDays
		if a.Days != nil {
			if *a.Days < 1 || *a.Days > models.MaxForecastDays {
				return nil, refuse("validation_failed", "days must be a whole number from 1 to %d.", models.MaxForecastDays)
			}
			days = *a.Days
		}
		var only *models.Account
		if a.AccountID != "" {
			id, err := parseID("Account", a.AccountID)
			if err != nil {
				return nil, err
			}
			if only, err = s.Account(ctx, c.FamilyID, id); err != nil {
				return nil, err
			}
		}
		f, err := s.Forecast(ctx, c.FamilyID, days)
		if err != nil {
			return nil, err
		}
		type account struct {
			ID          string          `json:"id"`
			Name        string          `json:"name"`
			AccountType *string         `json:"account_type"`
			Currency    string          `json:"currency"`
			Balances    []forecastPoint `json:"balances"`
		}
		accounts := []account{}
		for _, x := range f.Accounts {
			if only != nil && x.Account.ID != only.ID {
				continue
			}
			r := account{ID: x.Account.ID.String(), Name: x.Account.Name, Currency: x.Account.Currency,
				Balances: changes(x.Points, x.Account.Currency)}
			if x.Account.AccountType != "" {
				r.AccountType = &x.Account.AccountType
			}
			accounts = append(accounts, r)
		}
		leftOut := make([]map[string]any, len(f.LeftOut))
		for i, x := range f.LeftOut {
			leftOut[i] = map[string]any{"id": x.ID.String(), "name": x.Name, "currency": x.Currency}
		}
		var until *string
		if f.NextIncome != nil {
			d := string(*f.NextIncome)
			until = &d
		}
		return map[string]any{
			"currency": f.Currency, "days": days, "recurring_transactions": f.Items,
			"balances":      changes(f.Family, f.Currency),
			"lowest":        forecastPoint{Date: string(f.Lowest.Date), Balance: formatMoney(f.Lowest.Balance, f.Currency)},
			"safe_to_spend": map[string]any{"amount": formatMoney(f.SafeToSpend, f.Currency), "until": until},
			"accounts":      accounts,
			"left_out":      map[string]any{"accounts": leftOut, "recurring_transactions": f.LeftOutItems},
		}, nil
	},
}

// billResult is one expected occurrence of a recurring transaction: a
// bill (money out) or an income, its amount unsigned as get_transactions
// shows amounts.
type billResult struct {
	RecurringID     string  `json:"recurring_transaction_id"`
	Name            string  `json:"name"`
	Kind            string  `json:"kind"` // "bill" or "income"
	Amount          string  `json:"amount"`
	FormattedAmount string  `json:"formatted_amount"`
	Currency        string  `json:"currency"`
	Account         *string `json:"account"`
	Cadence         string  `json:"cadence"`
}

func renderBill(r *models.RecurringTransaction, amount money.Amount) billResult {
	b := billResult{RecurringID: r.ID.String(), Name: r.Name, Kind: "bill", Amount: decimal(amount.Abs(), r.Currency),
		FormattedAmount: formatMoney(amount.Abs(), r.Currency), Currency: r.Currency, Cadence: r.Cadence}
	if amount < 0 {
		b.Kind = "income"
	}
	if r.Account != nil {
		b.Account = &r.Account.Name
	}
	return b
}

var getUpcomingBills = Tool{
	Name: "get_upcoming_bills",
	Description: `Lists the household's expected bills and income over the coming days (default 30, at most 90), by date, from its active
recurring transactions, as the Upcoming page does: each with its expected amount, account and whether it is overdue (its date
passed, within its grace, and nothing paid it yet), with the totals out and in per currency. Also lists last month's missed
bills (due, not paid within their grace) and those paid late (paid after their grace: no longer missed).`,
	Schema: object(nil, map[string]any{
		"days": map[string]any{"type": "integer", "minimum": 1, "maximum": maxUpcomingDays, "description": "How many days ahead (defaults to 30)"},
	}),
	Run: func(ctx context.Context, s *models.Store, c Caller, raw json.RawMessage) (any, error) {
		var a struct {
			Days *int `json:"days"`
		}
		if err := decode(raw, &a); err != nil {
			return nil, err
		}
		days := upcomingDays
		if a.Days != nil {
			if *a.Days < 1 || *a.Days > maxUpcomingDays {
				return nil, refuse("validation_failed", "days must be a whole number from 1 to %d.", maxUpcomingDays)
			}
			days = *a.Days
		}
		today := s.Now().UTC()
		to := civil.DateOf(today.AddDate(0, 0, days))
		up, err := s.UpcomingRecurring(ctx, c.FamilyID, to, upcomingMax)
		if err != nil {
			return nil, err
		}
		type upcoming struct {
			Date string `json:"date"`
			billResult
			Overdue bool `json:"overdue"`
		}
		type total struct {
			Currency string `json:"currency"`
			Out      string `json:"out"`
			In       string `json:"in"`
		}
		items := []upcoming{}
		var totals []total
		sums := map[string]*[2]money.Amount{}
		for _, u := range up {
			items = append(items, upcoming{Date: string(u.Date), billResult: renderBill(u.Item, u.Item.Amount), Overdue: u.Overdue})
			sum := sums[u.Item.Currency]
			if sum == nil {
				sum = &[2]money.Amount{}
				sums[u.Item.Currency] = sum
				totals = append(totals, total{Currency: u.Item.Currency})
			}
			if u.Item.Amount < 0 {
				sum[1] -= u.Item.Amount
			} else {
				sum[0] += u.Item.Amount
			}
		}
		for i := range totals {
			sum := sums[totals[i].Currency]
			totals[i].Out, totals[i].In = formatMoney(sum[0], totals[i].Currency), formatMoney(sum[1], totals[i].Currency)
		}
		// Last month's occurrences, missed and paid late, as /upcoming
		// lists the missed ones.
		past, err := s.RecurringOccurrences(ctx, c.FamilyID, models.OccurrenceFilter{DueFrom: civil.DateOf(today.AddDate(0, 0, -missedDays))})
		if err != nil {
			return nil, err
		}
		type occurrence struct {
			DueDate string `json:"due_date"`
			billResult
			PaidDate   *string `json:"paid_date,omitempty"`
			PaidAmount *string `json:"paid_amount,omitempty"`
		}
		missed, late := []occurrence{}, []occurrence{}
		for _, o := range past {
			if o.Recurring == nil {
				continue
			}
			r := occurrence{DueDate: string(o.DueDate), billResult: renderBill(o.Recurring, o.Amount)}
			switch {
			case o.Status == models.OccurrenceMissed:
				missed = append(missed, r)
			case o.Late():
				d, paid := string(*o.PaidDate), formatMoney(o.PaidAmount.Abs(), o.Currency)
				r.PaidDate, r.PaidAmount = &d, &paid
				late = append(late, r)
			}
		}
		if totals == nil {
			totals = []total{}
		}
		return map[string]any{"from": string(civil.DateOf(today)), "to": string(to), "upcoming": items, "totals": totals,
			"missed": missed, "paid_late": late}, nil
	},
}
