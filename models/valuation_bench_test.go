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

// BenchmarkValuations measures what valuations add to the hot paths: the
// register of an account with 100,000 transactions and 1,000 valuations
// over three years (2023-12 to 2026-11), a page near the top and one
// further down, and the family's net worth over two years, beside a
// second family of 100,000 transactions (seedBigFamily).
func BenchmarkValuations(b *testing.B) {
	s := modelstest.NewStore(b)
	ctx := context.Background()
	neighbour := seedBigFamily(b, s, "neighbour", 100_000)
	f := modelstest.NewFamily(b, s, "valued")
	fam, acct := f.Family.ID, f.Account
	house := &models.Account{FamilyID: fam, Name: "House", AccountType: "property", Currency: "USD", OpeningBalance: 300_000_0000}
	card := &models.Account{FamilyID: fam, Name: "Card", AccountType: "credit_card", Currency: "USD"}
	must(b, s.CreateAccount(ctx, house))
	must(b, s.CreateAccount(ctx, card))
	rng := rand.New(rand.NewPCG(3, 4))
	start := time.Date(2023, 12, 1, 0, 0, 0, 0, time.UTC)
	days := int(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Sub(start).Hours() / 24)
	created := time.Now().UTC().Truncate(time.Microsecond)
	txs := make([]models.Transaction, 0, 101_000)
	for i := range 101_000 {
		on := acct
		if i >= 100_000 {
			on = card
		}
		amount := money.Amount(1 + rng.Int64N(2e6))
		if rng.IntN(10) == 0 {
			amount = -money.Amount(1 + rng.Int64N(3e7))
		}
		txs = append(txs, models.Transaction{ID: models.NewID(), FamilyID: fam, AccountID: on.ID,
			Date: civil.DateOf(start.AddDate(0, 0, rng.IntN(days))), Amount: amount, Currency: "USD",
			Name: fmt.Sprintf("Purchase %d", i), CreatedAt: created, UpdatedAt: created})
	}
	db := s.DB()
	for i := 0; i < len(txs); i += 1000 {
		batch := txs[i:min(i+1000, len(txs))]
		if _, err := db.NewInsert().Model(&batch).Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	var vals []models.Valuation
	for _, d := range rng.Perm(days)[:1000] {
		day := civil.DateOf(start.AddDate(0, 0, d))
		vals = append(vals, models.Valuation{ID: models.NewID(), FamilyID: fam, AccountID: acct.ID, Date: &day,
			Amount: money.Amount(rng.Int64N(1e9)), Kind: models.ValuationReconciliation, CreatedAt: created, UpdatedAt: created})
	}
	for m := range 36 { // the house, valued monthly
		day := civil.DateOf(start.AddDate(0, m, 0))
		vals = append(vals, models.Valuation{ID: models.NewID(), FamilyID: fam, AccountID: house.ID, Date: &day,
			Amount: money.Amount(300_000_0000 + rng.Int64N(1e9)), Kind: models.ValuationReconciliation, CreatedAt: created, UpdatedAt: created})
	}
	if _, err := db.NewInsert().Model(&vals).Exec(ctx); err != nil {
		b.Fatal(err)
	}
	for _, a := range []*models.Account{acct, house, card} {
		must(b, s.RecalculateBalance(ctx, fam, a.ID))
	}
	// The kept sums as the worker's sweep leaves them (every 5 minutes):
	// otherwise the first reads would each merge a batch of the seed's
	// deltas, which a family's reads pay once, not at every page.
	for _, id := range []uuid.UUID{neighbour.fam, fam} {
		must(b, s.CompactTransactionSums(ctx, id))
	}
	if s.Postgres() {
		if _, err := db.ExecContext(ctx, "VACUUM ANALYZE"); err != nil {
			b.Fatal(err)
		}
	} else if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	run := func(name string, fn func() error) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := modelstest.ProcessCPU(b)
			for b.Loop() {
				if err := fn(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(modelstest.ProcessCPU(b)-cpu)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
	for _, page := range []int{1, 20} {
		run(fmt.Sprintf("RegisterPage%d", page), func() error {
			// As the account screen asks: counted up to 250 ("at least").
			rows, _, err := s.AccountRegister(ctx, fam, acct.ID, models.Page{Number: page, Size: 50, CountUpTo: 250})
			if err == nil && len(rows) != 50 {
				err = fmt.Errorf("%d rows", len(rows))
			}
			return err
		})
	}
	twoYears := models.Period{From: "2024-12-01", To: "2026-11-30"}
	run("NetWorthSeries2YearsDaily", func() error { _, err := s.NetWorthSeries(ctx, fam, twoYears, models.Day); return err })
	run("NetWorthSeries2YearsWeekly", func() error { _, err := s.NetWorthSeries(ctx, fam, twoYears, models.Week); return err })
	run("AccountBalanceSeries2YearsDaily", func() error {
		_, err := s.AccountBalanceSeries(ctx, fam, acct.ID, twoYears, models.Day)
		return err
	})
	run("BalanceHistoryPage", func() error {
		_, _, err := s.BalanceHistory(ctx, fam, models.BalanceFilter{}, models.Page{Number: 1, Size: 25})
		return err
	})
	run("BalanceHistoryCountOnly", func() error {
		_, _, err := s.BalanceHistory(ctx, fam, models.BalanceFilter{}, models.Page{Number: 100000, Size: 25})
		return err
	})
	run("BalanceOn", func() error { _, err := s.BalanceOn(ctx, fam, acct.ID, "2025-06-15"); return err })
	run("RecalculateBalance", func() error { return s.RecalculateBalance(ctx, fam, acct.ID) })
}
