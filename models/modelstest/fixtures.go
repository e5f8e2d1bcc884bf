package modelstest

import (
	"context"
	"testing"

	"coffer/models"
)

// FamilyFixture is a family with an admin, a read-write API key for that
// admin and one active USD checking account.
type FamilyFixture struct {
	Family  *models.Family
	User    *models.User
	Key     string // the admin's read_write key, in clear
	ReadKey string // a read-only key of the same user
	Account *models.Account
}

// NewFamily builds a named family fixture in s.
func NewFamily(t testing.TB, s *models.Store, name string) *FamilyFixture {
	t.Helper()
	ctx := context.Background()
	f := &FamilyFixture{Family: &models.Family{Name: name, Currency: "USD"}}
	must(t, s.CreateFamily(ctx, f.Family))
	f.User = &models.User{FamilyID: f.Family.ID, Email: name + "-" + randomHex(4) + "@example.com", Role: models.RoleAdmin}
	must(t, s.CreateUser(ctx, f.User))
	var err error
	f.Key, err = s.CreateAPIKey(ctx, f.Family.ID, &models.APIKey{UserID: f.User.ID, Name: "test", Scope: models.ScopeReadWrite})
	must(t, err)
	f.ReadKey, err = s.CreateAPIKey(ctx, f.Family.ID, &models.APIKey{UserID: f.User.ID, Name: "read", Scope: models.ScopeRead})
	must(t, err)
	f.Account = &models.Account{FamilyID: f.Family.ID, Name: "Checking", AccountType: "depository", Currency: "USD"}
	must(t, s.CreateAccount(ctx, f.Account))
	return f
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("modelstest: fixture: %v", err)
	}
}
