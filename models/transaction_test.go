package models_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

func TestTransactionIdempotencyAndScope(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	a := modelstest.NewFamily(t, s, "alpha")
	b := modelstest.NewFamily(t, s, "beta")

	ext, src := "ext-1", "api"
	tx := &models.Transaction{FamilyID: a.Family.ID, AccountID: a.Account.ID, Date: "2024-01-15",
		Amount: 125000, Currency: "USD", Name: "Groceries", ExternalID: &ext, Source: &src}
	_, created, err := s.CreateTransaction(ctx, tx, nil)
	if err != nil || !created {
		t.Fatalf("first create: created=%v err=%v", created, err)
	}
	again := *tx
	row, created, err := s.CreateTransaction(ctx, &again, nil)
	if err != nil || created || row.ID != tx.ID {
		t.Fatalf("replay: row=%v created=%v err=%v, want the first row, false, nil", row, created, err)
	}
	got, err := s.Transaction(ctx, a.Family.ID, tx.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Amount != 125000 || got.Account == nil || got.Account.ID != a.Account.ID || got.Date != "2024-01-15" {
		t.Fatalf("got %+v", got)
	}
	if _, err := s.Transaction(ctx, b.Family.ID, tx.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("other family read: err=%v, want ErrNotFound", err)
	}
	// A transaction on another family's account is refused.
	foreign := &models.Transaction{FamilyID: b.Family.ID, AccountID: a.Account.ID, Date: "2024-01-15", Amount: 1, Currency: "USD", Name: "x"}
	var inv *models.InvalidError
	if _, _, err := s.CreateTransaction(ctx, foreign, []uuid.UUID{uuid.New()}); !errors.As(err, &inv) || len(inv.Problems) != 2 {
		t.Fatalf("foreign account: err=%v, want 2 problems", err)
	}
}

// TestCreateTransactionRefs: a create whose category, merchant or account
// is not the family's (or the account not active) writes nothing and names
// each problem; with the family's own it answers with them filled in.
func TestCreateTransactionRefs(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	a := modelstest.NewFamily(t, s, "alpha")
	b := modelstest.NewFamily(t, s, "beta")
	cat := &models.Category{FamilyID: a.Family.ID, Name: "Food", Color: "#112233", Icon: "utensils", Classification: "expense"}
	foreignCat := &models.Category{FamilyID: b.Family.ID, Name: "Food", Color: "#112233", Icon: "utensils", Classification: "expense"}
	mer := &models.Merchant{FamilyID: a.Family.ID, Name: "Shop"}
	foreignMer := &models.Merchant{FamilyID: b.Family.ID, Name: "Shop"}
	for _, err := range []error{s.CreateCategory(ctx, cat), s.CreateCategory(ctx, foreignCat), s.CreateMerchant(ctx, mer), s.CreateMerchant(ctx, foreignMer)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	closed := &models.Account{FamilyID: a.Family.ID, Name: "Closed", AccountType: "depository", Currency: "USD", Status: models.AccountDisabled}
	if err := s.CreateAccount(ctx, closed); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		account  uuid.UUID
		cat, mer *uuid.UUID
		problems []string
	}{
		{"own references", a.Account.ID, &cat.ID, &mer.ID, nil},
		{"another family's category", a.Account.ID, &foreignCat.ID, &mer.ID, []string{"Category " + foreignCat.ID.String() + " not found"}},
		{"another family's merchant", a.Account.ID, nil, &foreignMer.ID, []string{"Merchant " + foreignMer.ID.String() + " not found"}},
		{"another family's account", b.Account.ID, &cat.ID, nil, []string{"Account not found"}},
		{"a closed account", closed.ID, nil, nil, []string{"Account is not active"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := &models.Transaction{FamilyID: a.Family.ID, AccountID: tc.account, Date: "2024-03-01", Amount: 4200,
				Currency: "USD", Name: tc.name, CategoryID: tc.cat, MerchantID: tc.mer}
			row, created, err := s.CreateTransaction(ctx, tx, nil)
			var inv *models.InvalidError
			if tc.problems != nil {
				if !errors.As(err, &inv) || !slices.Equal(inv.Problems, tc.problems) {
					t.Fatalf("err = %v, want problems %q", err, tc.problems)
				}
				if _, err := s.Transaction(ctx, a.Family.ID, tx.ID); !errors.Is(err, models.ErrNotFound) {
					t.Errorf("a refused create wrote a row: %v", err)
				}
				return
			}
			if err != nil || !created || row.Account == nil || row.Account.Name != "Checking" || row.Category == nil ||
				row.Category.Icon != "utensils" || row.Merchant == nil || row.Merchant.Name != "Shop" || row.Tags == nil {
				t.Fatalf("created=%v err=%v row=%+v", created, err, row)
			}
		})
	}
}

func TestRecalculateBalance(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "gamma")
	card := &models.Account{FamilyID: f.Family.ID, Name: "Card", AccountType: "credit_card", Currency: "USD", OpeningBalance: 1000000}
	if err := s.CreateAccount(ctx, card); err != nil {
		t.Fatal(err)
	}
	for _, acc := range []uuid.UUID{f.Account.ID, card.ID} {
		for _, tx := range []struct {
			date   civil.Date
			amount money.Amount
			cur    string
		}{
			{"2024-01-01", 250000, "USD"},   // spent 25
			{"2024-01-02", -1000000, "USD"}, // received 100
			{"2199-01-01", 50000, "USD"},    // future: not yet
			{"2024-01-03", 70000, "EUR"},    // other currency: not counted
		} {
			if _, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: acc, Date: tx.date, Amount: tx.amount, Currency: tx.cur, Name: "t"}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RecalculateBalance(ctx, f.Family.ID, acc); err != nil {
			t.Fatal(err)
		}
		if err := s.RecalculateBalance(ctx, f.Family.ID, acc); err != nil {
			t.Fatal(err)
		}
	}
	checking, _ := s.Account(ctx, f.Family.ID, f.Account.ID)
	if checking.Balance != 750000 || checking.CashBalance != 750000 {
		t.Errorf("checking balance = %v cash %v, want 75.0000", checking.Balance, checking.CashBalance)
	}
	card, _ = s.Account(ctx, f.Family.ID, card.ID)
	if card.Balance != 1000000-750000 {
		t.Errorf("card balance = %v, want 25.0000", card.Balance)
	}
	if err := s.RecalculateBalance(ctx, uuid.New(), card.ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("other family: %v", err)
	}
}

func TestLatestTransactions(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	fam := l.f.Family.ID
	all, n, err := l.s.Transactions(ctx, fam, models.TransactionFilter{}, models.Page{Number: 1, Size: 100})
	must(t, err)
	tag := &models.Tag{FamilyID: fam, Name: "review", Color: "#000000"}
	must(t, l.s.CreateTag(ctx, tag))
	if _, err := l.s.BulkAddTags(ctx, fam, []uuid.UUID{all[0].ID, all[2].ID}, []uuid.UUID{tag.ID}); err != nil {
		t.Fatal(err)
	}
	// The ledger's rows share dates: the order falls back on created_at
	// and id, as the list's does. Its tombstone and the other family's
	// row are in neither.
	for _, size := range []int{1, 3, n - 1, n, n + 5} {
		want, _, err := l.s.Transactions(ctx, fam, models.TransactionFilter{}, models.Page{Number: 1, Size: size})
		must(t, err)
		got, err := l.s.LatestTransactions(ctx, fam, size)
		must(t, err)
		if len(got) != len(want) || len(got) != min(size, n) {
			t.Fatalf("size %d: got %d rows, want %d", size, len(got), len(want))
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.ID != w.ID || g.Account == nil || g.Account.ID != w.AccountID || len(g.Tags) != len(w.Tags) ||
				(g.Transfer == nil) != (w.Transfer == nil) || (g.Category == nil) != (w.Category == nil) {
				t.Errorf("size %d row %d: got %+v, want %+v", size, i, g, w)
			}
		}
	}
	if got, _ := l.s.LatestTransactions(ctx, fam, n); len(got[0].Tags) != 1 || got[0].Tags[0].ID != tag.ID {
		t.Errorf("newest row's tags %+v", got[0].Tags)
	}
	stranger := modelstest.NewFamily(t, l.s, "stranger")
	if got, err := l.s.LatestTransactions(ctx, stranger.Family.ID, 8); err != nil || len(got) != 0 {
		t.Errorf("a family without transactions: %d rows, %v", len(got), err)
	}
}

// TestCreateTransactionReplay checks that a create carrying a known
// idempotency key gets the first row back, whatever else it says.
func TestCreateTransactionReplay(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "replay")
	disabled := &models.Account{FamilyID: f.Family.ID, Name: "Old", AccountType: "depository", Currency: "USD"}
	if err := s.CreateAccount(ctx, disabled); err != nil {
		t.Fatal(err)
	}
	source := "api"
	first := map[uuid.UUID]*models.Transaction{}
	for _, acc := range []uuid.UUID{f.Account.ID, disabled.ID} {
		key := "first-" + acc.String()
		tx := &models.Transaction{FamilyID: f.Family.ID, AccountID: acc, Date: "2024-02-01", Amount: 1000, Currency: "USD",
			Name: "First", ExternalID: &key, Source: &source}
		row, created, err := s.CreateTransaction(ctx, tx, nil)
		if err != nil || !created || row != tx {
			t.Fatalf("first create: %v %v %v", row, created, err)
		}
		first[acc] = tx
	}
	if _, err := s.DB().NewUpdate().Model((*models.Account)(nil)).Set("status = ?", models.AccountDisabled).
		Where("id = ?", disabled.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name        string
		account     uuid.UUID
		key         string // "" for none
		category    *uuid.UUID
		wantCreated bool
		wantFirst   bool // the row is the first create's
		wantErr     bool // an *InvalidError
	}{
		{"a new key", f.Account.ID, "new", nil, true, false, false},
		{"no key", f.Account.ID, "", nil, true, false, false},
		{"the same key", f.Account.ID, "first-" + f.Account.ID.String(), nil, false, true, false},
		{"the same key, a category that is gone", f.Account.ID, "first-" + f.Account.ID.String(), ptrID(uuid.New()), false, true, false},
		{"the same key, the account since disabled", disabled.ID, "first-" + disabled.ID.String(), nil, false, true, false},
		{"a new key on a disabled account", disabled.ID, "other", nil, false, false, true},
		{"no key, a category that is gone", f.Account.ID, "", ptrID(uuid.New()), false, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tx := &models.Transaction{FamilyID: f.Family.ID, AccountID: tt.account, Date: "2024-03-01", Amount: 2000,
				Currency: "USD", Name: "Again", CategoryID: tt.category}
			if tt.key != "" {
				tx.ExternalID, tx.Source = &tt.key, &source
			}
			row, created, err := s.CreateTransaction(ctx, tx, nil)
			var inv *models.InvalidError
			if tt.wantErr != errors.As(err, &inv) || (err != nil && inv == nil) {
				t.Fatalf("err = %v, want invalid: %v", err, tt.wantErr)
			}
			if created != tt.wantCreated {
				t.Errorf("created = %v, want %v", created, tt.wantCreated)
			}
			switch {
			case tt.wantErr:
				if row != nil {
					t.Errorf("row = %+v on a refusal", row)
				}
			case tt.wantFirst:
				want := first[tt.account]
				if row.ID != want.ID || row.Amount != want.Amount || row.Name != want.Name || row.Account == nil {
					t.Errorf("row = %+v, want the first %+v", row, want)
				}
			default:
				if row.ID != tx.ID || row.Account == nil || row.Account.ID != tt.account {
					t.Errorf("row = %+v", row)
				}
			}
		})
	}
}

func ptrID(id uuid.UUID) *uuid.UUID { return &id }
