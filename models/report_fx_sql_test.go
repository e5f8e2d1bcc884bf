package models_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// TestConvertInSQL checks the database's integer conversion against
// money.Convert over many random amounts and rates: negative amounts,
// exact halves (odd amounts at x.5, x.25, x.125 and their inverses),
// inverses that do not end, and amounts too large for 64 bits, which SQL
// must leave to Go.
func TestConvertInSQL(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	fixed := []string{"0.5", "1.5", "2.5", "0.25", "0.125", "1.0823", "0.0061", "163.45", "1", "3", "7",
		"0.000000000000000001", "999999999999.999999999999999999"}
	var amounts []money.Amount
	var rates []money.Rate
	for i := range 4000 {
		var text string
		if i%3 == 0 {
			text = fixed[rng.IntN(len(fixed))]
		} else {
			text = fmt.Sprintf("%d.%0*d", rng.IntN(300), 1+rng.IntN(8), rng.Int64N(100_000_000))
			if text[0] == '0' && len(text) > 1 && text[1] != '.' {
				text = text[1:]
			}
		}
		r, err := money.ParseRate(text)
		if err != nil {
			continue // "0.000": not a rate
		}
		if rng.IntN(2) == 0 {
			r = r.Inverse()
		}
		var a int64
		switch rng.IntN(4) {
		case 0:
			a = rng.Int64N(20) - 10
		case 1:
			a = 2*rng.Int64N(1000) + 1 // odd: a half at x.5
		case 2:
			a = rng.Int64N(1e13)
		default:
			a = rng.Int64N(math.MaxInt64 / 2)
		}
		if rng.IntN(2) == 0 {
			a = -a
		}
		amounts, rates = append(amounts, money.Amount(a)), append(rates, r)
	}
	inSQL := 0
	for start := 0; start < len(amounts); start += 500 {
		end := min(start+500, len(amounts))
		got, err := s.ConvertInSQL(ctx, amounts[start:end], rates[start:end])
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			a, r := amounts[start+i], rates[start+i]
			if !g.Valid {
				continue // left to Go
			}
			inSQL++
			want, err := money.Convert(a, r)
			if err != nil || int64(want) != g.Int64 {
				t.Errorf("%s × %s: SQL %d, Go %s (%v)", a, r, g.Int64, want, err)
			}
		}
	}
	if inSQL < len(amounts)/2 {
		t.Errorf("SQL converted %d of %d rows, want most", inSQL, len(amounts))
	}
}

// TestStatementInSQL checks that the income statement and the category
// totals, converting in SQL, equal the conversion of every row in Go, on
// a random ledger: rates fetched and set by the family (its own winning
// on a day that has both), stored in either direction, days without a
// rate, rows before the first rate, a currency without any, rates of
// eighteen decimals (most amounts then too large for SQL), exact
// halves, income and spending, excluded rows and a neighbour family with
// other rates; and the budget lines' spending.
func TestStatementInSQL(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, 22))
	f, other := modelstest.NewFamily(t, s, "fxsql"), modelstest.NewFamily(t, s, "fxsql-other")
	fam := f.Family.ID
	day := func(i int) civil.Date {
		return civil.DateOf(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i))
	}
	rate := func() money.Rate {
		text := fmt.Sprintf("%d.%d5", 1+rng.IntN(2), rng.IntN(1000))
		if rng.IntN(5) == 0 { // eighteen decimals: most amounts too large for SQL
			text = fmt.Sprintf("%d.%017d5", 1+rng.IntN(2), rng.Int64N(1e17))
		}
		r, err := money.ParseRate(text)
		must(t, err)
		return r
	}
	// EUR fetched in USD on most days from day 10, GBP fetched as USD in
	// GBP (converted by the inverse), CHF only the family's own; JPY none.
	for _, pair := range [][2]string{{"EUR", "USD"}, {"USD", "GBP"}} {
		var days []models.DayRate
		for i := 10; i < 120; i++ {
			if rng.IntN(4) > 0 {
				days = append(days, models.DayRate{Date: day(i), Rate: rate()})
			}
		}
		must(t, s.SaveFetchedRates(ctx, pair[0], pair[1], day(0), day(120), days))
	}
	for i := 0; i < 120; i += 1 + rng.IntN(9) {
		for _, pair := range [][2]string{{"EUR", "USD"}, {"GBP", "USD"}, {"USD", "CHF"}} {
			if rng.IntN(2) == 0 {
				if _, err := s.SetRate(ctx, fam, &models.ExchangeRate{FromCurrency: pair[0], ToCurrency: pair[1], Date: day(i), Rate: rate()}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := s.SetRate(ctx, other.Family.ID, &models.ExchangeRate{FromCurrency: "EUR", ToCurrency: "USD", Date: day(i), Rate: rate()}); err != nil {
			t.Fatal(err)
		}
	}
	var cats []*uuid.UUID
	for i := range 4 {
		c := &models.Category{FamilyID: fam, Name: fmt.Sprintf("C%d", i), Color: "#112233", Icon: "tag", Classification: "expense"}
		must(t, s.CreateCategory(ctx, c))
		cats = append(cats, &c.ID)
	}
	cats = append(cats, nil)
	now := time.Now().UTC().Truncate(time.Microsecond)
	var txs []models.Transaction
	for _, fx := range []*modelstest.FamilyFixture{f, other} {
		accounts := []*models.Account{fx.Account}
		for _, cur := range []string{"EUR", "GBP", "CHF", "JPY"} {
			a := &models.Account{FamilyID: fx.Family.ID, Name: cur, AccountType: "depository", Currency: cur}
			must(t, s.CreateAccount(ctx, a))
			accounts = append(accounts, a)
		}
		for range 3000 {
			acc := accounts[rng.IntN(len(accounts))]
			var a int64
			switch rng.IntN(5) {
			case 0:
				a = 2*rng.Int64N(50) + 1
			case 1:
				a = rng.Int64N(1e6)
			case 2:
				a = rng.Int64N(1e9)
			case 3:
				a = rng.Int64N(1e14)
			default:
				a = rng.Int64N(5)
			}
			if rng.IntN(3) == 0 {
				a = -a
			}
			t := models.Transaction{ID: models.NewID(), FamilyID: fx.Family.ID, AccountID: acc.ID, Date: day(rng.IntN(130)),
				Amount: money.Amount(a), Currency: acc.Currency, Name: "Row", CreatedAt: now, UpdatedAt: now,
				Excluded: rng.IntN(20) == 0}
			if fx == f {
				t.CategoryID = cats[rng.IntN(len(cats))]
			}
			txs = append(txs, t)
		}
	}
	if _, err := s.DB().NewInsert().Model(&txs).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []models.Period{{From: day(0), To: day(130)}, {From: day(15), To: day(44)}, {From: day(3), To: day(12)}, {From: day(60), To: day(60)}} {
		for _, byMonth := range []bool{true, false} {
			want, err := s.IncomeStatementInGo(ctx, fam, p, byMonth)
			must(t, err)
			got, err := s.IncomeStatementNew(ctx, fam, p, byMonth)
			must(t, err)
			if len(want) == 0 {
				t.Fatalf("%v: no cells", p)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%v by month %v:\n got %+v\nwant %+v", p, byMonth, got, want)
			}
		}
	}
	// Each budget line's spending is its month's expense cell of the
	// category, as Go converts it.
	cells, err := s.IncomeStatementInGo(ctx, fam, models.Period{From: day(0), To: day(130)}, true)
	must(t, err)
	spent := map[string]money.Amount{}
	for _, c := range cells {
		if c.Classification == "expense" && c.CategoryID != nil {
			spent[string(c.Month)+c.CategoryID.String()] = c.Total
		}
	}
	for m := 3; m <= 7; m++ {
		b, err := s.EnsureBudget(ctx, fam, civil.Date(fmt.Sprintf("2025-%02d-01", m)))
		must(t, err)
		lines, _, err := s.BudgetLines(ctx, fam, models.BudgetLineFilter{BudgetID: &b.ID}, models.Page{Number: 1, Size: 100})
		must(t, err)
		if len(lines) != 4 {
			t.Fatalf("%d lines, want 4", len(lines))
		}
		for _, l := range lines {
			if want := spent[string(b.StartDate)+l.CategoryID.String()]; l.ActualSpending != want {
				t.Errorf("budget %s, %s: spent %s, want %s", b.StartDate, l.CategoryName, l.ActualSpending, want)
			}
		}
	}
}
