package models_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// valuationBook is a store whose clock stands at 2024-03-31 (noon UTC) and
// a family with a checking account (its opening balance undated, 0).
type valuationBook struct {
	s   *models.Store
	f   *modelstest.FamilyFixture
	fam uuid.UUID
}

func newValuationBook(t *testing.T) *valuationBook {
	t.Helper()
	s := modelstest.NewStore(t)
	s.Now = func() time.Time { return time.Date(2024, 3, 31, 12, 0, 0, 0, time.UTC) }
	f := modelstest.NewFamily(t, s, "valuations")
	return &valuationBook{s: s, f: f, fam: f.Family.ID}
}

func (b *valuationBook) tx(t *testing.T, a *models.Account, date civil.Date, amount string) *models.Transaction {
	t.Helper()
	tx := &models.Transaction{FamilyID: b.fam, AccountID: a.ID, Date: date, Amount: mustAmount(t, amount), Currency: a.Currency, Name: "t " + string(date)}
	if _, _, err := b.s.CreateTransaction(context.Background(), tx, nil); err != nil {
		t.Fatal(err)
	}
	return tx
}

func (b *valuationBook) value(t *testing.T, a *models.Account, date civil.Date, amount string) *models.Valuation {
	t.Helper()
	v := &models.Valuation{FamilyID: b.fam, AccountID: a.ID, Date: &date, Amount: mustAmount(t, amount)}
	if _, err := b.s.CreateValuation(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	return v
}

func (b *valuationBook) balanceOn(t *testing.T, a *models.Account, day civil.Date) string {
	t.Helper()
	got, err := b.s.BalanceOn(context.Background(), b.fam, a.ID, day)
	must(t, err)
	return short(got)
}

func (b *valuationBook) stored(t *testing.T, a *models.Account) string {
	t.Helper()
	must(t, b.s.RecalculateBalance(context.Background(), b.fam, a.ID))
	got, err := b.s.Account(context.Background(), b.fam, a.ID)
	must(t, err)
	return short(got.Balance)
}

// short is an amount without trailing zeros: "5000", "-100", "12.5".
func short(a money.Amount) string {
	return strings.TrimSuffix(strings.TrimRight(a.String(), "0"), ".")
}

// threeMonths imports a quarter of history ending the day before today:
// 1,400.00 spent net (salary in, rent and groceries out).
func (b *valuationBook) threeMonths(t *testing.T, a *models.Account) {
	t.Helper()
	for _, r := range []struct {
		date   civil.Date
		amount string
	}{
		{"2024-01-02", "-2000"}, {"2024-01-05", "2000"}, {"2024-01-20", "500"},
		{"2024-02-02", "-2000"}, {"2024-02-05", "2000"}, {"2024-02-21", "450"},
		{"2024-03-02", "-2000"}, {"2024-03-05", "2000"}, {"2024-03-30", "450"},
	} {
		b.tx(t, a, r.date, r.amount)
	}
}

// TestImportedHistoryEndsAtTheBank is issue 25's case: an opening balance
// equal to today's bank balance, then three months of imported history.
// Undated, the opening counts from before the history and the balance
// ends 1,400.00 off; dated today (or with "balance on today" set), the
// history ends at the bank's figure and the days before count back from it.
func TestImportedHistoryEndsAtTheBank(t *testing.T) {
	ctx := context.Background()
	t.Run("undated opening: counted from before the history", func(t *testing.T) {
		b := newValuationBook(t)
		a := &models.Account{FamilyID: b.fam, Name: "Bank", AccountType: "depository", Currency: "USD", OpeningBalance: mustAmount(t, "5000")}
		must(t, b.s.CreateAccount(ctx, a))
		b.threeMonths(t, a)
		if got := b.stored(t, a); got != "3600" {
			t.Errorf("balance %s, want 3600 (the old rule: opening + every transaction)", got)
		}
		d, set, err := b.s.OpeningDate(ctx, b.fam, a.ID)
		must(t, err)
		if set || d == nil || *d != "2024-01-01" {
			t.Errorf("opening date %v (set %v), want the day before the first transaction", d, set)
		}
	})
	t.Run("opening dated today", func(t *testing.T) {
		b := newValuationBook(t)
		today := civil.Date("2024-03-31")
		a := &models.Account{FamilyID: b.fam, Name: "Bank", AccountType: "depository", Currency: "USD",
			OpeningBalance: mustAmount(t, "5000"), OpeningDate: &today}
		must(t, b.s.CreateAccount(ctx, a))
		b.threeMonths(t, a)
		if got := b.stored(t, a); got != "5000" {
			t.Errorf("balance %s, want the bank's 5000", got)
		}
		for day, want := range map[civil.Date]string{"2024-03-31": "5000", "2024-03-29": "5450", "2024-01-01": "6400", "2023-06-01": "6400"} {
			if got := b.balanceOn(t, a, day); got != want {
				t.Errorf("balance on %s: %s, want %s", day, got, want)
			}
		}
		d, set, err := b.s.OpeningDate(ctx, b.fam, a.ID)
		must(t, err)
		if !set || *d != today {
			t.Errorf("opening date %v (set %v)", d, set)
		}
		// Undating it again brings back the old rule.
		a.OpeningDate = nil
		must(t, b.s.UpdateAccount(ctx, a, "opening_balance_date"))
		if got := b.stored(t, a); got != "3600" {
			t.Errorf("undated again: %s, want 3600", got)
		}
	})
	t.Run("balance on today set after the import", func(t *testing.T) {
		b := newValuationBook(t)
		a := &models.Account{FamilyID: b.fam, Name: "Bank", AccountType: "depository", Currency: "USD", OpeningBalance: mustAmount(t, "5000")}
		must(t, b.s.CreateAccount(ctx, a))
		b.threeMonths(t, a)
		v := b.value(t, a, "2024-03-31", "5000")
		if got := b.stored(t, a); got != "5000" {
			t.Errorf("balance %s, want 5000", got)
		}
		got, err := b.s.Valuation(ctx, b.fam, v.ID)
		must(t, err)
		if short(got.Adjustment) != "1400" {
			t.Errorf("adjustment %s, want the 1400 the ledger was off", got.Adjustment)
		}
		if got := b.balanceOn(t, a, "2024-03-30"); got != "3600" {
			t.Errorf("the day before: %s, want 3600 (the history is not rewritten)", got)
		}
	})
}

// TestBalanceOnAcrossValuations walks an asset and a debt through several
// valuations.
func TestBalanceOnAcrossValuations(t *testing.T) {
	ctx := context.Background()
	b := newValuationBook(t)
	a := b.f.Account
	a.OpeningBalance = mustAmount(t, "1000")
	must(t, b.s.UpdateAccount(ctx, a, "opening_balance"))
	b.tx(t, a, "2024-01-10", "100")     // 900
	b.tx(t, a, "2024-01-20", "-50")     // 950
	b.value(t, a, "2024-01-20", "2000") // end of the 20th: 2000
	b.tx(t, a, "2024-02-01", "200")     // 1800
	b.value(t, a, "2024-02-15", "1700")
	b.tx(t, a, "2024-02-15", "10")   // on the valuation's day: inside it
	b.tx(t, a, "2024-03-01", "-300") // 2000
	b.tx(t, a, "2024-04-10", "40")   // future
	for day, want := range map[civil.Date]string{
		"2023-12-31": "1000", "2024-01-10": "900", "2024-01-19": "900", "2024-01-20": "2000", "2024-01-31": "2000",
		"2024-02-01": "1800", "2024-02-14": "1800", "2024-02-15": "1700", "2024-03-01": "2000", "2024-03-31": "2000", "2024-04-30": "1960",
	} {
		if got := b.balanceOn(t, a, day); got != want {
			t.Errorf("asset on %s: %s, want %s", day, got, want)
		}
	}
	if got := b.stored(t, a); got != "2000" {
		t.Errorf("stored %s, want 2000", got)
	}

	card := &models.Account{FamilyID: b.fam, Name: "Card", AccountType: "credit_card", Currency: "USD"}
	must(t, b.s.CreateAccount(ctx, card))
	b.tx(t, card, "2024-01-05", "300") // owes 300
	b.value(t, card, "2024-01-31", "250")
	b.tx(t, card, "2024-02-10", "-100") // owes 150
	for day, want := range map[civil.Date]string{"2024-01-05": "300", "2024-01-31": "250", "2024-02-10": "150"} {
		if got := b.balanceOn(t, card, day); got != want {
			t.Errorf("card on %s: %s, want %s", day, got, want)
		}
	}
	if got := b.stored(t, card); got != "150" {
		t.Errorf("card stored %s, want 150", got)
	}

	// Another family's account is not found.
	other := modelstest.NewFamily(t, b.s, "other")
	if _, err := b.s.BalanceOn(ctx, other.Family.ID, a.ID, "2024-01-01"); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("other family's BalanceOn: %v", err)
	}
}

// TestRegisterWithValuations: each valuation is a row at the end of its
// day showing its value, and every day's last row shows the balance on
// that day, across pages.
func TestRegisterWithValuations(t *testing.T) {
	ctx := context.Background()
	b := newValuationBook(t)
	a := b.f.Account
	a.OpeningBalance = mustAmount(t, "1000")
	must(t, b.s.UpdateAccount(ctx, a, "opening_balance"))
	b.tx(t, a, "2024-01-10", "100")
	b.tx(t, a, "2024-01-20", "-50")
	b.value(t, a, "2024-01-20", "2000")
	b.tx(t, a, "2024-02-01", "200")
	b.value(t, a, "2024-02-10", "1700")
	b.tx(t, a, "2024-03-01", "-300")
	b.stored(t, a)
	var all []models.RegisterRow
	for page := 1; ; page++ {
		rows, n, err := b.s.AccountRegister(ctx, b.fam, a.ID, models.Page{Number: page, Size: 2})
		must(t, err)
		if n != 6 {
			t.Fatalf("count %d, want 6 (4 transactions, 2 valuations)", n)
		}
		if len(rows) == 0 {
			break
		}
		all = append(all, rows...)
	}
	if len(all) != 6 {
		t.Fatalf("%d rows", len(all))
	}
	want := []struct {
		valuation bool
		balance   string
	}{{false, "2000"}, {true, "1700"}, {false, "1800"}, {true, "2000"}, {false, "950"}, {false, "900"}}
	for i, w := range want {
		r := all[i]
		if (r.Valuation != nil) != w.valuation || short(r.Balance) != w.balance {
			t.Errorf("row %d: valuation %v balance %s, want %v %s", i, r.Valuation != nil, r.Balance, w.valuation, w.balance)
		}
	}
	if v := all[1].Valuation; v == nil || short(v.Amount) != "1700" || short(v.Adjustment) != "-100" {
		t.Errorf("valuation row %+v", all[1].Valuation)
	}
}

// TestReportsCountValuations: net worth, the account series, the balance
// history and the balance sheet agree with BalanceOn, and the income
// statement never sees a valuation.
func TestReportsCountValuations(t *testing.T) {
	ctx := context.Background()
	b := newValuationBook(t)
	a := b.f.Account
	a.OpeningBalance = mustAmount(t, "1000")
	must(t, b.s.UpdateAccount(ctx, a, "opening_balance"))
	house := &models.Account{FamilyID: b.fam, Name: "House", AccountType: "property", Currency: "USD", OpeningBalance: mustAmount(t, "300000")}
	must(t, b.s.CreateAccount(ctx, house))
	loan := &models.Account{FamilyID: b.fam, Name: "Mortgage", AccountType: "loan", Currency: "USD", OpeningBalance: mustAmount(t, "200000")}
	must(t, b.s.CreateAccount(ctx, loan))
	b.tx(t, a, "2024-01-10", "100")
	b.tx(t, a, "2024-02-01", "200")
	b.value(t, a, "2024-02-15", "2500")
	b.value(t, house, "2024-01-31", "320000")
	b.value(t, house, "2024-03-15", "310000")
	b.value(t, loan, "2024-02-28", "195000")
	for _, acc := range []*models.Account{a, house, loan} {
		b.stored(t, acc)
	}
	p := models.Period{From: "2024-01-01", To: "2024-03-31"}
	points, err := b.s.NetWorthSeries(ctx, b.fam, p, models.Day)
	must(t, err)
	if len(points) != 91 {
		t.Fatalf("%d points", len(points))
	}
	for _, pt := range points {
		want := mustAmount(t, b.balanceOn(t, a, pt.Date)) + mustAmount(t, b.balanceOn(t, house, pt.Date)) - mustAmount(t, b.balanceOn(t, loan, pt.Date))
		if pt.Value != want {
			t.Errorf("net worth on %s: %s, want %s", pt.Date, pt.Value, want)
		}
	}
	weeks, err := b.s.AccountBalanceSeries(ctx, b.fam, house.ID, p, models.Week)
	must(t, err)
	for _, pt := range weeks {
		if want := b.balanceOn(t, house, pt.Date); short(pt.Value) != want {
			t.Errorf("house on %s: %s, want %s", pt.Date, pt.Value, want)
		}
	}
	days, _, err := b.s.BalanceHistory(ctx, b.fam, models.BalanceFilter{}, models.Page{Number: 1, Size: 100})
	must(t, err)
	seen := 0
	for _, d := range days {
		acc := map[uuid.UUID]*models.Account{a.ID: a, house.ID: house, loan.ID: loan}[d.AccountID]
		if want := b.balanceOn(t, acc, d.Date); short(d.EndBalance) != want {
			t.Errorf("history of %s on %s: %s, want %s", acc.Name, d.Date, d.EndBalance, want)
		}
		seen++
	}
	if seen != 6 {
		t.Errorf("%d history rows, want 6 (2 transaction days, 4 valuation days)", seen)
	}
	bs, err := b.s.BalanceSheet(ctx, b.fam, false)
	must(t, err)
	if short(bs.Assets) != "312500" || short(bs.Liabilities) != "195000" {
		t.Errorf("balance sheet assets %s liabilities %s, want 312500 and 195000", bs.Assets, bs.Liabilities)
	}
	cells, err := b.s.IncomeStatement(ctx, b.fam, p)
	must(t, err)
	var income, spending models.CategoryTotal
	for _, c := range cells {
		if c.Classification == "income" {
			income.Total += c.Total
		} else {
			spending.Total += c.Total
		}
	}
	if income.Total != 0 || short(spending.Total) != "300" {
		t.Errorf("income statement %+v: valuations counted", cells)
	}
}

// TestValuationWrites: a repeat is idempotent, a day's new amount replaces
// it, another family's account is not found, and a refused write leaves
// everything as it was; each write reports the balance change.
func TestValuationWrites(t *testing.T) {
	ctx := context.Background()
	b := newValuationBook(t)
	var reported []uuid.UUID
	b.s.OnBalanceChange(func(_ context.Context, _ uuid.UUID, ids []uuid.UUID) { reported = append(reported, ids...) })
	a := b.f.Account
	b.tx(t, a, "2024-01-10", "100")
	reported = nil
	day := civil.Date("2024-02-01")
	v := &models.Valuation{FamilyID: b.fam, AccountID: a.ID, Date: &day, Amount: mustAmount(t, "500")}
	created, err := b.s.CreateValuation(ctx, v)
	must(t, err)
	if !created || len(reported) != 1 || reported[0] != a.ID {
		t.Fatalf("created %v, reported %v", created, reported)
	}
	again := &models.Valuation{FamilyID: b.fam, AccountID: a.ID, Date: &day, Amount: mustAmount(t, "500")}
	created, err = b.s.CreateValuation(ctx, again)
	must(t, err)
	if created || again.ID != v.ID {
		t.Errorf("repeat: created %v, id %v want %v", created, again.ID, v.ID)
	}
	vs, n, err := b.s.Valuations(ctx, b.fam, models.ValuationFilter{AccountID: &a.ID}, models.Page{Number: 1, Size: 10})
	must(t, err)
	if n != 2 || len(vs) != 2 || vs[0].ID != v.ID || vs[1].Kind != models.ValuationOpening {
		t.Errorf("list %d %+v, want the valuation and the opening", n, vs)
	}
	other := modelstest.NewFamily(t, b.s, "other")
	if _, err := b.s.CreateValuation(ctx, &models.Valuation{FamilyID: other.Family.ID, AccountID: a.ID, Date: &day, Amount: 1}); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("other family's account: %v", err)
	}
	if _, err := b.s.Valuation(ctx, other.Family.ID, v.ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("other family's valuation: %v", err)
	}

	// Moving a valuation onto a day that has one is refused, and changes nothing.
	later := b.value(t, a, "2024-03-01", "700")
	before := b.stored(t, a)
	later.Date, later.Amount = &day, mustAmount(t, "1")
	if err := b.s.UpdateValuation(ctx, later); !errors.Is(err, models.ErrConflict) {
		t.Fatalf("conflicting update: %v", err)
	}
	got, err := b.s.Valuation(ctx, b.fam, later.ID)
	must(t, err)
	if *got.Date != "2024-03-01" || short(got.Amount) != "700" {
		t.Errorf("refused update wrote %+v", got)
	}
	if after := b.stored(t, a); after != before {
		t.Errorf("balance %s after a refused write, was %s", after, before)
	}
	reported = nil
	got.Amount = mustAmount(t, "800")
	must(t, b.s.UpdateValuation(ctx, got))
	if len(reported) != 1 || reported[0] != a.ID || short(got.Adjustment) != "300" {
		t.Errorf("update: reported %v, adjustment %s", reported, got.Adjustment)
	}
	later = got
	// The opening balance cannot be deleted; a valuation can.
	open, _, err := b.s.Valuations(ctx, b.fam, models.ValuationFilter{AccountID: &a.ID}, models.Page{Number: 3, Size: 1})
	must(t, err)
	if len(open) != 1 || open[0].Kind != models.ValuationOpening {
		t.Fatalf("opening %+v", open)
	}
	var inv *models.InvalidError
	if err := b.s.DeleteValuation(ctx, b.fam, open[0].ID); !errors.As(err, &inv) {
		t.Errorf("delete opening: %v", err)
	}
	reported = nil
	must(t, b.s.DeleteValuation(ctx, b.fam, later.ID))
	if len(reported) != 1 {
		t.Errorf("delete reported %v", reported)
	}
	if got := b.stored(t, a); got != "500" {
		t.Errorf("after delete: %s, want 500", got)
	}
}
