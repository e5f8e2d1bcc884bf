package models_test

import (
	"context"
	"fmt"
	"testing"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
)

// TestPageCountUpTo: a page with CountUpTo counts no further than that (or
// one row past the page), says so with AtLeast, and reads the same rows as
// a page counted exactly; the transactions list, a search and a register.
func TestPageCountUpTo(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "counted")
	other := modelstest.NewFamily(t, s, "other")
	for _, fam := range []*modelstest.FamilyFixture{f, other} {
		for i := range 30 {
			name := "Coffee"
			if i%3 == 0 {
				name = "Bakery"
			}
			tx := &models.Transaction{FamilyID: fam.Family.ID, AccountID: fam.Account.ID, Date: civil.Date(fmt.Sprintf("2026-01-%02d", i+1)),
				Amount: 100, Currency: "USD", Name: name}
			if _, _, err := s.CreateTransaction(ctx, tx, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	fam, acct := f.Family.ID, f.Account.ID
	type list func(models.Page) ([]string, int, error)
	names := func(txs []*models.Transaction) []string {
		var out []string
		for _, tx := range txs {
			out = append(out, string(tx.Date))
		}
		return out
	}
	lists := map[string]list{
		"transactions": func(p models.Page) ([]string, int, error) {
			txs, n, err := s.Transactions(ctx, fam, models.TransactionFilter{}, p)
			return names(txs), n, err
		},
		"search": func(p models.Page) ([]string, int, error) { // 20 rows match
			txs, n, err := s.Transactions(ctx, fam, models.TransactionFilter{Search: "coff"}, p)
			return names(txs), n, err
		},
		"register": func(p models.Page) ([]string, int, error) {
			rows, n, err := s.AccountRegister(ctx, fam, acct, p)
			var out []string
			for _, r := range rows {
				out = append(out, string(r.Transaction.Date))
			}
			return out, n, err
		},
	}
	for name, read := range lists {
		_, all, err := read(models.Page{Number: 1, Size: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			number, upTo, total int
			atLeast             bool
		}{
			{1, 10, 10, true},    // stops at CountUpTo
			{3, 10, 16, true},    // one row past page 3
			{1, 100, all, false}, // every row: exact
			{1, all, all, true},  // exactly at the limit: at least
			{9, 10, all, false},  // past the end
		} {
			p := models.Page{Number: tt.number, Size: 5, CountUpTo: tt.upTo}
			rows, n, err := read(p)
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := read(models.Page{Number: tt.number, Size: 5})
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.total || p.AtLeast(n) != tt.atLeast || fmt.Sprint(rows) != fmt.Sprint(want) {
				t.Errorf("%s page %d up to %d: total %d, at least %v, rows %v; want %d, %v, %v",
					name, tt.number, tt.upTo, n, p.AtLeast(n), rows, tt.total, tt.atLeast, want)
			}
		}
	}
}
