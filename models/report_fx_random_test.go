package models_test

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// fxModelRate is a rate as the test stored it: one unit of from in to on
// day, the family's own (else the instance's).
type fxModelRate struct {
	from, to string
	day      civil.Date
	rate     *big.Rat
	own      bool
}

// fxModel is the test's own reading of the rules, written without the
// package's rate series or conversion: the rate of a row's currency into
// USD is that of the latest day on or before the row's day that has one,
// the family's own before the instance's, the pair as asked before its
// inverse; a row converts at it, a × rate rounded once to the
// ten-thousandth half away from zero; a currency without any rate on or
// before the day is left out.
type fxModel struct{ rates []fxModelRate }

func (m *fxModel) rate(cur string, day civil.Date) (*big.Rat, bool) {
	var best *fxModelRate
	better := func(a, b *fxModelRate) bool {
		if a.day != b.day {
			return a.day > b.day
		}
		if a.own != b.own {
			return a.own
		}
		return a.from == cur && b.from != cur
	}
	for i := range m.rates {
		r := &m.rates[i]
		if r.day > day || !(r.from == cur && r.to == "USD" || r.from == "USD" && r.to == cur) {
			continue
		}
		if best == nil || better(r, best) {
			best = r
		}
	}
	if best == nil {
		return nil, false
	}
	if best.from == cur {
		return best.rate, true
	}
	return new(big.Rat).Inv(best.rate), true
}

// value is the row's amount in USD, and whether it is counted at all.
func (m *fxModel) value(cur string, day civil.Date, a money.Amount) (int64, bool) {
	if cur == "USD" {
		return int64(a), true
	}
	r, ok := m.rate(cur, day)
	if !ok {
		return 0, false
	}
	x := new(big.Rat).Mul(new(big.Rat).SetInt64(int64(a)), r)
	num, den := new(big.Int).Abs(x.Num()), x.Denom()
	q, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	if new(big.Int).Mul(rem, big.NewInt(2)).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if x.Sign() < 0 {
		q.Neg(q)
	}
	return q.Int64(), true
}

// TestFXTotalsRandom compares every total that converts other currencies
// in SQL (the income statement, category totals, account totals, the
// transactions list's totals, the budgets page and budget lines, and
// what the figures leave out) with fxModel over a random ledger: EUR
// fetched on weekdays only with random gaps, GBP the family's own stored
// as USD in GBP (read by its inverse), CHF both fetched and the family's
// own on some days (the family's wins), JPY without any rate, rows before
// the first rate, excluded, deleted and transfer rows, a disabled
// account, and a neighbour family with rates of its own.
func TestFXTotalsRandom(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(31, 32))
	f, other := modelstest.NewFamily(t, s, "fxrand"), modelstest.NewFamily(t, s, "fxrand-other")
	fam := f.Family.ID
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	day := func(i int) civil.Date { return civil.DateOf(start.AddDate(0, 0, i)) }
	const days = 150
	m := &fxModel{}
	rateText := func() string { return fmt.Sprintf("%d.%04d", rng.IntN(2), 1+rng.IntN(9999)) }
	fetched := func(from, to string, keep func(d time.Time) bool) {
		var series []models.DayRate
		for i := 20; i < days; i++ {
			if !keep(start.AddDate(0, 0, i)) {
				continue
			}
			text := rateText()
			r, err := money.ParseRate(text)
			must(t, err)
			series = append(series, models.DayRate{Date: day(i), Rate: r})
			br, _ := new(big.Rat).SetString(text)
			m.rates = append(m.rates, fxModelRate{from: from, to: to, day: day(i), rate: br})
		}
		must(t, s.SaveFetchedRates(ctx, from, to, day(0), day(days), series))
	}
	weekday := func(d time.Time) bool {
		return d.Weekday() != time.Saturday && d.Weekday() != time.Sunday && rng.IntN(5) > 0
	}
	fetched("EUR", "USD", weekday)
	fetched("CHF", "USD", func(time.Time) bool { return rng.IntN(3) == 0 })
	own := func(famID uuid.UUID, from, to string, i int, inModel bool) {
		text := rateText()
		r, err := money.ParseRate(text)
		must(t, err)
		if _, err := s.SetRate(ctx, famID, &models.ExchangeRate{FromCurrency: from, ToCurrency: to, Date: day(i), Rate: r}); err != nil {
			t.Fatal(err)
		}
		if inModel {
			br, _ := new(big.Rat).SetString(text)
			m.rates = append(m.rates, fxModelRate{from: from, to: to, day: day(i), rate: br, own: true})
		}
	}
	for i := 10; i < days; i += 1 + rng.IntN(6) {
		own(fam, "USD", "GBP", i, true)
		if rng.IntN(3) == 0 {
			own(fam, "CHF", "USD", i, true)
		}
		own(other.Family.ID, "EUR", "USD", i, false)
		own(other.Family.ID, "USD", "JPY", i, false)
	}

	var cats []*uuid.UUID
	for i := range 3 {
		c := &models.Category{FamilyID: fam, Name: fmt.Sprintf("Cat %d", i), Color: "#112233", Icon: "tag", Classification: "expense"}
		must(t, s.CreateCategory(ctx, c))
		cats = append(cats, &c.ID)
	}
	cats = append(cats, nil)
	now := time.Now().UTC().Truncate(time.Microsecond)
	type row struct {
		models.Transaction
		active, leg bool
	}
	var rows []row
	var txs []models.Transaction
	var transfers []models.Transfer
	for _, fx := range []*modelstest.FamilyFixture{f, other} {
		accounts := []*models.Account{fx.Account}
		for _, cur := range []string{"EUR", "GBP", "CHF", "JPY", "EUR"} {
			a := &models.Account{FamilyID: fx.Family.ID, Name: cur, AccountType: "depository", Currency: cur}
			must(t, s.CreateAccount(ctx, a))
			accounts = append(accounts, a)
		}
		disabled := accounts[len(accounts)-1]
		if _, err := s.DB().NewUpdate().Model(disabled).Set("status = ?", models.AccountDisabled).
			Where("id = ?", disabled.ID).Where("family_id = ?", fx.Family.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for range 1500 {
			acc := accounts[rng.IntN(len(accounts))]
			var a int64
			switch rng.IntN(4) {
			case 0:
				a = 2*rng.Int64N(50) + 1
			case 1:
				a = rng.Int64N(1e7)
			case 2:
				a = rng.Int64N(1e10)
			default:
				a = rng.Int64N(3)
			}
			if rng.IntN(3) == 0 {
				a = -a
			}
			tx := models.Transaction{ID: models.NewID(), FamilyID: fx.Family.ID, AccountID: acc.ID, Date: day(rng.IntN(days)),
				Amount: money.Amount(a), Currency: acc.Currency, Name: "Row", CreatedAt: now, UpdatedAt: now,
				Excluded: rng.IntN(15) == 0, CategoryID: cats[rng.IntN(len(cats))]}
			if fx != f {
				tx.CategoryID = nil
			}
			if rng.IntN(40) == 0 {
				tx.DeletedAt = &now
			}
			r := row{Transaction: tx, active: acc != disabled}
			if rng.IntN(25) == 0 && tx.DeletedAt == nil { // a transfer from the USD account; either leg may be excluded
				out := models.Transaction{ID: models.NewID(), FamilyID: fx.Family.ID, AccountID: accounts[0].ID, Date: tx.Date,
					Amount: 1 + money.Amount(rng.Int64N(1e6)), Currency: "USD", Name: "Out", CreatedAt: now, UpdatedAt: now,
					Excluded: rng.IntN(5) == 0}
				r.Amount = -r.Amount.Abs()
				r.Transaction.Amount = r.Amount
				r.leg = true
				transfers = append(transfers, models.Transfer{ID: models.NewID(), FamilyID: fx.Family.ID, InflowTransactionID: r.ID,
					OutflowTransactionID: out.ID, Status: "confirmed", CreatedAt: now, UpdatedAt: now})
				txs = append(txs, out)
				if fx == f {
					rows = append(rows, row{Transaction: out, active: true, leg: true})
				}
			}
			txs = append(txs, r.Transaction)
			if fx == f {
				rows = append(rows, r)
			}
		}
	}
	for i := 0; i < len(txs); i += 500 {
		batch := txs[i:min(i+500, len(txs))]
		if _, err := s.DB().NewInsert().Model(&batch).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DB().NewInsert().Model(&transfers).Exec(ctx); err != nil {
		t.Fatal(err)
	}

	// counted walks the rows income and spending count in p (on accounts,
	// when not nil), each with its value in USD.
	counted := func(p models.Period, accounts []uuid.UUID, fn func(r row, v int64)) {
		for _, r := range rows {
			if r.Date < p.From || r.Date > p.To || r.DeletedAt != nil || r.Excluded || !r.active || r.leg ||
				accounts != nil && !slices.Contains(accounts, r.AccountID) {
				continue
			}
			if v, ok := m.value(r.Currency, r.Date, r.Amount); ok {
				fn(r, v)
			}
		}
	}
	totals := func(p models.Period, accounts []uuid.UUID) models.Totals {
		want := models.Totals{Currency: "USD"}
		counted(p, accounts, func(r row, v int64) {
			if r.Amount < 0 {
				want.Income -= money.Amount(v)
				want.IncomeCount++
			} else {
				want.Spending += money.Amount(v)
				want.SpendingCount++
			}
		})
		return want
	}
	periods := []models.Period{{From: day(0), To: day(days)}, {From: day(25), To: day(58)}, {From: day(5), To: day(22)}, {From: day(70), To: day(70)}}
	for _, p := range periods {
		// The income statement, by month, direction and category.
		type key struct {
			month  civil.Date
			income bool
			cat    uuid.UUID
		}
		type sum struct {
			total int64
			n     int
		}
		want := map[key]sum{}
		counted(p, nil, func(r row, v int64) {
			k := key{month: civil.Date(string(r.Date)[:8] + "01"), income: r.Amount < 0}
			if r.CategoryID != nil {
				k.cat = *r.CategoryID
			}
			c := want[k]
			c.total += v
			c.n++
			want[k] = c
		})
		for k, c := range want {
			c.total = max(c.total, -c.total)
			want[k] = c
		}
		cells, err := s.IncomeStatement(ctx, fam, p)
		must(t, err)
		got := map[key]sum{}
		for _, c := range cells {
			k := key{month: c.Month, income: c.Classification == "income"}
			if c.CategoryID != nil {
				k.cat = *c.CategoryID
			}
			got[k] = sum{int64(c.Total), c.Count}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: income statement\n got %v\nwant %v", p, got, want)
		}
		wantTotals := totals(p, nil)
		ct, err := s.CategoryTotals(ctx, fam, p)
		must(t, err)
		if got := *models.TotalsOf("USD", ct); got != wantTotals {
			t.Errorf("%v: category totals %+v, want %+v", p, got, wantTotals)
		}

		// Account totals of the EUR and GBP accounts and the USD one.
		accounts := []uuid.UUID{f.Account.ID}
		for _, r := range rows {
			if (r.Currency == "EUR" || r.Currency == "GBP") && !slices.Contains(accounts, r.AccountID) {
				accounts = append(accounts, r.AccountID)
			}
		}
		at, err := s.AccountTotals(ctx, fam, p, accounts)
		must(t, err)
		if want := totals(p, accounts); *at != want {
			t.Errorf("%v: account totals %+v, want %+v", p, *at, want)
		}

		// The transactions list's totals: excluded, deleted and transfer
		// rows out, any account's status in.
		tt, err := s.TransactionTotals(ctx, fam, models.TransactionFilter{StartDate: p.From, EndDate: p.To})
		must(t, err)
		wantList := models.Totals{Currency: "USD"}
		for _, r := range rows {
			if r.Date < p.From || r.Date > p.To || r.DeletedAt != nil || r.Excluded || r.leg {
				continue
			}
			if v, ok := m.value(r.Currency, r.Date, r.Amount); ok {
				if r.Amount < 0 {
					wantList.Income -= money.Amount(v)
					wantList.IncomeCount++
				} else {
					wantList.Spending += money.Amount(v)
					wantList.SpendingCount++
				}
			}
		}
		if *tt != wantList {
			t.Errorf("%v: transaction totals %+v, want %+v", p, *tt, wantList)
		}

		// What the figures leave out.
		lo, err := s.LeftOutOf(ctx, fam, p)
		must(t, err)
		wantLeft := models.LeftOut{}
		for _, r := range rows {
			if r.Date < p.From || r.Date > p.To || r.DeletedAt != nil || !r.active || r.leg {
				continue
			}
			_, ok := m.rate(r.Currency, r.Date)
			switch {
			case r.Excluded:
				wantLeft.Excluded++
			case r.Currency == "USD":
			case ok:
				wantLeft.Converted++
				if !slices.Contains(wantLeft.ConvertedCurrencies, r.Currency) {
					wantLeft.ConvertedCurrencies = append(wantLeft.ConvertedCurrencies, r.Currency)
				}
			default:
				wantLeft.OtherCurrency++
				if !slices.Contains(wantLeft.Currencies, r.Currency) {
					wantLeft.Currencies = append(wantLeft.Currencies, r.Currency)
				}
			}
		}
		slices.Sort(wantLeft.Currencies)
		slices.Sort(wantLeft.ConvertedCurrencies)
		if !reflect.DeepEqual(*lo, wantLeft) {
			t.Errorf("%v: left out %+v, want %+v", p, *lo, wantLeft)
		}
		if p == periods[0] && (!slices.Contains(lo.Currencies, "JPY") || lo.Converted == 0) {
			t.Errorf("%v: left out %+v, want JPY left out and rows converted", p, *lo)
		}
	}
	// Reports at once (on SQLite each fills the rates table of the
	// connection it holds) and inside a transaction answer the same.
	alone := make([][]models.StatementCell, len(periods))
	for i, p := range periods {
		var err error
		alone[i], err = s.IncomeStatement(ctx, fam, p)
		must(t, err)
	}
	var wg sync.WaitGroup
	for i := range 3 * len(periods) {
		wg.Go(func() {
			got, err := s.IncomeStatement(ctx, fam, periods[i%len(periods)])
			if err != nil || !reflect.DeepEqual(got, alone[i%len(periods)]) {
				t.Errorf("%v at once: %v, %v", periods[i%len(periods)], err, got)
			}
		})
	}
	wg.Wait()
	must(t, s.RunInTx(ctx, func(tx *models.Store) error {
		got, err := tx.IncomeStatement(ctx, fam, periods[1])
		if !reflect.DeepEqual(got, alone[1]) {
			t.Errorf("%v in a transaction: %v", periods[1], got)
		}
		return err
	}))

	tt, err := s.TransactionTotals(ctx, fam, models.TransactionFilter{})
	must(t, err)
	if want := totals(models.Period{From: day(0), To: day(days)}, nil); tt.IncomeCount < want.IncomeCount {
		t.Errorf("open transaction totals %+v, want at least the counted rows' %+v", *tt, want)
	}

	// The budgets page and the budget lines, month by month.
	for mo := 1; mo <= 5; mo++ {
		_, err := s.EnsureBudget(ctx, fam, civil.Date(fmt.Sprintf("2025-%02d-01", mo)))
		must(t, err)
	}
	budgets, _, err := s.Budgets(ctx, fam, models.BudgetFilter{}, models.Page{Number: 1, Size: 12})
	must(t, err)
	if len(budgets) != 5 {
		t.Fatalf("%d budgets, want 5", len(budgets))
	}
	for _, b := range budgets {
		var spent, income, uncategorized money.Amount
		byCat := map[uuid.UUID]money.Amount{}
		counted(models.Period{From: b.StartDate, To: b.EndDate}, nil, func(r row, v int64) {
			switch {
			case r.Amount < 0:
				income -= money.Amount(v)
			case r.Amount > 0:
				spent += money.Amount(v)
				if r.CategoryID == nil {
					uncategorized += money.Amount(v)
				} else {
					byCat[*r.CategoryID] += money.Amount(v)
				}
			}
		})
		if b.ActualSpending != spent || b.ActualIncome != income || b.UncategorizedSpending != uncategorized {
			t.Errorf("budget %s: spent %s, income %s, uncategorised %s; want %s, %s, %s", b.StartDate,
				b.ActualSpending, b.ActualIncome, b.UncategorizedSpending, spent, income, uncategorized)
		}
		one, err := s.Budget(ctx, fam, b.ID)
		must(t, err)
		if one.ActualSpending != spent || one.ActualIncome != income {
			t.Errorf("budget %s alone: spent %s, income %s; want %s, %s", b.StartDate, one.ActualSpending, one.ActualIncome, spent, income)
		}
		lines, _, err := s.BudgetLines(ctx, fam, models.BudgetLineFilter{BudgetID: &b.ID}, models.Page{Number: 1, Size: 100})
		must(t, err)
		if len(lines) != 3 {
			t.Fatalf("budget %s: %d lines, want 3", b.StartDate, len(lines))
		}
		for _, l := range lines {
			if l.ActualSpending != byCat[l.CategoryID] {
				t.Errorf("budget %s, %s: spent %s, want %s", b.StartDate, l.CategoryName, l.ActualSpending, byCat[l.CategoryID])
			}
		}
	}
}
