package models_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// bigLedger is a family with a few hundred transactions of every kind the
// reports count or leave out, spread over 2023-11 to 2025-03: transfers,
// excluded rows, tombstones, rows in another currency than their account,
// accounts that are disabled, pending deletion or in another currency,
// subcategories, uncategorised rows, and another family's rows on the same
// days. The tests below compare every report with figures worked out here
// in Go, from the rows as stored.
type bigLedger struct {
	s        *models.Store
	fam      uuid.UUID
	accounts map[uuid.UUID]models.Account
	cats     map[uuid.UUID]models.Category
	txs      []models.Transaction // every row of the family, tombstones included
	legs     map[uuid.UUID]bool   // transactions that are one leg of a transfer
}

func newBigLedger(t *testing.T) *bigLedger {
	t.Helper()
	ctx := context.Background()
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "big")
	fam := f.Family.ID
	rng := rand.New(rand.NewPCG(12, 34))

	accounts := []*models.Account{f.Account}
	for _, a := range []struct{ name, typ, cur string }{
		{"Card", "credit_card", "USD"}, {"Loan", "loan", "USD"}, {"Savings", "depository", "USD"},
		{"Euro", "depository", "EUR"}, {"Dormant", "depository", "USD"}, {"Leaving", "investment", "USD"},
	} {
		acct := &models.Account{FamilyID: fam, Name: a.name, AccountType: a.typ, Currency: a.cur}
		must(t, s.CreateAccount(ctx, acct))
		accounts = append(accounts, acct)
	}
	for _, a := range accounts {
		a.OpeningBalance = money.Amount(rng.IntN(5000)) * 10000
		must(t, s.UpdateAccount(ctx, a, "opening_balance"))
	}
	var cats []*models.Category
	for i, name := range []string{"Salary", "Food", "Dining", "Rent"} {
		c := &models.Category{FamilyID: fam, Name: name, Color: "#112233", Icon: "tag", Classification: "expense"}
		if i == 2 {
			c.ParentID = &cats[1].ID
		}
		must(t, s.CreateCategory(ctx, c))
		cats = append(cats, c)
	}

	start := time.Date(2023, 11, 1, 0, 0, 0, 0, time.UTC)
	now := time.Now().UTC().Truncate(time.Microsecond)
	var rows []models.Transaction
	for i := range 400 {
		a := accounts[rng.IntN(len(accounts))]
		amount := money.Amount(rng.IntN(200000)+1) * 100
		if rng.IntN(4) == 0 {
			amount = -amount * 5
		}
		tx := models.Transaction{ID: models.NewID(), FamilyID: fam, AccountID: a.ID,
			Date: civil.DateOf(start.AddDate(0, 0, rng.IntN(517))), Amount: amount, Currency: a.Currency,
			Name: fmt.Sprintf("row %d", i), Excluded: rng.IntN(12) == 0, CreatedAt: now, UpdatedAt: now}
		if rng.IntN(15) == 0 {
			tx.Currency = map[string]string{"USD": "EUR", "EUR": "USD"}[a.Currency]
		}
		if k := rng.IntN(len(cats) + 1); k < len(cats) {
			tx.CategoryID = &cats[k].ID
		}
		if rng.IntN(20) == 0 {
			tx.DeletedAt = &now
		}
		rows = append(rows, tx)
	}
	if _, err := s.DB().NewInsert().Model(&rows).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for range 25 {
		from, to := accounts[rng.IntN(4)], accounts[rng.IntN(4)]
		if from == to {
			continue
		}
		if _, err := s.CreateTransfer(ctx, fam, models.NewTransfer{FromAccountID: from.ID, ToAccountID: to.ID,
			Amount: money.Amount(rng.IntN(50000)+1) * 100, Date: civil.DateOf(start.AddDate(0, 0, rng.IntN(517)))}); err != nil {
			t.Fatal(err)
		}
	}
	// Series rest on the stored balances, which every write path brings up
	// to date; rows inserted straight into the table need it done here.
	for _, a := range accounts {
		must(t, s.RecalculateBalance(ctx, fam, a.ID))
	}
	for i, status := range []string{models.AccountDisabled, models.AccountPendingDeletion} {
		a := accounts[5+i]
		a.Status = status
		must(t, s.UpdateAccount(ctx, a, "status"))
	}

	// Another family's rows on the same days, a transfer among them.
	other := modelstest.NewFamily(t, s, "neighbour")
	otherSavings := &models.Account{FamilyID: other.Family.ID, Name: "Savings", AccountType: "depository", Currency: "USD"}
	must(t, s.CreateAccount(ctx, otherSavings))
	var theirs []models.Transaction
	for i := range 50 {
		theirs = append(theirs, models.Transaction{ID: models.NewID(), FamilyID: other.Family.ID, AccountID: other.Account.ID,
			Date: civil.DateOf(start.AddDate(0, 0, i*10)), Amount: money.Amount(i-25) * 1_000_000, Currency: "USD",
			Name: "theirs", CategoryID: &cats[i%len(cats)].ID, CreatedAt: now, UpdatedAt: now})
	}
	if _, err := s.DB().NewInsert().Model(&theirs).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTransfer(ctx, other.Family.ID, models.NewTransfer{FromAccountID: other.Account.ID,
		ToAccountID: otherSavings.ID, Amount: 123_0000, Date: "2024-06-15"}); err != nil {
		t.Fatal(err)
	}

	l := &bigLedger{s: s, fam: fam, accounts: map[uuid.UUID]models.Account{}, cats: map[uuid.UUID]models.Category{}, legs: map[uuid.UUID]bool{}}
	for _, a := range accounts {
		l.accounts[a.ID] = *a
	}
	for _, c := range cats {
		l.cats[c.ID] = *c
	}
	if err := s.DB().NewSelect().Model(&l.txs).Where("family_id = ?", fam).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	var trs []models.Transfer
	if err := s.DB().NewSelect().Model(&trs).Where("family_id = ?", fam).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tr := range trs {
		l.legs[tr.InflowTransactionID], l.legs[tr.OutflowTransactionID] = true, true
	}
	if len(l.txs) < 400 || len(trs) < 10 {
		t.Fatalf("ledger too small: %d rows, %d transfers", len(l.txs), len(trs))
	}
	return l
}

// moves reports whether a row moves its account's balance: what
// RecalculateBalance counts.
func (l *bigLedger) moves(tx models.Transaction) bool {
	return tx.DeletedAt == nil && !tx.Excluded && tx.Currency == l.accounts[tx.AccountID].Currency
}

// counted reports whether a row is income or spending in period p.
func (l *bigLedger) counted(tx models.Transaction, p models.Period) bool {
	return tx.DeletedAt == nil && !tx.Excluded && l.accounts[tx.AccountID].Status == models.AccountActive &&
		tx.Currency == "USD" && !l.legs[tx.ID] && tx.Date >= p.From && tx.Date <= p.To
}

func (l *bigLedger) netWorth(day civil.Date) money.Amount {
	var v money.Amount
	for _, a := range l.accounts {
		if a.Status != models.AccountActive || a.Currency != "USD" {
			continue
		}
		if models.Liability(a.AccountType) {
			v -= a.OpeningBalance
		} else {
			v += a.OpeningBalance
		}
	}
	for _, tx := range l.txs {
		if a := l.accounts[tx.AccountID]; a.Status == models.AccountActive && a.Currency == "USD" && l.moves(tx) && tx.Date <= day {
			v -= tx.Amount
		}
	}
	return v
}

func (l *bigLedger) balance(id uuid.UUID, day civil.Date) money.Amount {
	a := l.accounts[id]
	v := a.OpeningBalance
	for _, tx := range l.txs {
		if tx.AccountID == id && l.moves(tx) && tx.Date <= day {
			if models.Liability(a.AccountType) {
				v += tx.Amount
			} else {
				v -= tx.Amount
			}
		}
	}
	return v
}

// wantPoints is a series worked out day by day: the value at the end of
// each interval of p (weeks from Monday), the last one at p's end.
func wantPoints(p models.Period, i models.Interval, value func(civil.Date) money.Amount) []models.SeriesPoint {
	from, to := p.From.Time(), p.To.Time()
	b := from
	switch i {
	case models.Week:
		b = from.AddDate(0, 0, -((int(from.Weekday()) + 6) % 7))
	case models.Month:
		b = time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	var points []models.SeriesPoint
	for !b.After(to) {
		next := b.AddDate(0, 0, 1)
		switch i {
		case models.Week:
			next = b.AddDate(0, 0, 7)
		case models.Month:
			next = b.AddDate(0, 1, 0)
		}
		day := next.AddDate(0, 0, -1)
		if day.After(to) {
			day = to
		}
		points = append(points, models.SeriesPoint{Date: civil.DateOf(day), Value: value(civil.DateOf(day))})
		b = next
	}
	return points
}

var matchPeriods = []models.Period{
	{From: "2024-01-10", To: "2024-01-23"}, // starts on a Wednesday, after many rows
	{From: "2024-03-01", To: "2025-02-28"}, // a year
	{From: "2023-01-01", To: "2023-06-30"}, // before every row
	{From: "2025-06-01", To: "2025-08-31"}, // after every row
	{From: "2024-06-15", To: "2024-06-15"}, // one day
	{From: "2023-10-01", To: "2025-04-30"}, // everything
	{From: "2023-12-31", To: "2024-02-29"}, // starts on a Sunday, ends on a leap day
}

func TestSeriesMatchLedger(t *testing.T) {
	l := newBigLedger(t)
	ctx := context.Background()
	for _, p := range matchPeriods {
		for _, i := range []models.Interval{models.Day, models.Week, models.Month} {
			got, err := l.s.NetWorthSeries(ctx, l.fam, p, i)
			must(t, err)
			checkPoints(t, fmt.Sprintf("net worth %v %s", p, i), got, wantPoints(p, i, l.netWorth))
			for id, a := range l.accounts {
				got, err := l.s.AccountBalanceSeries(ctx, l.fam, id, p, i)
				must(t, err)
				checkPoints(t, fmt.Sprintf("%s %v %s", a.Name, p, i), got,
					wantPoints(p, i, func(d civil.Date) money.Amount { return l.balance(id, d) }))
			}
		}
	}
}

// cellKey names one cell of a report: a month (or "" for the whole
// period), a classification and a category (uuid.Nil: uncategorised).
type cellKey struct {
	month civil.Date
	class string
	cat   uuid.UUID
}

type cellValue struct {
	total money.Amount
	count int
}

func (l *bigLedger) cells(p models.Period, byMonth bool) map[cellKey]cellValue {
	out := map[cellKey]cellValue{}
	for _, tx := range l.txs {
		if !l.counted(tx, p) {
			continue
		}
		k := cellKey{class: "expense"}
		if byMonth {
			k.month = tx.Date[:8] + "01"
		}
		if tx.CategoryID != nil {
			k.cat = *tx.CategoryID
		}
		v := out[k]
		if tx.Amount < 0 {
			k.class = "income"
			v = out[k]
			v.total -= tx.Amount
		} else {
			v.total += tx.Amount
		}
		v.count++
		out[k] = v
	}
	return out
}

func (l *bigLedger) checkRow(t *testing.T, name string, r models.CategoryTotal) {
	t.Helper()
	if r.CategoryID == nil {
		if r.Name != nil || r.ParentID != nil {
			t.Errorf("%s: uncategorised row with a name %+v", name, r)
		}
		return
	}
	c := l.cats[*r.CategoryID]
	if r.Name == nil || *r.Name != c.Name || (c.ParentID == nil) != (r.ParentID == nil) ||
		(c.ParentID != nil && (*r.ParentID != *c.ParentID || r.ParentName == nil || *r.ParentName != l.cats[*c.ParentID].Name)) {
		t.Errorf("%s: row %+v does not describe %+v", name, r, c)
	}
}

func TestCategoryReportsMatchLedger(t *testing.T) {
	l := newBigLedger(t)
	ctx := context.Background()
	for _, p := range matchPeriods {
		want := l.cells(p, false)
		var wantTotals models.Totals
		for k, v := range want {
			if k.class == "income" {
				wantTotals.Income += v.total
				wantTotals.IncomeCount += v.count
			} else {
				wantTotals.Spending += v.total
				wantTotals.SpendingCount += v.count
			}
		}
		totals, err := l.s.PeriodTotals(ctx, l.fam, p)
		must(t, err)
		wantTotals.Currency = "USD"
		if *totals != wantTotals {
			t.Errorf("%v totals: got %+v, want %+v", p, *totals, wantTotals)
		}

		rows, err := l.s.CategoryTotals(ctx, l.fam, p)
		must(t, err)
		got := map[cellKey]cellValue{}
		for i, r := range rows {
			k := cellKey{class: r.Classification}
			if r.CategoryID != nil {
				k.cat = *r.CategoryID
			}
			got[k] = cellValue{r.Total, r.Count}
			l.checkRow(t, fmt.Sprintf("%v category totals", p), r)
			if i > 0 && (rows[i-1].Classification > r.Classification ||
				rows[i-1].Classification == r.Classification && rows[i-1].Total < r.Total) {
				t.Errorf("%v category totals out of order at %d: %+v", p, i, rows)
			}
		}
		if !mapsEqual(got, want) {
			t.Errorf("%v category totals: got %v, want %v", p, got, want)
		}

		wantCells := l.cells(p, true)
		cells, err := l.s.IncomeStatement(ctx, l.fam, p)
		must(t, err)
		gotCells := map[cellKey]cellValue{}
		for i, c := range cells {
			k := cellKey{month: c.Month, class: c.Classification}
			if c.CategoryID != nil {
				k.cat = *c.CategoryID
			}
			gotCells[k] = cellValue{c.Total, c.Count}
			l.checkRow(t, fmt.Sprintf("%v statement", p), c.CategoryTotal)
			if i > 0 {
				prev := cells[i-1]
				if prev.Month > c.Month || prev.Month == c.Month && (prev.Classification > c.Classification ||
					prev.Classification == c.Classification && prev.Total < c.Total) {
					t.Errorf("%v statement out of order at %d", p, i)
				}
			}
		}
		if !mapsEqual(gotCells, wantCells) {
			t.Errorf("%v statement: got %v, want %v", p, gotCells, wantCells)
		}

		var wantFlow []models.CashFlowMonth
		for m := models.MonthPeriod(p.From).From; m <= p.To; m = civil.DateOf(m.Time().AddDate(0, 1, 0)) {
			month := models.CashFlowMonth{Month: m}
			for k, v := range wantCells {
				switch {
				case k.month != m:
				case k.class == "income":
					month.Income += v.total
				default:
					month.Spending += v.total
				}
			}
			wantFlow = append(wantFlow, month)
		}
		flow, err := l.s.CashFlow(ctx, l.fam, p)
		must(t, err)
		if !slices.Equal(flow, wantFlow) {
			t.Errorf("%v cash flow: got %+v, want %+v", p, flow, wantFlow)
		}
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
