package models_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// BenchmarkCreateKeptBalance measures a transaction's create on an account
// with 1,000 and with 100,000 prior transactions over three years, with
// its balance's share of the work: kept (the write's own balance move,
// then the job's RefreshBalance, a no-op on the same day) against walk
// (the full recalculation the job ran after every write before issue 30).
// kept should be flat in the account's history; walk grows with it.
func BenchmarkCreateKeptBalance(b *testing.B) {
	for _, prior := range []int{1_000, 100_000} {
		s := modelstest.NewStore(b)
		ctx := context.Background()
		f := modelstest.NewFamily(b, s, "bench")
		fam, acct := f.Family.ID, f.Account
		start := time.Date(2023, 12, 1, 0, 0, 0, 0, time.UTC)
		created := time.Now().UTC().Truncate(time.Microsecond)
		rows := make([]models.Transaction, 0, 1000)
		for i := range prior {
			rows = append(rows, models.Transaction{ID: models.NewID(), FamilyID: fam, AccountID: acct.ID,
				Date: civil.DateOf(start.AddDate(0, 0, i%1000)), Amount: money.Amount(1 + i%997*1000), Currency: "USD",
				Name: fmt.Sprintf("Purchase %d", i), CreatedAt: created, UpdatedAt: created})
			if len(rows) == cap(rows) || i == prior-1 {
				if _, err := s.DB().NewInsert().Model(&rows).Exec(ctx); err != nil {
					b.Fatal(err)
				}
				rows = rows[:0]
			}
		}
		must(b, s.RecalculateBalance(ctx, fam, acct.ID))
		day := civil.DateOf(time.Now().AddDate(0, 0, -3))
		create := func(b *testing.B) {
			_, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: acct.ID, Date: day,
				Amount: 12345, Currency: "USD", Name: "Coffee"}, nil)
			if err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("kept/prior=%d", prior), func(b *testing.B) {
			for b.Loop() {
				create(b)
				if _, err := s.RefreshBalance(ctx, fam, acct.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("walk/prior=%d", prior), func(b *testing.B) {
			for b.Loop() {
				create(b)
				must(b, s.RecalculateBalance(ctx, fam, acct.ID))
			}
		})
	}
}
