package models_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// bigFamily is a family with about 100,000 transactions over three years
// (2023-12 to 2026-11) on eight accounts, with categories,
// subcategories, merchants, tags, transfers, excluded rows and another
// currency, beside a second family of the same size.
type bigFamily struct {
	s        *models.Store
	fam      uuid.UUID
	checking uuid.UUID
}

func seedBigFamily(b *testing.B, s *models.Store, name string, n int) *bigFamily {
	b.Helper()
	ctx := context.Background()
	f := modelstest.NewFamily(b, s, name)
	fam := f.Family.ID
	rng := rand.New(rand.NewPCG(1, 2))
	accounts := []*models.Account{f.Account}
	for _, a := range []struct{ name, typ, cur string }{
		{"Savings", "depository", "USD"}, {"Card", "credit_card", "USD"}, {"Second card", "credit_card", "USD"},
		{"Mortgage", "loan", "USD"}, {"Brokerage", "investment", "USD"}, {"Euro", "depository", "EUR"}, {"House", "property", "USD"},
	} {
		acc := &models.Account{FamilyID: fam, Name: a.name, AccountType: a.typ, Currency: a.cur, OpeningBalance: money.Amount(rng.Int64N(1e9))}
		must(b, s.CreateAccount(ctx, acc))
		accounts = append(accounts, acc)
	}
	var cats []uuid.UUID
	for i := range 25 {
		c := &models.Category{FamilyID: fam, Name: fmt.Sprintf("Category %d", i), Color: "#336699", Icon: "tag", Classification: "expense"}
		if i < 5 {
			c.Classification = "income"
		}
		if i >= 20 {
			c.ParentID = &cats[i-10]
		}
		must(b, s.CreateCategory(ctx, c))
		cats = append(cats, c.ID)
	}
	var merchants, tags []uuid.UUID
	for i := range 100 {
		m := &models.Merchant{FamilyID: fam, Name: fmt.Sprintf("Merchant %d", i)}
		must(b, s.CreateMerchant(ctx, m))
		merchants = append(merchants, m.ID)
	}
	for i := range 10 {
		tg := &models.Tag{FamilyID: fam, Name: fmt.Sprintf("tag %d", i), Color: "#000000"}
		must(b, s.CreateTag(ctx, tg))
		tags = append(tags, tg.ID)
	}

	start := time.Date(2023, 12, 1, 0, 0, 0, 0, time.UTC)
	days := int(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Sub(start).Hours() / 24)
	created := time.Now().UTC().Truncate(time.Microsecond)
	var txs []models.Transaction
	var links []models.TransactionTag
	var transfers []models.Transfer
	newTx := func(acc *models.Account, date civil.Date, amount money.Amount) *models.Transaction {
		txs = append(txs, models.Transaction{ID: models.NewID(), FamilyID: fam, AccountID: acc.ID, Date: date, Amount: amount,
			Currency: acc.Currency, Name: fmt.Sprintf("Purchase %d", len(txs)), CreatedAt: created, UpdatedAt: created})
		return &txs[len(txs)-1]
	}
	for len(txs) < n {
		date := civil.DateOf(start.AddDate(0, 0, rng.IntN(days)))
		acc := accounts[[]int{0, 0, 0, 1, 2, 2, 3, 4, 5, 6}[rng.IntN(10)]]
		switch r := rng.IntN(100); {
		case r < 2: // a transfer
			to := accounts[1+rng.IntN(4)]
			amount := money.Amount(1 + rng.Int64N(5e7))
			out, in := newTx(accounts[0], date, amount), newTx(to, date, -amount)
			transfers = append(transfers, models.Transfer{ID: models.NewID(), FamilyID: fam, InflowTransactionID: in.ID,
				OutflowTransactionID: out.ID, Status: "confirmed", CreatedAt: created, UpdatedAt: created})
		case r < 10: // income
			t := newTx(acc, date, -money.Amount(1+rng.Int64N(3e7)))
			t.CategoryID = &cats[rng.IntN(5)]
		default:
			t := newTx(acc, date, money.Amount(1+rng.Int64N(2e6)))
			if rng.IntN(10) > 0 {
				t.CategoryID = &cats[5+rng.IntN(20)]
			}
			t.MerchantID = &merchants[rng.IntN(len(merchants))]
			t.Excluded = rng.IntN(100) == 0
			if rng.IntN(10) == 0 {
				links = append(links, models.TransactionTag{TransactionID: t.ID, TagID: tags[rng.IntN(len(tags))], FamilyID: fam})
			}
		}
	}
	db := s.DB()
	for i := 0; i < len(txs); i += 1000 {
		batch := txs[i:min(i+1000, len(txs))]
		if _, err := db.NewInsert().Model(&batch).Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.NewInsert().Model(&transfers).Exec(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := db.NewInsert().Model(&links).Exec(ctx); err != nil {
		b.Fatal(err)
	}
	for _, a := range accounts {
		must(b, s.RecalculateBalance(ctx, fam, a.ID))
	}
	return &bigFamily{s: s, fam: fam, checking: f.Account.ID}
}

// BenchmarkReports measures each dashboard and report query against a
// family of 100,000 transactions (beside another of the same size), on
// freshly analysed tables as autovacuum would leave them.
func BenchmarkReports(b *testing.B) {
	s := modelstest.NewStore(b)
	ctx := context.Background()
	big := seedBigFamily(b, s, "big", 100_000)
	seedBigFamily(b, s, "neighbour", 100_000)
	if s.Postgres() {
		if _, err := s.DB().ExecContext(ctx, "VACUUM ANALYZE"); err != nil {
			b.Fatal(err)
		}
	} else if _, err := s.DB().ExecContext(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	fam := big.fam
	month := models.MonthPeriod("2026-10-15")
	year := models.Period{From: "2025-01-01", To: "2025-12-31"}
	last30 := models.Period{From: "2026-10-02", To: "2026-10-31"}
	page := models.Page{Number: 1, Size: 25}

	run := func(name string, fn func() error) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	dashboard := []func() error{
		func() error { _, err := s.BalanceSheet(ctx, fam, false); return err },
		func() error { _, err := s.NetWorthSeries(ctx, fam, last30, models.Day); return err },
		func() error { _, err := s.PeriodTotals(ctx, fam, month); return err },
		func() error { _, err := s.CategoryTotals(ctx, fam, month); return err },
		func() error {
			_, _, err := s.Transactions(ctx, fam, models.TransactionFilter{}, models.Page{Number: 1, Size: 10})
			return err
		},
	}
	reports := []func() error{
		func() error { _, err := s.IncomeStatement(ctx, fam, year); return err },
		func() error { _, err := s.CashFlow(ctx, fam, year); return err },
		func() error { _, err := s.CategoryTotals(ctx, fam, year); return err },
		func() error { _, err := s.NetWorthSeries(ctx, fam, year, models.Month); return err },
		func() error { _, err := s.PeriodTotals(ctx, fam, year); return err },
	}
	all := func(fns []func() error) func() error {
		return func() error {
			for _, fn := range fns {
				if err := fn(); err != nil {
					return err
				}
			}
			return nil
		}
	}
	run("Dashboard", all(dashboard))
	run("ReportsYear", all(reports))
	run("BalanceSheet", dashboard[0])
	run("NetWorthSeries30Days", dashboard[1])
	run("NetWorthSeriesYearMonthly", reports[3])
	run("NetWorthSeries3YearsWeekly", func() error {
		_, err := s.NetWorthSeries(ctx, fam, models.Period{From: "2023-12-01", To: "2026-11-30"}, models.Week)
		return err
	})
	run("AccountBalanceSeriesYear", func() error {
		_, err := s.AccountBalanceSeries(ctx, fam, big.checking, year, models.Day)
		return err
	})
	run("PeriodTotalsMonth", dashboard[2])
	run("CategoryTotalsMonth", dashboard[3])
	run("CategoryTotalsYear", reports[2])
	run("IncomeStatementYear", reports[0])
	run("CashFlowYear", reports[1])
	run("TransactionsPage", func() error { _, _, err := s.Transactions(ctx, fam, models.TransactionFilter{}, page); return err })
	run("TransactionsSearchPage", func() error {
		_, _, err := s.Transactions(ctx, fam, models.TransactionFilter{Search: "merchant 4", StartDate: "2025-01-01"}, page)
		return err
	})
	run("AccountRegisterFirstPage", func() error { _, _, err := s.AccountRegister(ctx, fam, big.checking, page); return err })
	run("AccountRegisterPage100", func() error {
		_, _, err := s.AccountRegister(ctx, fam, big.checking, models.Page{Number: 100, Size: 25})
		return err
	})
	run("BalanceHistoryPage", func() error {
		_, _, err := s.BalanceHistory(ctx, fam, models.BalanceFilter{}, page)
		return err
	})
	run("BalanceHistoryAccountPage", func() error {
		_, _, err := s.BalanceHistory(ctx, fam, models.BalanceFilter{AccountID: &big.checking}, page)
		return err
	})

	budget, err := s.EnsureBudget(ctx, fam, "2026-10-01")
	must(b, err)
	for _, m := range []civil.Date{"2026-07-01", "2026-08-01", "2026-09-01"} {
		prev, err := s.EnsureBudget(ctx, fam, m)
		must(b, err)
		lines, _, err := s.BudgetLines(ctx, fam, models.BudgetLineFilter{BudgetID: &prev.ID}, models.Page{Number: 1, Size: 100})
		must(b, err)
		for _, l := range lines {
			must(b, s.UpdateBudgetCategory(ctx, fam, l.ID, 1_000_000, true))
		}
	}
	run("BudgetLinesMonth", func() error {
		_, _, err := s.BudgetLines(ctx, fam, models.BudgetLineFilter{BudgetID: &budget.ID}, models.Page{Number: 1, Size: 100})
		return err
	})
	run("BudgetsPage", func() error { _, _, err := s.Budgets(ctx, fam, models.BudgetFilter{}, page); return err })
}
