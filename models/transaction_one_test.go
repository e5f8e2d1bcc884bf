package models_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// TestLoneCreateRatesCheck: after a lone create, the write hook's rates
// check answers as its query would: no rates missing for an account in
// the family's currency (which the create's own statement tells, on
// PostgreSQL), missing for an account in another currency never fetched.
func TestLoneCreateRatesCheck(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "lone-rates")
	eur := &models.Account{FamilyID: f.Family.ID, Name: "Euro savings", AccountType: "depository", Currency: "EUR"}
	if err := s.CreateAccount(ctx, eur); err != nil {
		t.Fatal(err)
	}
	var missing []bool
	s.OnBalanceChange(func(ctx context.Context, familyID uuid.UUID, ids []uuid.UUID) {
		m, err := s.RatesMissing(ctx, familyID, ids)
		if err != nil {
			t.Error(err)
		}
		missing = append(missing, m)
	})
	for i, c := range []struct {
		account uuid.UUID
		ext     string
		want    bool
	}{{f.Account.ID, "", false}, {eur.ID, "", true}, {f.Account.ID, "k1", false}, {eur.ID, "k2", true}} {
		missing = nil
		// Each its own movement: a keyed row like an unkeyed one would
		// arrive as it (see matchArrivals).
		tx := &models.Transaction{FamilyID: f.Family.ID, AccountID: c.account, Date: "2024-01-01",
			Amount: money.Amount(100 * (i + 1)), Currency: "USD", Name: "x " + c.ext}
		if c.ext != "" {
			tx.ExternalID = &c.ext
		}
		if _, created, err := s.CreateTransaction(ctx, tx, nil); err != nil || !created {
			t.Fatalf("create: %v, %v", created, err)
		}
		if len(missing) != 1 || missing[0] != c.want {
			t.Errorf("account %s, key %q: rates missing %v, want [%v]", c.account, c.ext, missing, c.want)
		}
	}
}
