package forecast

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func dates(today time.Time, days []int) []string {
	out := make([]string, len(days))
	for i, d := range days {
		out[i] = today.AddDate(0, 0, d).Format(time.DateOnly)
	}
	return out
}

func TestOccurrences(t *testing.T) {
	tests := []struct {
		name  string
		today string
		days  int
		item  Item
		want  []string
	}{
		{"monthly on the 31st through February", "2027-01-15", 90,
			Item{Cadence: "monthly", Day: 31, Next: day("2027-01-31")},
			[]string{"2027-01-31", "2027-02-28", "2027-03-31"}},
		{"monthly on the 31st in a leap February", "2028-02-01", 60,
			Item{Cadence: "monthly", Day: 31, Next: day("2028-02-29")},
			[]string{"2028-02-29", "2028-03-31"}},
		{"weekly across the year's end", "2026-12-20", 20,
			Item{Cadence: "weekly", Day: 24, Next: day("2026-12-24")},
			[]string{"2026-12-24", "2026-12-31", "2027-01-07"}},
		{"biweekly", "2026-12-01", 30,
			Item{Cadence: "biweekly", Day: 4, Next: day("2026-12-04")},
			[]string{"2026-12-04", "2026-12-18"}},
		{"quarterly on the 30th", "2026-11-01", 120,
			Item{Cadence: "quarterly", Day: 30, Next: day("2026-11-30")},
			[]string{"2026-11-30", "2027-02-28"}},
		{"yearly beyond the horizon", "2026-11-01", 90,
			Item{Cadence: "yearly", Day: 1, Next: day("2027-03-01")},
			nil},
		{"a next date in the past starts from today", "2026-12-10", 30,
			Item{Cadence: "monthly", Day: 5, Next: day("2026-10-05")},
			[]string{"2027-01-05"}},
		{"on today", "2026-12-10", 0,
			Item{Cadence: "weekly", Day: 10, Next: day("2026-12-10")},
			[]string{"2026-12-10"}},
		{"no expected day: the next date's", "2026-12-01", 45,
			Item{Cadence: "monthly", Next: day("2026-12-15")},
			[]string{"2026-12-15", "2027-01-15"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			today := day(tt.today)
			got := dates(today, Occurrences(tt.item, today, tt.days))
			if tt.want == nil {
				tt.want = []string{}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("occurrences %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProject(t *testing.T) {
	checking, card, house, euro := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	acct := func(id uuid.UUID) *uuid.UUID { return &id }
	accounts := []Account{
		{ID: checking, Spendable: true, Balance: 1000, Value: 1000, Counted: true},
		{ID: card, Liability: true, Balance: 200, Value: 200, Counted: true},
		{ID: house, Balance: 50_000, Value: 50_000, Counted: true},
	}
	item := func(a *uuid.UUID, amount int64, cadence, next string) Item {
		n := day(next)
		return Item{AccountID: a, Amount: amount, Value: amount, Counted: true, Cadence: cadence, Day: n.Day(), Next: n}
	}
	type want struct {
		family      map[int]int64 // day: balance
		accounts    map[int]map[int]int64
		lowest      string
		lowestValue int64
		safe        int64
		next        string // "" when none
	}
	tests := []struct {
		name     string
		today    string
		days     int
		accounts []Account
		items    []Item
		want     want
	}{
		{"no items: flat, lowest today, all spendable is safe", "2026-12-01", 90, accounts, nil,
			want{family: map[int]int64{0: 50_800, 90: 50_800}, accounts: map[int]map[int]int64{0: {90: 1000}, 1: {90: 200}},
				lowest: "2026-12-01", lowestValue: 50_800, safe: 1000}},
		{"only income: lowest today", "2026-12-01", 60, accounts,
			[]Item{item(acct(checking), -300, "monthly", "2026-12-15")},
			want{family: map[int]int64{0: 50_800, 14: 51_100, 45: 51_400}, accounts: map[int]map[int]int64{0: {13: 1000, 14: 1300, 60: 1600}},
				lowest: "2026-12-01", lowestValue: 50_800, safe: 1000, next: "2026-12-15"}},
		{"rent before pay, card spending, an item without an account", "2026-12-01", 30, accounts,
			[]Item{
				item(acct(checking), 700, "monthly", "2026-12-03"),
				item(acct(checking), -900, "monthly", "2026-12-20"),
				item(acct(card), 50, "weekly", "2026-12-02"),
				item(nil, 100, "monthly", "2026-12-10"),
			},
			want{
				family: map[int]int64{0: 50_800, 1: 50_750, 2: 50_050, 9: 49_900, 15: 49_850, 19: 50_750},
				accounts: map[int]map[int]int64{
					0: {2: 300, 19: 1200},
					1: {0: 200, 1: 250, 8: 300}, // a card's debt grows with its spending
					2: {30: 50_000},
				},
				lowest: "2026-12-16", lowestValue: 49_850,
				safe: 200, // 1000 − rent 700 − the unassigned 100; the card's spending is not cash yet
				next: "2026-12-20",
			}},
		{"outflows past the spendable money: never below zero", "2026-12-01", 30, accounts,
			[]Item{item(acct(checking), 1500, "monthly", "2026-12-05")},
			want{family: map[int]int64{4: 49_300}, accounts: map[int]map[int]int64{0: {4: -500}},
				lowest: "2026-12-05", lowestValue: 49_300, safe: 0}},
		{"an account without a rate keeps its series, out of the family's", "2026-12-01", 30,
			append(slices.Clone(accounts), Account{ID: euro, Spendable: true, Balance: 400}),
			[]Item{item(acct(euro), 100, "monthly", "2026-12-02"), {Amount: 10, Cadence: "weekly", Next: day("2026-12-01")}},
			want{family: map[int]int64{0: 50_800, 30: 50_800}, accounts: map[int]map[int]int64{3: {0: 400, 1: 300}},
				lowest: "2026-12-01", lowestValue: 50_800, safe: 1000}},
		{"an income today is not the next one", "2026-12-01", 40, accounts,
			[]Item{item(acct(checking), -500, "monthly", "2026-12-01"), item(acct(checking), 100, "weekly", "2026-12-01")},
			want{family: map[int]int64{0: 51_200, 31: 51_300}, lowest: "2026-12-29", lowestValue: 50_800,
				safe: 1000 - 5*100, next: "2027-01-01"}},
		{"zero days", "2026-12-01", 0, accounts, []Item{item(acct(checking), 10, "weekly", "2026-12-01")},
			want{family: map[int]int64{0: 50_790}, lowest: "2026-12-01", lowestValue: 50_790, safe: 990}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			today := day(tt.today)
			r := Project(today.Add(15*time.Hour), tt.days, tt.accounts, tt.items)
			if len(r.Family) != tt.days+1 {
				t.Fatalf("%d family points, want %d", len(r.Family), tt.days+1)
			}
			for d, v := range tt.want.family {
				if p := r.Family[d]; p.Balance != v || !p.Date.Equal(today.AddDate(0, 0, d)) {
					t.Errorf("family day %d: %v %d, want %d", d, p.Date, p.Balance, v)
				}
			}
			for i, pts := range tt.want.accounts {
				if r.Accounts[i].AccountID != tt.accounts[i].ID {
					t.Errorf("series %d is of another account", i)
				}
				for d, v := range pts {
					if got := r.Accounts[i].Points[d].Balance; got != v {
						t.Errorf("account %d day %d: %d, want %d", i, d, got, v)
					}
				}
			}
			if got := r.Lowest.Date.Format(time.DateOnly); got != tt.want.lowest || r.Lowest.Balance != tt.want.lowestValue {
				t.Errorf("lowest %s %d, want %s %d", got, r.Lowest.Balance, tt.want.lowest, tt.want.lowestValue)
			}
			if r.SafeToSpend != tt.want.safe {
				t.Errorf("safe to spend %d, want %d", r.SafeToSpend, tt.want.safe)
			}
			switch {
			case tt.want.next == "" && r.NextIncome != nil:
				t.Errorf("next income %v, want none", r.NextIncome)
			case tt.want.next != "" && (r.NextIncome == nil || r.NextIncome.Format(time.DateOnly) != tt.want.next):
				t.Errorf("next income %v, want %s", r.NextIncome, tt.want.next)
			}
		})
	}
}
