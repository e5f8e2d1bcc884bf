package models_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/modelstest"
)

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
