package assistant_test

import (
	"context"
	"fmt"
	"testing"

	"coffer/jobs/assistant"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// BenchmarkGetTransactions times get_transactions, its page and its
// totals, over a household's 20,000 transactions of two years.
func BenchmarkGetTransactions(b *testing.B) {
	store := modelstest.NewStore(b)
	ctx := context.Background()
	f := modelstest.NewFamily(b, store, "bench")
	rows := make([]*models.NewTransaction, 20_000)
	for i := range rows {
		rows[i] = &models.NewTransaction{Row: &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
			Date: civil.Date(fmt.Sprintf("202%d-%02d-%02d", 5+i%2, 1+i%12, 1+i%28)), Amount: money.Amount((i%500 - 50) * 10_000),
			Currency: "USD", Name: fmt.Sprintf("Shop %d", i%300)}}
	}
	if _, err := store.IngestTransactions(ctx, f.Family.ID, rows); err != nil {
		b.Fatal(err)
	}
	c := assistant.Caller{FamilyID: f.Family.ID, UserID: f.User.ID, Role: models.RoleMember}
	for _, args := range []string{
		`{}`,
		`{"search": "shop 12", "page_size": 10}`,
		`{"types": ["income", "expense"], "sort_by": "amount", "start_date": "2026-01-01", "end_date": "2026-06-30"}`,
	} {
		b.Run("tool "+args, func(b *testing.B) {
			for b.Loop() {
				if _, err := assistant.Call(ctx, store, c, "get_transactions", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// The two queries of an unfiltered call, apart.
	b.Run("page only", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := store.Transactions(ctx, f.Family.ID, models.TransactionFilter{}, models.Page{Number: 1, Size: 50}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("totals only", func(b *testing.B) {
		for b.Loop() {
			if _, err := store.TransactionTotals(ctx, f.Family.ID, models.TransactionFilter{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
