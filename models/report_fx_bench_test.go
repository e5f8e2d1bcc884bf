package models_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// seedFXFamily is a USD family with n transactions over 2025 on three
// accounts, one each in USD, EUR and GBP, the two in other currencies
// holding foreign (a fraction) of the rows between them, with 25
// categories, and 2% of the rows transfer legs.
func seedFXFamily(b *testing.B, s *models.Store, name string, n int, foreign float64) uuid.UUID {
	b.Helper()
	ctx := context.Background()
	f := modelstest.NewFamily(b, s, name)
	fam := f.Family.ID
	rng := rand.New(rand.NewPCG(3, 4))
	accounts := []*models.Account{f.Account}
	for _, cur := range []string{"EUR", "GBP"} {
		a := &models.Account{FamilyID: fam, Name: cur, AccountType: "depository", Currency: cur}
		must(b, s.CreateAccount(ctx, a))
		accounts = append(accounts, a)
	}
	var cats []uuid.UUID
	for i := range 25 {
		c := &models.Category{FamilyID: fam, Name: fmt.Sprintf("Category %d", i), Color: "#336699", Icon: "tag", Classification: "expense"}
		if i < 5 {
			c.Classification = "income"
		}
		must(b, s.CreateCategory(ctx, c))
		cats = append(cats, c.ID)
	}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	created := time.Now().UTC().Truncate(time.Microsecond)
	var txs []models.Transaction
	var transfers []models.Transfer
	newTx := func(acc *models.Account, date civil.Date, amount money.Amount) *models.Transaction {
		txs = append(txs, models.Transaction{ID: models.NewID(), FamilyID: fam, AccountID: acc.ID, Date: date, Amount: amount,
			Currency: acc.Currency, Name: fmt.Sprintf("Purchase %d", len(txs)), CreatedAt: created, UpdatedAt: created})
		return &txs[len(txs)-1]
	}
	for len(txs) < n {
		date := civil.DateOf(start.AddDate(0, 0, rng.IntN(365)))
		acc := accounts[0]
		if rng.Float64() < foreign {
			acc = accounts[1+rng.IntN(2)]
		}
		switch r := rng.IntN(100); {
		case r < 1:
			amount := money.Amount(1 + rng.Int64N(5e7))
			out, in := newTx(accounts[0], date, amount), newTx(acc, date, -amount)
			transfers = append(transfers, models.Transfer{ID: models.NewID(), FamilyID: fam, InflowTransactionID: in.ID,
				OutflowTransactionID: out.ID, Status: "confirmed", CreatedAt: created, UpdatedAt: created})
		case r < 10:
			t := newTx(acc, date, -money.Amount(1+rng.Int64N(3e7)))
			t.CategoryID = &cats[rng.IntN(5)]
		default:
			t := newTx(acc, date, money.Amount(1+rng.Int64N(2e6)))
			if rng.IntN(10) > 0 {
				t.CategoryID = &cats[5+rng.IntN(20)]
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
	return fam
}

// BenchmarkFlowsFX measures the year's income statement and the
// dashboard's month figures (category totals and what they leave out) of
// a family of 100,000 transactions, 10% of them in EUR and GBP (the
// issue's ledger),
// with a daily rate of both for the year, beside a neighbour of the same
// size.
func BenchmarkFlowsFX(b *testing.B) {
	s := modelstest.NewStore(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, cur := range []string{"EUR", "GBP"} {
		var days []models.DayRate
		for d := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() == 2025; d = d.AddDate(0, 0, 1) {
			r, err := money.ParseRate(fmt.Sprintf("1.%04d", 500+rng.IntN(3000)))
			must(b, err)
			days = append(days, models.DayRate{Date: civil.DateOf(d), Rate: r})
		}
		must(b, s.SaveFetchedRates(ctx, cur, "USD", "2025-01-01", "2025-12-31", days))
	}
	fam := seedFXFamily(b, s, "fx", 100_000, 0.1)
	neighbour := seedFXFamily(b, s, "fx-neighbour", 100_000, 0.1)
	// The kept sums as a family's are between its imports: merged (by
	// the readers and the periodic job, jobs' sums compaction). Unmerged,
	// the seed's deltas made the first operations measured pay for
	// merging them and every read sum up to a row per seeded row.
	for _, f := range []uuid.UUID{fam, neighbour} {
		must(b, s.CompactTransactionSums(ctx, f))
	}
	if s.Postgres() {
		if _, err := s.DB().ExecContext(ctx, "VACUUM ANALYZE"); err != nil {
			b.Fatal(err)
		}
	} else if _, err := s.DB().ExecContext(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	year := models.Period{From: "2025-01-01", To: "2025-12-31"}
	month := models.MonthPeriod("2025-10-15")
	trace := &fxTrace{}
	if os.Getenv("COFFER_BENCH_SQL") != "" {
		s.DB().AddQueryHook(trace)
	}
	run := func(name string, fn func() error) {
		if os.Getenv("COFFER_BENCH_SQL") != "" {
			trace.on.Store(true)
			if err := fn(); err != nil {
				b.Fatal(err)
			}
			trace.report(b, name, s)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := fn(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
		})
	}
	run("IncomeStatementYear", func() error { _, err := s.IncomeStatement(ctx, fam, year); return err })
	// The two parts of it: the SQL of the family's currency, as before
	// conversions, and the rows in other currencies read and converted.
	run("IncomeStatementYearSQLOnly", func() error { return s.IncomeStatementSQL(ctx, fam, year) })
	run("ForeignFlowsYear", func() error { _, err := s.ForeignFlows(ctx, fam, year); return err })
	run("DashboardMonth", func() error {
		if _, err := s.CategoryTotals(ctx, fam, month); err != nil {
			return err
		}
		_, err := s.LeftOutOf(ctx, fam, month)
		return err
	})
	run("LeftOutOfMonth", func() error { _, err := s.LeftOutOf(ctx, fam, month); return err })
	run("TransactionTotalsYear", func() error {
		_, err := s.TransactionTotals(ctx, fam, models.TransactionFilter{StartDate: year.From, EndDate: year.To})
		return err
	})
	foreignAccounts, _, err := s.Accounts(ctx, fam, models.Page{Number: 1, Size: 100})
	must(b, err)
	var eur []uuid.UUID
	for _, a := range foreignAccounts {
		if a.Currency == "EUR" {
			eur = append(eur, a.ID)
		}
	}
	run("AccountTotalsYear", func() error { _, err := s.AccountTotals(ctx, fam, year, eur); return err })
	run("CashFlowYear", func() error { _, err := s.CashFlow(ctx, fam, year); return err })
	var budget *models.BudgetSummary
	for m := 1; m <= 12; m++ {
		var err error
		budget, err = s.EnsureBudget(ctx, fam, civil.Date(fmt.Sprintf("2025-%02d-01", m)))
		must(b, err)
	}
	run("BudgetLinesMonth", func() error {
		_, _, err := s.BudgetLines(ctx, fam, models.BudgetLineFilter{BudgetID: &budget.ID}, models.Page{Number: 1, Size: 100})
		return err
	})
	run("BudgetsPage", func() error {
		_, _, err := s.Budgets(ctx, fam, models.BudgetFilter{}, models.Page{Number: 1, Size: 12})
		return err
	})
	// The price and the gain of transactions_currency_idx: a create with
	// it and without it, and the foreign part and the reports without it.
	var usd *models.Account
	for i, a := range foreignAccounts {
		if a.Currency == "USD" {
			usd = &foreignAccounts[i]
		}
	}
	create := func() error { // 50 creates an op: a create is short beside the machine's noise
		for range 50 {
			if _, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: usd.ID, Date: "2025-06-15",
				Amount: 12345, Currency: "USD", Name: "Coffee"}, nil); err != nil {
				return err
			}
		}
		return nil
	}
	run("CreateTransaction50", create)
	if _, err := s.DB().ExecContext(ctx, "DROP INDEX transactions_currency_idx"); err != nil {
		b.Fatal(err)
	}
	run("CreateTransaction50WithoutCurrencyIndex", create)
	run("ForeignFlowsYearWithoutCurrencyIndex", func() error { _, err := s.ForeignFlows(ctx, fam, year); return err })
	run("IncomeStatementYearWithoutCurrencyIndex", func() error { _, err := s.IncomeStatement(ctx, fam, year); return err })
	run("DashboardMonthWithoutCurrencyIndex", func() error {
		if _, err := s.CategoryTotals(ctx, fam, month); err != nil {
			return err
		}
		_, err := s.LeftOutOf(ctx, fam, month)
		return err
	})
}

// fxTrace, on with COFFER_BENCH_SQL=1, logs the statements of one more
// call of each operation of BenchmarkFlowsFX with their times, and on
// PostgreSQL the plan (EXPLAIN (ANALYZE, BUFFERS)) of each read of a
// millisecond or more. SQLite's plans are left out: a query over the
// temporary rates table runs on the connection that holds it.
type fxTrace struct {
	on    atomic.Bool
	mu    sync.Mutex
	stmts []string
	took  []time.Duration
}

func (t *fxTrace) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (t *fxTrace) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if !t.on.Load() {
		return
	}
	t.mu.Lock()
	t.stmts, t.took = append(t.stmts, e.Query), append(t.took, time.Since(e.StartTime))
	t.mu.Unlock()
}

func (t *fxTrace) report(b *testing.B, name string, s *models.Store) {
	t.on.Store(false)
	t.mu.Lock()
	stmts, took := t.stmts, t.took
	t.stmts, t.took = nil, nil
	t.mu.Unlock()
	for i, q := range stmts {
		b.Logf("%s %7.2f ms  %.200s", name, float64(took[i].Microseconds())/1000, q)
		upper := strings.ToUpper(strings.TrimSpace(q))
		if !s.Postgres() || took[i] < time.Millisecond || !strings.HasPrefix(upper, "SELECT") && !strings.HasPrefix(upper, "WITH") {
			continue
		}
		rows, err := s.DB().QueryContext(b.Context(), "EXPLAIN (ANALYZE, BUFFERS) "+q)
		if err != nil {
			b.Logf("explain: %v", err)
			continue
		}
		var plan strings.Builder
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				b.Fatal(err)
			}
			plan.WriteString("\n    " + line)
		}
		rows.Close()
		b.Logf("plan:%s", plan.String())
	}
}
