package models_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// ledger is a family with every kind of row the reports must count or
// leave out: a transfer, an excluded row, a tombstone, other currencies,
// a disabled account, a refund, subcategories and an uncategorised row.
type ledger struct {
	s                                      *models.Store
	f                                      *modelstest.FamilyFixture
	checking, card, savings, euro, dormant *models.Account
	salary, groceries, food, dining        *models.Category
}

func mustAmount(t testing.TB, s string) money.Amount {
	t.Helper()
	a, err := money.ParseAmount(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func newLedger(t *testing.T) *ledger {
	t.Helper()
	ctx := context.Background()
	s := modelstest.NewStore(t)
	l := &ledger{s: s, f: modelstest.NewFamily(t, s, "ledger")}
	fam := l.f.Family.ID
	l.checking = l.f.Account
	l.checking.OpeningBalance = mustAmount(t, "1000")
	must(t, s.UpdateAccount(ctx, l.checking, "opening_balance"))
	account := func(name, typ, cur, opening string) *models.Account {
		a := &models.Account{FamilyID: fam, Name: name, AccountType: typ, Currency: cur, OpeningBalance: mustAmount(t, opening)}
		must(t, s.CreateAccount(ctx, a))
		return a
	}
	l.card = account("Card", "credit_card", "USD", "0")
	l.savings = account("Savings", "depository", "USD", "500")
	l.euro = account("Euro", "depository", "EUR", "200")
	l.dormant = account("Dormant", "depository", "USD", "50")
	category := func(name, class string, parent *models.Category) *models.Category {
		c := &models.Category{FamilyID: fam, Name: name, Color: "#112233", Icon: "tag", Classification: class}
		if parent != nil {
			c.ParentID = &parent.ID
		}
		must(t, s.CreateCategory(ctx, c))
		return c
	}
	l.salary = category("Salary", "income", nil)
	l.groceries = category("Groceries", "expense", nil)
	l.food = category("Food", "expense", nil)
	l.dining = category("Dining", "expense", l.food)

	l.add(t, l.checking, "2024-01-05", "-3000", l.salary)
	l.add(t, l.card, "2024-01-10", "120", l.groceries)
	l.add(t, l.checking, "2024-01-12", "45.50", l.dining)
	l.add(t, l.checking, "2024-01-15", "30", nil)
	if _, err := s.CreateTransfer(ctx, fam, models.NewTransfer{FromAccountID: l.checking.ID, ToAccountID: l.savings.ID,
		Amount: mustAmount(t, "200"), Date: "2024-01-20"}); err != nil {
		t.Fatal(err)
	}
	excluded := l.add(t, l.checking, "2024-01-25", "10", l.groceries)
	l.add(t, l.checking, "2024-02-03", "80", l.food)
	l.add(t, l.checking, "2024-02-04", "-20", l.groceries) // a refund: income in Groceries
	foreign := l.add(t, l.checking, "2024-01-08", "99", l.groceries)
	l.add(t, l.euro, "2024-01-09", "15", l.groceries)
	l.add(t, l.dormant, "2024-01-11", "5", l.groceries)
	deleted := l.add(t, l.checking, "2024-01-13", "7", l.groceries)

	db := s.DB()
	for _, u := range []struct {
		id  uuid.UUID
		set string
		arg any
	}{{excluded.ID, "excluded = ?", true}, {foreign.ID, "currency = ?", "EUR"}, {deleted.ID, "deleted_at = ?", time.Now()}} {
		if _, err := db.NewUpdate().Model((*models.Transaction)(nil)).Set(u.set, u.arg).Where("id = ?", u.id).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	l.dormant.Status = models.AccountDisabled
	must(t, s.UpdateAccount(ctx, l.dormant, "status"))
	for _, a := range []*models.Account{l.checking, l.card, l.savings, l.euro, l.dormant} {
		must(t, s.RecalculateBalance(ctx, fam, a.ID))
	}

	// Another family's rows must never show up.
	other := modelstest.NewFamily(t, s, "other")
	if _, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: other.Family.ID, AccountID: other.Account.ID,
		Date: "2024-01-10", Amount: mustAmount(t, "1000000"), Currency: "USD", Name: "x"}, nil); err != nil {
		t.Fatal(err)
	}
	return l
}

func (l *ledger) add(t *testing.T, a *models.Account, date civil.Date, amount string, c *models.Category) *models.Transaction {
	t.Helper()
	tx := &models.Transaction{FamilyID: l.f.Family.ID, AccountID: a.ID, Date: date, Amount: mustAmount(t, amount), Currency: a.Currency, Name: "t " + string(date)}
	if c != nil {
		tx.CategoryID = &c.ID
	}
	if _, _, err := l.s.CreateTransaction(context.Background(), tx, nil); err != nil {
		t.Fatal(err)
	}
	return tx
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestPeriodTotalsAndCashFlow(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	fam := l.f.Family.ID
	for _, tc := range []struct {
		p                  models.Period
		income, spending   string
		incomeN, spendingN int
	}{
		{models.MonthPeriod("2024-01-17"), "3000", "195.50", 1, 3},
		{models.Period{From: "2024-02-01", To: "2024-02-29"}, "20", "80", 1, 1},
		{models.Period{From: "2024-03-01", To: "2024-03-31"}, "0", "0", 0, 0},
	} {
		got, err := l.s.PeriodTotals(ctx, fam, tc.p)
		must(t, err)
		if got.Income != mustAmount(t, tc.income) || got.Spending != mustAmount(t, tc.spending) || got.IncomeCount != tc.incomeN ||
			got.SpendingCount != tc.spendingN || got.Currency != "USD" {
			t.Errorf("%v: got %+v", tc.p, got)
		}
	}
	if _, err := l.s.PeriodTotals(ctx, fam, models.Period{From: "2024-02-01", To: "2024-01-01"}); err == nil {
		t.Error("a reversed period was accepted")
	}

	flow, err := l.s.CashFlow(ctx, fam, models.Period{From: "2024-01-10", To: "2024-03-05"})
	must(t, err)
	want := []models.CashFlowMonth{{Month: "2024-01-01", Income: 0, Spending: mustAmount(t, "195.50")},
		{Month: "2024-02-01", Income: mustAmount(t, "20"), Spending: mustAmount(t, "80")}, {Month: "2024-03-01"}}
	if len(flow) != len(want) {
		t.Fatalf("cash flow %+v", flow)
	}
	for i := range want {
		if flow[i] != want[i] {
			t.Errorf("month %d: got %+v, want %+v", i, flow[i], want[i])
		}
	}
	if flow[1].Net() != mustAmount(t, "-60") {
		t.Errorf("net %v", flow[1].Net())
	}
}

func TestCategoryTotalsAndStatement(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	rows, err := l.s.CategoryTotals(ctx, l.f.Family.ID, models.Period{From: "2024-01-01", To: "2024-02-29"})
	must(t, err)
	type key struct {
		class string
		cat   uuid.UUID
	}
	got := map[key]models.CategoryTotal{}
	for _, r := range rows {
		k := key{r.Classification, uuid.Nil}
		if r.CategoryID != nil {
			k.cat = *r.CategoryID
		}
		got[k] = r
	}
	want := map[key]string{
		{"income", l.salary.ID}: "3000", {"income", l.groceries.ID}: "20",
		{"expense", l.groceries.ID}: "120", {"expense", l.dining.ID}: "45.50", {"expense", uuid.Nil}: "30", {"expense", l.food.ID}: "80",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d rows: %+v", len(got), rows)
	}
	for k, v := range want {
		if got[k].Total != mustAmount(t, v) || got[k].Count != 1 {
			t.Errorf("%v: got %+v, want %s", k, got[k], v)
		}
	}
	if d := got[key{"expense", l.dining.ID}]; d.ParentID == nil || *d.ParentID != l.food.ID || *d.ParentName != "Food" {
		t.Errorf("dining parent: %+v", d)
	}
	if rows[0].Classification != "expense" || rows[0].Total != mustAmount(t, "120") {
		t.Errorf("order: first row %+v", rows[0])
	}

	cells, err := l.s.IncomeStatement(ctx, l.f.Family.ID, models.Period{From: "2024-01-01", To: "2024-12-31"})
	must(t, err)
	if len(cells) != 6 || cells[0].Month != "2024-01-01" || cells[len(cells)-1].Month != "2024-02-01" {
		t.Fatalf("cells %+v", cells)
	}
	for _, c := range cells {
		if c.Month == "2024-02-01" && c.CategoryID != nil && *c.CategoryID == l.food.ID && c.Total != mustAmount(t, "80") {
			t.Errorf("February food %+v", c)
		}
	}
}

func TestBalanceSheetAndSeries(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	fam := l.f.Family.ID
	bs, err := l.s.BalanceSheet(ctx, fam, false)
	must(t, err)
	if bs.Assets != mustAmount(t, "4364.50") || bs.Liabilities != mustAmount(t, "120") || bs.NetWorth() != mustAmount(t, "4244.50") ||
		bs.Unconverted != 1 || bs.Currency != "USD" {
		t.Fatalf("balance sheet %+v", bs)
	}
	if len(bs.Groups) != 2 || bs.Groups[0].AccountType != "depository" || len(bs.Groups[0].Accounts) != 3 ||
		bs.Groups[1].Classification != "liability" || bs.Groups[1].Total != mustAmount(t, "120") {
		t.Fatalf("groups %+v", bs.Groups)
	}
	withDisabled, err := l.s.BalanceSheet(ctx, fam, true)
	must(t, err)
	if withDisabled.Assets != mustAmount(t, "4409.50") {
		t.Errorf("with disabled: assets %v", withDisabled.Assets)
	}

	// With a rate (of an earlier day: the latest before today is used),
	// the euro account counts, converted once, half away from zero:
	// €185 at 1.08375 = $200.49375 → $200.4938.
	rate, err := money.ParseRate("1.08375")
	must(t, err)
	day := civil.DateOf(time.Now().AddDate(0, 0, -3))
	_, err = l.s.SetRate(ctx, fam, &models.ExchangeRate{FromCurrency: "EUR", ToCurrency: "USD", Date: day, Rate: rate})
	must(t, err)
	conv, err := l.s.BalanceSheet(ctx, fam, false)
	must(t, err)
	if conv.Unconverted != 0 || len(conv.Converted) != 1 || conv.Converted[0].Rate.Date != day ||
		conv.Converted[0].Value != mustAmount(t, "200.4938") || conv.Assets != mustAmount(t, "4564.9938") {
		t.Fatalf("converted balance sheet %+v", conv)
	}
	norate := modelstest.NewFamily(t, l.s, "norate")
	eur := &models.Account{FamilyID: norate.Family.ID, Name: "Euro", AccountType: "depository", Currency: "EUR", OpeningBalance: mustAmount(t, "10")}
	must(t, l.s.CreateAccount(ctx, eur))
	if ob, err := l.s.BalanceSheet(ctx, norate.Family.ID, false); err != nil || ob.Unconverted != 1 || len(ob.Converted) != 0 {
		t.Fatalf("another family used the first one's rate: %+v %v", ob, err)
	}

	points, err := l.s.NetWorthSeries(ctx, fam, models.Period{From: "2024-01-10", To: "2024-01-12"}, models.Day)
	must(t, err)
	wantPoints := []models.SeriesPoint{{Date: "2024-01-10", Value: mustAmount(t, "4380")}, {Date: "2024-01-11", Value: mustAmount(t, "4380")},
		{Date: "2024-01-12", Value: mustAmount(t, "4334.50")}}
	checkPoints(t, "daily", points, wantPoints)

	points, err = l.s.NetWorthSeries(ctx, fam, models.Period{From: "2024-01-01", To: "2024-02-29"}, models.Month)
	must(t, err)
	checkPoints(t, "monthly", points, []models.SeriesPoint{{Date: "2024-01-31", Value: mustAmount(t, "4304.50")}, {Date: "2024-02-29", Value: mustAmount(t, "4244.50")}})

	// 2024-01-10 is a Wednesday: the first week ends on Sunday the 14th.
	points, err = l.s.NetWorthSeries(ctx, fam, models.Period{From: "2024-01-10", To: "2024-01-23"}, models.Week)
	must(t, err)
	checkPoints(t, "weekly", points, []models.SeriesPoint{{Date: "2024-01-14", Value: mustAmount(t, "4334.50")},
		{Date: "2024-01-21", Value: mustAmount(t, "4304.50")}, {Date: "2024-01-23", Value: mustAmount(t, "4304.50")}})

	// The series rest on the stored balances; one recalculated long ago,
	// or never, gives the same values.
	stale := []struct {
		id      uuid.UUID
		balance string
		at      any
	}{{l.checking.ID, "4000", time.Date(2024, 1, 10, 23, 0, 0, 0, time.UTC)}, {l.card.ID, "0", time.Date(2024, 1, 9, 1, 0, 0, 0, time.UTC)},
		{l.savings.ID, "999", nil}}
	for _, st := range stale {
		if _, err := l.s.DB().NewUpdate().Model((*models.Account)(nil)).Set("balance = ?", mustAmount(t, st.balance)).
			Set("balance_updated_at = ?", st.at).Where("id = ?", st.id).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []models.Period{{From: "2024-01-10", To: "2024-01-12"}, {From: "2024-01-01", To: "2024-02-29"}} {
		again, err := l.s.NetWorthSeries(ctx, fam, p, models.Day)
		must(t, err)
		fresh := wantPoints
		if p.From == "2024-01-01" {
			if again[len(again)-1].Value != mustAmount(t, "4244.50") || again[30].Value != mustAmount(t, "4304.50") || again[3].Value != mustAmount(t, "1500") {
				t.Errorf("stale anchors over two months: %+v", again)
			}
			continue
		}
		checkPoints(t, "stale anchors", again, fresh)
	}

	points, err = l.s.AccountBalanceSeries(ctx, fam, l.card.ID, models.Period{From: "2023-12-01", To: "2024-01-31"}, models.Month)
	must(t, err)
	checkPoints(t, "card", points, []models.SeriesPoint{{Date: "2023-12-31", Value: 0}, {Date: "2024-01-31", Value: mustAmount(t, "120")}})

	points, err = l.s.AccountBalanceSeries(ctx, fam, l.checking.ID, models.Period{From: "2024-03-01", To: "2024-03-01"}, models.Day)
	must(t, err)
	checkPoints(t, "checking today", points, []models.SeriesPoint{{Date: "2024-03-01", Value: mustAmount(t, "3664.50")}})

	other := modelstest.NewFamily(t, l.s, "stranger")
	if _, err := l.s.AccountBalanceSeries(ctx, other.Family.ID, l.card.ID, models.MonthPeriod("2024-01-01"), models.Day); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("other family's account: %v", err)
	}
	if _, err := l.s.NetWorthSeries(ctx, fam, models.MonthPeriod("2024-01-01"), "year"); err == nil {
		t.Error("an unknown interval was accepted")
	}
}

func checkPoints(t *testing.T, name string, got, want []models.SeriesPoint) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %+v, want %+v", name, got, want)
	}
	for i := range want {
		if got[i].Date != want[i].Date || got[i].Value != want[i].Value {
			t.Errorf("%s point %d: got %+v, want %+v", name, i, got[i], want[i])
		}
	}
}

func TestAccountRegister(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	fam := l.f.Family.ID
	checking, err := l.s.Account(ctx, fam, l.checking.ID)
	must(t, err)
	var all []models.RegisterRow
	for page := 1; ; page++ {
		rows, n, err := l.s.AccountRegister(ctx, fam, l.checking.ID, models.Page{Number: page, Size: 3})
		must(t, err)
		if n != 8 {
			t.Fatalf("count %d, want 8 (the tombstone is not a row)", n)
		}
		if len(rows) == 0 {
			break
		}
		all = append(all, rows...)
	}
	if len(all) != 8 || all[0].Balance != checking.Balance || all[0].Date != "2024-02-04" {
		t.Fatalf("first row %+v, balance %v", all[0].Transaction, checking.Balance)
	}
	// Walking back from the newest row, each counted amount undoes itself
	// until the opening balance is left.
	balance := all[0].Balance
	for _, r := range all {
		if r.Balance != balance {
			t.Fatalf("%s %v: balance %v, want %v", r.Date, r.Amount, r.Balance, balance)
		}
		if !r.Excluded && r.Currency == "USD" {
			balance += r.Amount
		}
		if r.Account == nil || r.Tags == nil {
			t.Fatalf("row without its account or tags: %+v", r)
		}
	}
	if balance != mustAmount(t, "1000") {
		t.Errorf("opening %v", balance)
	}
	// A balance recalculated long ago gives the same register.
	if _, err := l.s.DB().NewUpdate().Model((*models.Account)(nil)).Set("balance = ?", mustAmount(t, "4000")).
		Set("balance_updated_at = ?", time.Date(2024, 1, 10, 0, 0, 0, 0, time.UTC)).Where("id = ?", l.checking.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	again, _, err := l.s.AccountRegister(ctx, fam, l.checking.ID, models.Page{Number: 2, Size: 3})
	must(t, err)
	for i, r := range again {
		if r.Balance != all[3+i].Balance {
			t.Errorf("stale anchor, row %d: %v, want %v", 3+i, r.Balance, all[3+i].Balance)
		}
	}
	if all[3].Transfer == nil {
		t.Errorf("transfer row %+v has no transfer", all[3].Transaction)
	}
	other := modelstest.NewFamily(t, l.s, "stranger")
	if _, _, err := l.s.AccountRegister(ctx, other.Family.ID, l.checking.ID, models.Page{Number: 1, Size: 3}); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("other family's account: %v", err)
	}
}

func TestBalanceHistory(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	fam := l.f.Family.ID
	days, n, err := l.s.BalanceHistory(ctx, fam, models.BalanceFilter{AccountID: &l.card.ID}, models.Page{Number: 1, Size: 10})
	must(t, err)
	want := models.BalanceDay{AccountID: l.card.ID, AccountName: "Card", AccountType: "credit_card", Date: "2024-01-10", Currency: "USD",
		FlowsFactor: -1, StartBalance: 0, Outflows: mustAmount(t, "120"), EndBalance: mustAmount(t, "120")}
	if n == 1 && len(days) == 1 {
		if days[0].CreatedAt.IsZero() || days[0].UpdatedAt.Before(days[0].CreatedAt) {
			t.Errorf("card day times: %v %v", days[0].CreatedAt, days[0].UpdatedAt)
		}
		want.CreatedAt, want.UpdatedAt = days[0].CreatedAt, days[0].UpdatedAt
	}
	if n != 1 || len(days) != 1 || days[0] != want || days[0].CashBalance() != mustAmount(t, "120") {
		t.Fatalf("card: n=%d %+v", n, days)
	}

	// Every account of the family, newest day first, paged.
	var all []models.BalanceDay
	for page := 1; ; page++ {
		days, n, err = l.s.BalanceHistory(ctx, fam, models.BalanceFilter{}, models.Page{Number: page, Size: 4})
		must(t, err)
		if len(days) == 0 {
			break
		}
		all = append(all, days...)
	}
	// checking 6 days, card 1, savings 1, euro 1, dormant 1
	if n != 10 || len(all) != 10 || all[0].Date != "2024-02-04" || all[0].EndBalance != mustAmount(t, "3664.50") {
		t.Fatalf("n=%d first %+v", n, all[0])
	}
	for i := 1; i < len(all); i++ {
		if all[i].Date > all[i-1].Date {
			t.Fatalf("not newest first at %d: %+v", i, all)
		}
	}
	// A page reads only the days it can hold (its bound): every page size
	// gives the rows of one page holding all.
	for _, size := range []int{1, 2, 3, 7} {
		var paged []models.BalanceDay
		for page := 1; page <= 10; page++ {
			days, _, err := l.s.BalanceHistory(ctx, fam, models.BalanceFilter{}, models.Page{Number: page, Size: size})
			must(t, err)
			paged = append(paged, days...)
		}
		if !reflect.DeepEqual(paged, all) {
			t.Fatalf("pages of %d:\n%+v\nwant\n%+v", size, paged, all)
		}
	}

	days, n, err = l.s.BalanceHistory(ctx, fam, models.BalanceFilter{Currency: "EUR", StartDate: "2024-01-01", EndDate: "2024-01-31"}, models.Page{Number: 1, Size: 10})
	must(t, err)
	if n != 1 || days[0].AccountID != l.euro.ID || days[0].StartBalance != mustAmount(t, "200") || days[0].EndBalance != mustAmount(t, "185") {
		t.Fatalf("euro: %+v", days)
	}
	days, n, err = l.s.BalanceHistory(ctx, fam, models.BalanceFilter{AccountID: &l.checking.ID, StartDate: "2024-01-13", EndDate: "2024-01-20"},
		models.Page{Number: 1, Size: 10})
	must(t, err)
	// Jan 15 (30 out) and Jan 20 (the transfer); the running sum still starts at the opening.
	if n != 2 || days[0].Date != "2024-01-20" || days[0].StartBalance != mustAmount(t, "3924.50") || days[0].EndBalance != mustAmount(t, "3724.50") {
		t.Fatalf("checking range: %+v", days)
	}

	// A balance recalculated long ago gives the same history.
	if _, err := l.s.DB().NewUpdate().Model((*models.Account)(nil)).Set("balance = ?", mustAmount(t, "4000")).
		Set("balance_updated_at = ?", time.Date(2024, 1, 10, 0, 0, 0, 0, time.UTC)).Where("id = ?", l.checking.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	again, _, err := l.s.BalanceHistory(ctx, fam, models.BalanceFilter{AccountID: &l.checking.ID, StartDate: "2024-01-13", EndDate: "2024-01-20"},
		models.Page{Number: 1, Size: 10})
	must(t, err)
	if len(again) != 2 || again[0] != days[0] || again[1] != days[1] {
		t.Errorf("stale anchor: %+v, want %+v", again, days)
	}

	other := modelstest.NewFamily(t, l.s, "stranger")
	if days, n, err = l.s.BalanceHistory(ctx, other.Family.ID, models.BalanceFilter{AccountID: &l.checking.ID}, models.Page{Number: 1, Size: 10}); err != nil || n != 0 || len(days) != 0 {
		t.Errorf("other family: %d %v %v", n, days, err)
	}
}
