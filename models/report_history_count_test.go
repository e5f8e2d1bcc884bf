package models_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// TestBalanceHistoryCount: the total of the balance history (its skip
// scan over each account's days) equals the days counted here from what
// was written, and the number of rows its pages hold, for random ledgers:
// several rows a day, deleted, excluded and foreign-currency rows (which
// move nothing), valuations on days with and without transactions, and
// filters by account, currency and range.
func TestBalanceHistoryCount(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	fam := l.f.Family.ID
	rng := rand.New(rand.NewPCG(30, 3))
	accounts := []*models.Account{l.checking, l.card, l.savings, l.euro} // the dormant one takes no writes
	type key struct {
		account uuid.UUID
		date    civil.Date
	}
	moved := map[key]bool{} // the account-days the history shows
	for _, a := range accounts {
		for range 40 {
			day := civil.Date(fmt.Sprintf("2023-%02d-%02d", 1+rng.IntN(3), 1+rng.IntN(28)))
			tx := &models.Transaction{FamilyID: fam, AccountID: a.ID, Date: day, Amount: money.Amount(1 + rng.Int64N(1e6)),
				Currency: a.Currency, Name: "row"}
			counted := true
			switch rng.IntN(6) {
			case 0:
				tx.Excluded, counted = true, false
			case 1:
				tx.Currency, counted = map[string]string{"USD": "EUR", "EUR": "USD"}[a.Currency], false
			}
			deleted := counted && rng.IntN(8) == 0
			if deleted && rng.IntN(2) == 0 { // a synced row is tombstoned (deleted_at), the others removed
				src, ext := models.SourceSimpleFIN, fmt.Sprintf("sync-%d", rng.Int64())
				tx.Source, tx.ExternalID = &src, &ext
			}
			_, _, err := l.s.CreateTransaction(ctx, tx, nil)
			must(t, err)
			if deleted {
				_, err = l.s.DeleteTransaction(ctx, fam, tx.ID)
				must(t, err)
				counted = false
			}
			if counted {
				moved[key{a.ID, day}] = true
			}
		}
		for range 3 {
			day := civil.Date(fmt.Sprintf("2023-%02d-%02d", 1+rng.IntN(3), 1+rng.IntN(28)))
			if _, err := l.s.CreateValuation(ctx, &models.Valuation{FamilyID: fam, AccountID: a.ID, Date: &day,
				Amount: money.Amount(rng.Int64N(1e8)), Kind: "manual"}); err != nil {
				t.Fatal(err)
			}
			moved[key{a.ID, day}] = true
		}
	}
	filters := []models.BalanceFilter{
		{StartDate: "2023-01-01", EndDate: "2023-12-31"},
		{StartDate: "2023-02-10", EndDate: "2023-03-05"},
		{AccountID: &l.card.ID, StartDate: "2023-01-01", EndDate: "2023-12-31"},
		{Currency: "EUR", StartDate: "2023-01-01", EndDate: "2023-12-31"},
		{StartDate: "2023-02-15", EndDate: "2023-02-15"},
	}
	for i, f := range filters {
		want := 0
		for k := range moved {
			if k.date >= f.StartDate && k.date <= f.EndDate && (f.AccountID == nil || *f.AccountID == k.account) &&
				(f.Currency == "" || f.Currency == currencyOf(accounts, k.account)) {
				want++
			}
		}
		var rows int
		var total int
		for page := 1; ; page++ {
			days, n, err := l.s.BalanceHistory(ctx, fam, f, models.Page{Number: page, Size: 25})
			must(t, err)
			total = n
			if len(days) == 0 {
				break
			}
			rows += len(days)
		}
		if total != want || rows != want {
			t.Errorf("filter %d: total %d, rows %d, counted here %d", i, total, rows, want)
		}
	}
}

func currencyOf(accounts []*models.Account, id uuid.UUID) string {
	for _, a := range accounts {
		if a.ID == id {
			return a.Currency
		}
	}
	return ""
}
