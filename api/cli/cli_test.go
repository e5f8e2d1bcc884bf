package cli_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"

	"coffer/api/cli"
	"coffer/jobs"
	"coffer/models"
	"coffer/models/modelstest"
	"coffer/models/secret"
)

// admin parses and runs one command on s, as main does, and returns what
// it printed.
func admin(t *testing.T, s *models.Store, stdin string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	o := &cli.Options{Stdin: strings.NewReader(stdin), Stdout: &out, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	o.Retention, _ = jobs.RetentionTier("standard")
	o.ArchiveDir = t.TempDir()
	cmd, err := cli.Parse(args, o)
	if err != nil {
		return out.String(), err
	}
	err = cmd(context.Background(), s)
	return out.String(), err
}

func TestHelpRunsNothing(t *testing.T) {
	for _, args := range [][]string{
		{"users", "create", "--help"}, {"users", "set-role", "-h"}, {"users", "set-password", "--help"},
		{"families", "list", "--help"}, {"apikeys", "create", "--help"}, {"audit", "archive", "--help"},
		{"secrets", "backfill", "--help"}, {"balances", "check", "--help"}, {"sums", "check", "--help"}, {"users"}, {"apikeys"}, {"users", "--help"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			// A nil store: anything that ran would panic.
			out, err := admin(t, nil, "", args...)
			if !errors.Is(err, flag.ErrHelp) || !strings.Contains(out, "coffer "+args[0]) {
				t.Errorf("err %v, printed %q", err, out)
			}
		})
	}
	if out, _ := admin(t, nil, "", "users"); !strings.Contains(out, "users create") || !strings.Contains(out, "users set-password") {
		t.Errorf("coffer users lists %q", out)
	}
}

func TestBadArguments(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"users", "frob"}, "unknown command"},
		{[]string{"users", "create", "--email", "nobody", "--password", "correct horse battery"}, "--email must be an email address"},
		{[]string{"users", "create", "--email", "a@example.com", "--role", "king"}, "--role must be"},
		{[]string{"users", "create", "--email", "a@example.com", "--currency", "XYZ"}, "--currency must be an ISO 4217 code"},
		{[]string{"users", "create", "--email", "a@example.com", "--family-id", "12"}, "--family-id must be a UUID"},
		{[]string{"users", "create", "--email", "a@example.com", "--family", "x", "--family-id", "7f5c2b4e-8d3e-4c3a-9b1a-2f6c1d9e0a11"}, "cannot both be given"},
		{[]string{"users", "create", "--email", "a@example.com", "--password", "short"}, "must be 12 to"},
		{[]string{"users", "create", "--email", "a@example.com", "extra"}, "unexpected argument"},
		{[]string{"users", "create", "--nope"}, "flag provided but not defined"},
		{[]string{"users", "set-role", "--email", "a@example.com", "--role", "king"}, "--role must be"},
		{[]string{"apikeys", "create"}, "--email is required"},
		{[]string{"apikeys", "create", "--email", "a@example.com", "--scope", "all"}, "--scope must be"},
		{[]string{"apikeys", "create", "--email", "a@example.com", "--expires-in", "-1h"}, "--expires-in must be positive"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			if _, err := admin(t, nil, "", tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestUsersAndKeys(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	const pw = "correct horse battery"
	out, err := admin(t, s, pw+"\n", "users", "create", "--email", "ann@example.com", "--role", "super_admin", "--family", "Smith")
	if err != nil {
		t.Fatal(err)
	}
	ann, err := s.UserByEmail(ctx, "ann@example.com")
	if err != nil || strings.TrimSpace(out) != ann.ID.String() || ann.Role != models.RoleSuperAdmin {
		t.Fatalf("created %+v, %v; printed %q", ann, err, out)
	}
	if ok, _, _ := secret.CheckPassword(*ann.PasswordHash, pw, secret.DefaultArgon2); !ok {
		t.Error("the password read from stdin was not stored")
	}

	_, err = admin(t, s, "", "users", "create", "--email", "bob@example.com", "--password", pw, "--family", "SMITH")
	if err == nil || !strings.Contains(err.Error(), "--family-id "+ann.FamilyID.String()) {
		t.Errorf("a second family named Smith: %v", err)
	}
	if _, err := admin(t, s, "", "users", "create", "--email", "bob@example.com", "--password", pw, "--family-id", ann.FamilyID.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := admin(t, s, "", "users", "create", "--email", "BOB@example.com", "--password", pw); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("a second bob: %v", err)
	}
	if out, err := admin(t, s, "", "families", "list"); err != nil || !strings.Contains(out, ann.FamilyID.String()+"\tSmith\t2 members\tUSD") {
		t.Errorf("families list: %q, %v", out, err)
	}

	if out, err := admin(t, s, "", "users", "set-role", "--email", "bob@example.com", "--role", "admin"); err != nil || !strings.Contains(out, "is now admin") {
		t.Errorf("set-role: %q, %v", out, err)
	}
	if _, err := admin(t, s, "", "users", "set-role", "--email", "ann@example.com", "--role", "member"); err == nil {
		t.Error("the last super admin was demoted")
	}
	if _, err := admin(t, s, "", "users", "set-password", "--email", "nobody@example.com", "--password", pw); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("set-password of nobody: %v", err)
	}
	if _, err := admin(t, s, "another long password\n", "users", "set-password", "--email", "bob@example.com"); err != nil {
		t.Fatal(err)
	}
	bob, _ := s.UserByEmail(ctx, "bob@example.com")
	if ok, _, _ := secret.CheckPassword(*bob.PasswordHash, "another long password", secret.DefaultArgon2); !ok || bob.Role != models.RoleAdmin {
		t.Errorf("bob after set-role and set-password: %+v", bob)
	}

	out, err = admin(t, s, "", "apikeys", "create", "--email", "bob@example.com", "--scope", "read", "--expires-in", "24h")
	key := strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
	if err != nil || !strings.HasPrefix(key, "cof_") {
		t.Fatalf("apikeys create: %q, %v", out, err)
	}
	k, err := s.APIKeyBySecret(ctx, key)
	if err != nil || k.UserID != bob.ID || k.Scope != models.ScopeRead || k.ExpiresAt == nil {
		t.Errorf("the printed key: %+v %v", k, err)
	}
	if _, err := admin(t, s, "", "apikeys", "create", "--email", "nobody@example.com"); err == nil || !strings.Contains(err.Error(), "no user with email") {
		t.Errorf("key for nobody: %v", err)
	}
}

func TestMaintenance(t *testing.T) {
	s := modelstest.NewStore(t)
	if out, err := admin(t, s, "", "secrets", "backfill", "--dry-run"); err != nil || !strings.Contains(out, "dry run: true") {
		t.Errorf("secrets backfill: %q, %v", out, err)
	}
	if out, err := admin(t, s, "", "audit", "archive"); err != nil || !strings.Contains(out, "audit retention (standard): 0 records") {
		t.Errorf("audit archive: %q, %v", out, err)
	}
}

// TestBalancesCheck: a balance written wrong behind the store's back is
// reported (and the command fails) until --fix rewrites it.
func TestBalancesCheck(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "drift")
	if out, err := admin(t, s, "", "balances", "check"); err != nil || !strings.Contains(out, "every account agrees") {
		t.Fatalf("clean: %q, %v", out, err)
	}
	if _, err := s.DB().NewRaw("UPDATE accounts SET balance = balance + 10000 WHERE id = ?", f.Account.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	line := "account " + f.Account.ID.String() + " balance on "
	out, err := admin(t, s, "", "balances", "check")
	if !errors.Is(err, cli.ErrBalanceDrift) || !strings.Contains(out, line) || !strings.Contains(out, "stored 1.0000, computed 0.0000") {
		t.Fatalf("drift: %q, %v", out, err)
	}
	if out, err := admin(t, s, "", "balances", "check", "--fix"); err != nil || !strings.Contains(out, "1 differences in 1 accounts, fixed") {
		t.Fatalf("fix: %q, %v", out, err)
	}
	if out, err := admin(t, s, "", "balances", "check"); err != nil || !strings.Contains(out, "every account agrees") {
		t.Fatalf("after the fix: %q, %v", out, err)
	}
}

// TestSumsCheck: a kept sum written wrong behind the store's back is
// reported (and the command fails) until --fix rebuilds the family's sums.
func TestSumsCheck(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "sums-drift")
	if _, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: "2024-05-02",
		Amount: 12_5000, Currency: "USD", Name: "Groceries"}, nil); err != nil {
		t.Fatal(err)
	}
	if out, err := admin(t, s, "", "sums", "check"); err != nil || !strings.Contains(out, "every family's kept sums agree") {
		t.Fatalf("clean: %q, %v", out, err)
	}
	if _, err := s.DB().NewRaw("UPDATE transaction_sums SET amount = amount + 1 WHERE family_id = ? AND grain = 'm'", f.Family.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := admin(t, s, "", "sums", "check")
	if !errors.Is(err, cli.ErrSumsDrift) || !strings.Contains(out, "family "+f.Family.ID.String()) || !strings.Contains(out, "1 differences in 1 families") {
		t.Fatalf("drift: %q, %v", out, err)
	}
	if out, err := admin(t, s, "", "sums", "check", "--fix"); err != nil || !strings.Contains(out, "1 differences in 1 families, rebuilt") {
		t.Fatalf("fix: %q, %v", out, err)
	}
	if out, err := admin(t, s, "", "sums", "check"); err != nil || !strings.Contains(out, "every family's kept sums agree") {
		t.Fatalf("after the fix: %q, %v", out, err)
	}
}
