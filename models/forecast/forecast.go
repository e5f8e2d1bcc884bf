// Package forecast projects a family's balances forward from today's
// balances and its recurring items. It is pure: no database and nothing of
// ours imported; the store reads the accounts and items, converts what is
// in another currency, and hands them here as integers (ten-thousandths of
// a currency unit, as money.Amount counts them).
package forecast

import (
	"time"

	"github.com/google/uuid"
)

// Account is one account as the forecast starts from it.
type Account struct {
	ID uuid.UUID
	// Liability: Balance is what is owed, as the balance sheet signs it,
	// so money out raises it and the family's figure subtracts it.
	Liability bool
	// Spendable: a depository account (checking, savings, cash), whose
	// money can be spent today; safe to spend counts only these.
	Spendable bool
	Balance   int64 // today's, in the account's own currency
	// Value is Balance in the family's currency (at today's rate), and
	// Counted says there was a rate: an account without one keeps its own
	// series but is left out of every family figure, never counted 1:1.
	Value   int64
	Counted bool
}

// Item is one active recurring item.
type Item struct {
	// AccountID is the account it moves; nil when it has none: it then
	// moves the family's figure as if paid from (or into) the spendable
	// accounts, and no account's series.
	AccountID *uuid.UUID
	Amount    int64 // per occurrence, signed as transactions are (positive: money out), in the account's currency
	Value     int64 // Amount in the family's currency
	Counted   bool  // there was a rate for Value (see Account.Counted)
	Cadence   string
	Day       int       // expected day of the month, for monthly and longer cadences (clamped to a short month's last day)
	Next      time.Time // next expected date, midnight UTC
}

// Point is a balance at the end of a day.
type Point struct {
	Date    time.Time
	Balance int64
}

// Series is one account's projected balances, a point a day.
type Series struct {
	AccountID uuid.UUID
	Points    []Point
}

// Result is a projection from today to today plus Days.
type Result struct {
	// Family is the family's figure a day: the counted accounts' values,
	// assets less liabilities (the balance sheet's net worth), moved by
	// every counted item on its days.
	Family   []Point
	Accounts []Series // in the order of the input's accounts
	// Lowest is the Family point with the lowest balance, the earliest
	// such day on a tie (today when nothing ever goes lower).
	Lowest Point
	// SafeToSpend is today's spendable money (the counted spendable
	// accounts' values) less what leaves it before the next income, never
	// below zero. What leaves it is every counted outgoing item on a
	// spendable account or on none, dated from today up to the day before
	// NextIncome (the whole horizon when there is none). Items on a card
	// or a loan are not counted: they leave the spendable accounts only
	// when the debt is paid, which is an item of its own. Incomes before
	// NextIncome do not add to it: the figure is what can go without
	// waiting for any money to come in.
	SafeToSpend int64
	// NextIncome is the first day after today with a counted incoming item
	// on a spendable account or on none; nil when there is none in the
	// horizon. An income dated today is not "next": it may be in today's
	// balance already.
	NextIncome *time.Time
}

// Project computes the Result for days days after today (at least 0).
// Each item's occurrences are its Next date and every period after it;
// those before today are not counted (not seen by their date, they are
// missed: the bills' work, not the forecast's), those from today on are.
// An occurrence on today is not yet in today's balance (a matched
// occurrence moves the next date on), so today's point already counts it.
func Project(today time.Time, days int, accounts []Account, items []Item) Result {
	today = midnight(today)
	days = max(days, 0)
	idx := make(map[uuid.UUID]int, len(accounts))
	// moves[a][d] is what account a's balance moves on day d; family[d]
	// what the family's figure moves.
	moves := make([][]int64, len(accounts))
	family := make([]int64, days+1)
	for i, a := range accounts {
		idx[a.ID] = i
		moves[i] = make([]int64, days+1)
	}
	spendableOut := make([]int64, days+1) // spendable money out by day
	next := -1                            // first day after today with a spendable income
	for _, it := range items {
		ai, hasAccount := -1, false
		if it.AccountID != nil {
			if ai, hasAccount = idx[*it.AccountID]; !hasAccount {
				continue // an account the forecast does not cover (disabled, another's)
			}
		}
		for _, d := range Occurrences(it, today, days) {
			counted := it.Counted && (!hasAccount || accounts[ai].Counted)
			if hasAccount {
				if accounts[ai].Liability {
					moves[ai][d] += it.Amount
				} else {
					moves[ai][d] -= it.Amount
				}
			}
			if !counted {
				continue
			}
			family[d] -= it.Value
			if hasAccount && !accounts[ai].Spendable {
				continue
			}
			if it.Value > 0 {
				spendableOut[d] += it.Value
			} else if it.Value < 0 && d > 0 && (next < 0 || d < next) {
				next = d
			}
		}
	}
	r := Result{Family: make([]Point, days+1), Accounts: make([]Series, len(accounts))}
	var start, spendable int64
	for _, a := range accounts {
		if !a.Counted {
			continue
		}
		if a.Liability {
			start -= a.Value
		} else {
			start += a.Value
		}
		if a.Spendable {
			spendable += a.Value
		}
	}
	for i, a := range accounts {
		s := Series{AccountID: a.ID, Points: make([]Point, days+1)}
		b := a.Balance
		for d := range s.Points {
			b += moves[i][d]
			s.Points[d] = Point{Date: today.AddDate(0, 0, d), Balance: b}
		}
		r.Accounts[i] = s
	}
	b := start
	for d := range r.Family {
		b += family[d]
		r.Family[d] = Point{Date: today.AddDate(0, 0, d), Balance: b}
		if d == 0 || b < r.Lowest.Balance {
			r.Lowest = r.Family[d]
		}
	}
	end := days + 1
	if next >= 0 {
		end = next
		t := today.AddDate(0, 0, next)
		r.NextIncome = &t
	}
	safe := spendable
	for d := range end {
		safe -= spendableOut[d]
	}
	r.SafeToSpend = max(safe, 0)
	return r
}

// Occurrences lists the days (0 is today) from today to today plus days
// on which it comes, in order.
func Occurrences(it Item, today time.Time, days int) []int {
	today = midnight(today)
	last := today.AddDate(0, 0, days)
	day := it.Day
	if day < 1 || day > 31 {
		day = it.Next.Day()
	}
	var out []int
	// The guard bounds a Next date far in the past: at most a weekly
	// series' steps over a few centuries, then nothing.
	for d, n := midnight(it.Next), 0; !d.After(last) && n < 20_000; d, n = step(it.Cadence, d, day), n+1 {
		if !d.Before(today) {
			out = append(out, int(d.Sub(today).Hours()/24))
		}
	}
	return out
}

// step is the occurrence after d: a week or two on, or the day (of the
// month) one, three or twelve months on, clamped to that month's last day.
// An unknown cadence is monthly, the reference's only one.
func step(cadence string, d time.Time, day int) time.Time {
	switch cadence {
	case "weekly":
		return d.AddDate(0, 0, 7)
	case "biweekly":
		return d.AddDate(0, 0, 14)
	case "quarterly":
		return monthsOn(d, 3, day)
	case "yearly":
		return monthsOn(d, 12, day)
	default:
		return monthsOn(d, 1, day)
	}
}

// monthsOn is d moved by n months to day of that month, or its last day
// when it is shorter (rent on the 31st is due on 28 February).
func monthsOn(d time.Time, n, day int) time.Time {
	first := time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, n, 0)
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(day, last)-1)
}

func midnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
