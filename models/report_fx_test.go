package models_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// fxRow is one transaction of the fx ledger: in its account's currency.
type fxRow struct {
	currency string
	date     civil.Date
	amount   string
	category string // "" for none
}

// fxRows are the rows both families of the fx ledger hold. The period
// May–June 2026 holds them all; 2026-06-05 is a Friday.
var fxRows = []fxRow{
	{"USD", "2026-06-02", "-1000", "Salary"},
	{"USD", "2026-06-06", "50", "Groceries"},
	{"EUR", "2026-05-29", "20", "Groceries"},   // before the first EUR rate: left out
	{"EUR", "2026-06-05", "10", "Groceries"},   // Friday, 1.0823
	{"EUR", "2026-06-06", "10.0001", "Dining"}, // Saturday: Friday's rate, 10.82310823 → 10.8231
	{"EUR", "2026-06-07", "-100", "Salary"},    // Sunday: Friday's rate
	{"EUR", "2026-06-08", "30", ""},            // Monday, 1.1 (family a's own: 2)
	{"GBP", "2026-06-03", "0.0002", "Groceries"},
	{"GBP", "2026-06-03", "0.0002", "Groceries"}, // each 0.00025 → 0.0003: rounded per row, not per sum
	{"GBP", "2026-06-03", "-0.0002", "Salary"},
	{"JPY", "2026-06-04", "1000", "Groceries"}, // no JPY rate at all: left out, named
}

type fxLedger struct {
	s    *models.Store
	a, b *modelstest.FamilyFixture
	accs map[*modelstest.FamilyFixture][]*models.Account
}

// newFXLedger builds two USD families with the rows of fxRows, fetched
// rates of EUR (in USD) and of USD in GBP (so GBP converts by the exact
// inverse, 1.25), none of JPY, and family a's own EUR rate of Monday.
func newFXLedger(t *testing.T) *fxLedger {
	t.Helper()
	ctx := context.Background()
	s := modelstest.NewStore(t)
	l := &fxLedger{s: s, a: modelstest.NewFamily(t, s, "fx-a"), b: modelstest.NewFamily(t, s, "fx-b"),
		accs: map[*modelstest.FamilyFixture][]*models.Account{}}
	must(t, s.SaveFetchedRates(ctx, "EUR", "USD", "2026-06-01", "2026-06-30", []models.DayRate{
		{Date: "2026-06-01", Rate: rateOf(t, "1.08")}, {Date: "2026-06-05", Rate: rateOf(t, "1.0823")},
		{Date: "2026-06-08", Rate: rateOf(t, "1.1")}}))
	must(t, s.SaveFetchedRates(ctx, "USD", "GBP", "2026-06-01", "2026-06-30", []models.DayRate{
		{Date: "2026-06-01", Rate: rateOf(t, "0.8")}}))
	if _, err := s.SetRate(ctx, l.a.Family.ID, &models.ExchangeRate{FromCurrency: "EUR", ToCurrency: "USD",
		Date: "2026-06-08", Rate: rateOf(t, "2")}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*modelstest.FamilyFixture{l.a, l.b} {
		fam := f.Family.ID
		accs := map[string]*models.Account{"USD": f.Account}
		for _, cur := range []string{"EUR", "GBP", "JPY"} {
			a := &models.Account{FamilyID: fam, Name: cur + " account", AccountType: "depository", Currency: cur}
			must(t, s.CreateAccount(ctx, a))
			accs[cur] = a
			l.accs[f] = append(l.accs[f], a)
		}
		l.accs[f] = append(l.accs[f], f.Account)
		cats := map[string]*models.Category{}
		for _, c := range []struct{ name, class, parent string }{
			{"Salary", "income", ""}, {"Groceries", "expense", ""}, {"Food", "expense", ""}, {"Dining", "expense", "Food"}} {
			cat := &models.Category{FamilyID: fam, Name: c.name, Color: "#112233", Icon: "tag", Classification: c.class}
			if c.parent != "" {
				cat.ParentID = &cats[c.parent].ID
			}
			must(t, s.CreateCategory(ctx, cat))
			cats[c.name] = cat
		}
		for _, r := range fxRows {
			tx := &models.Transaction{FamilyID: fam, AccountID: accs[r.currency].ID, Date: r.date, Amount: mustAmount(t, r.amount),
				Currency: r.currency, Name: "t " + string(r.date)}
			if r.category != "" {
				tx.CategoryID = &cats[r.category].ID
			}
			if _, _, err := s.CreateTransaction(ctx, tx, nil); err != nil {
				t.Fatal(err)
			}
		}
		for _, a := range l.accs[f] {
			must(t, s.RecalculateBalance(ctx, fam, a.ID)) // as the worker does after writes
		}
	}
	return l
}

// fxByHand converts every row of fxRows on its own with Quote and sums:
// what every figure must show.
func fxByHand(t *testing.T, s *models.Store, f *modelstest.FamilyFixture) (income, spending money.Amount, byCategory map[string]money.Amount) {
	t.Helper()
	byCategory = map[string]money.Amount{}
	for _, r := range fxRows {
		q, ok, err := s.Quote(context.Background(), f.Family.ID, r.currency, "USD", r.date)
		must(t, err)
		if !ok {
			continue
		}
		v, err := money.Convert(mustAmount(t, r.amount), q.Rate)
		must(t, err)
		if v < 0 {
			income -= v
			byCategory["income "+r.category] -= v
		} else {
			spending += v
			byCategory["expense "+r.category] += v
		}
	}
	return income, spending, byCategory
}

// TestFlowsConverted: every total of flows converts each row at its day's
// rate (a weekend at Friday's), rounds it once and sums, the same number
// on every figure; a currency without a rate stays out and is named; a
// family's own rate counts for it alone.
func TestFlowsConverted(t *testing.T) {
	l := newFXLedger(t)
	ctx := context.Background()
	p := models.Period{From: "2026-05-01", To: "2026-06-30"}
	for _, tc := range []struct {
		name             string
		f                *modelstest.FamilyFixture
		income, spending string
		uncategorized    string
	}{
		{"own Monday rate", l.a, "1108.2303", "131.6467", "60"},
		{"fetched rates only", l.b, "1108.2303", "104.6467", "33"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fam := tc.f.Family.ID
			income, spending, byCategory := fxByHand(t, l.s, tc.f)
			if income != mustAmount(t, tc.income) || spending != mustAmount(t, tc.spending) {
				t.Fatalf("by hand: income %v spending %v, want %s %s", income, spending, tc.income, tc.spending)
			}
			check := func(what string, gotIncome, gotSpending money.Amount) {
				t.Helper()
				if gotIncome != income || gotSpending != spending {
					t.Errorf("%s: income %v spending %v, want %v %v", what, gotIncome, gotSpending, income, spending)
				}
			}

			totals, err := l.s.PeriodTotals(ctx, fam, p)
			must(t, err)
			check("PeriodTotals", totals.Income, totals.Spending)
			if totals.IncomeCount != 3 || totals.SpendingCount != 6 {
				t.Errorf("PeriodTotals counts %d %d, want 3 6", totals.IncomeCount, totals.SpendingCount)
			}
			list, err := l.s.TransactionTotals(ctx, fam, models.TransactionFilter{StartDate: p.From, EndDate: p.To})
			must(t, err)
			check("TransactionTotals", list.Income, list.Spending)
			var ids []models.Account
			for _, a := range l.accs[tc.f] {
				ids = append(ids, *a)
			}
			acct, err := l.s.AccountTotals(ctx, fam, p, accountIDs(ids))
			must(t, err)
			check("AccountTotals", acct.Income, acct.Spending)
			eur, err := l.s.AccountTotals(ctx, fam, p, accountIDs(ids[:1]))
			must(t, err)
			if eur.Income != mustAmount(t, "108.23") || eur.IncomeCount != 1 {
				t.Errorf("EUR account alone: %+v", eur)
			}

			cats, err := l.s.CategoryTotals(ctx, fam, p)
			must(t, err)
			got := map[string]money.Amount{}
			for _, c := range cats {
				name := ""
				if c.Name != nil {
					name = *c.Name
				}
				got[c.Classification+" "+name] += c.Total
			}
			if len(got) != len(byCategory) {
				t.Errorf("CategoryTotals %v, want %v", got, byCategory)
			}
			for k, v := range byCategory {
				if got[k] != v {
					t.Errorf("CategoryTotals %q = %v, want %v", k, got[k], v)
				}
			}
			if !slices.IsSortedFunc(cats, func(a, b models.CategoryTotal) int {
				if a.Classification != b.Classification {
					return map[bool]int{true: -1, false: 1}[a.Classification < b.Classification]
				}
				return int(b.Total - a.Total)
			}) {
				t.Errorf("CategoryTotals out of order: %+v", cats)
			}

			cells, err := l.s.IncomeStatement(ctx, fam, p)
			must(t, err)
			var ci, cs money.Amount
			for _, c := range cells {
				if c.Month != "2026-06-01" {
					t.Errorf("a cell of %s: the May row has no rate", c.Month)
				}
				if c.Classification == "income" {
					ci += c.Total
				} else {
					cs += c.Total
				}
			}
			check("IncomeStatement", ci, cs)
			// The API adds the categories up from the cells: one read of
			// the ledger, the same rows in the same order.
			if of := models.CategoryTotalsOf(cells); !reflect.DeepEqual(of, cats) {
				t.Errorf("CategoryTotalsOf(IncomeStatement)\n%+v, CategoryTotals\n%+v", of, cats)
			}
			flow, err := l.s.CashFlow(ctx, fam, p)
			must(t, err)
			if len(flow) != 2 || flow[0].Income != 0 || flow[0].Spending != 0 {
				t.Fatalf("CashFlow %+v", flow)
			}
			check("CashFlow", flow[1].Income, flow[1].Spending)

			_, err = l.s.EnsureBudget(ctx, fam, "2026-06-01")
			must(t, err)
			budgets, _, err := l.s.Budgets(ctx, fam, models.BudgetFilter{StartDate: "2026-06-01"}, models.Page{Number: 1, Size: 10})
			must(t, err)
			if len(budgets) != 1 {
				t.Fatalf("budgets %+v", budgets)
			}
			check("Budgets", budgets[0].ActualIncome, budgets[0].ActualSpending)
			if budgets[0].UncategorizedSpending != mustAmount(t, tc.uncategorized) {
				t.Errorf("uncategorized %v, want %s", budgets[0].UncategorizedSpending, tc.uncategorized)
			}
			one, err := l.s.Budget(ctx, fam, budgets[0].ID)
			must(t, err)
			check("Budget", one.ActualIncome, one.ActualSpending)
			lines, _, err := l.s.BudgetLines(ctx, fam, models.BudgetLineFilter{BudgetID: &budgets[0].ID}, models.Page{Number: 1, Size: 10})
			must(t, err)
			wantLines := map[string]money.Amount{"Groceries": byCategory["expense Groceries"],
				"Food": byCategory["expense Dining"], "Dining": byCategory["expense Dining"]}
			if len(lines) != len(wantLines) {
				t.Fatalf("budget lines %+v", lines)
			}
			for _, ln := range lines {
				if ln.ActualSpending != wantLines[ln.CategoryName] {
					t.Errorf("budget line %s spent %v, want %v", ln.CategoryName, ln.ActualSpending, wantLines[ln.CategoryName])
				}
			}

			left, err := l.s.LeftOutOf(ctx, fam, p)
			must(t, err)
			if left.OtherCurrency != 2 || !slices.Equal(left.Currencies, []string{"EUR", "JPY"}) ||
				left.Converted != 7 || !slices.Equal(left.ConvertedCurrencies, []string{"EUR", "GBP"}) {
				t.Errorf("LeftOutOf %+v", left)
			}
		})
	}
}

func accountIDs(accs []models.Account) []uuid.UUID {
	var ids []uuid.UUID
	for _, a := range accs {
		ids = append(ids, a.ID)
	}
	return ids
}

// TestNetWorthSeriesConverted: each day's balances in other currencies
// count at that day's rate (a weekend at Friday's), an account without a
// rate on or before the day is left out and counted, and a family's own
// rate moves its series alone.
func TestNetWorthSeriesConverted(t *testing.T) {
	l := newFXLedger(t)
	ctx := context.Background()
	p := models.Period{From: "2026-05-31", To: "2026-06-08"}
	want := map[*modelstest.FamilyFixture][]models.SeriesPoint{
		l.b: {
			{Date: "2026-05-31", Value: 0, LeftOut: 3},                         // EUR -20 before its first rate, GBP too, JPY never
			{Date: "2026-06-01", Value: mustAmount(t, "-21.6"), LeftOut: 1},    // EUR -20 × 1.08
			{Date: "2026-06-02", Value: mustAmount(t, "978.4"), LeftOut: 1},    // the salary
			{Date: "2026-06-03", Value: mustAmount(t, "978.3997"), LeftOut: 1}, // GBP -0.0002 × 1.25 = -0.00025 → -0.0003
			{Date: "2026-06-04", Value: mustAmount(t, "978.3997"), LeftOut: 1}, // JPY moves, still without a rate
			{Date: "2026-06-05", Value: mustAmount(t, "967.5307"), LeftOut: 1}, // EUR -30 × 1.0823
			{Date: "2026-06-06", Value: mustAmount(t, "906.7076"), LeftOut: 1}, // Saturday: EUR -40.0001 × Friday's 1.0823
			{Date: "2026-06-07", Value: mustAmount(t, "1014.9376"), LeftOut: 1},
			{Date: "2026-06-08", Value: mustAmount(t, "982.9996"), LeftOut: 1}, // EUR 29.9999 × 1.1
		},
	}
	a := slices.Clone(want[l.b])
	a[len(a)-1].Value = mustAmount(t, "1009.9995") // family a's own Monday rate, 2
	want[l.a] = a
	for f, w := range want {
		got, err := l.s.NetWorthSeries(ctx, f.Family.ID, p, models.Day)
		must(t, err)
		if !slices.Equal(got, w) {
			t.Errorf("%s:\n got %+v\nwant %+v", f.Family.Name, got, w)
		}
	}
	month, err := l.s.NetWorthSeries(ctx, l.b.Family.ID, models.Period{From: "2026-06-01", To: "2026-06-30"}, models.Month)
	must(t, err)
	if len(month) != 1 || month[0].Value != mustAmount(t, "982.9996") || month[0].LeftOut != 1 {
		t.Errorf("June by month: %+v", month)
	}
}
