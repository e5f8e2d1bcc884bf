package e2e_test

import (
	"context"
	"strings"
	"testing"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/sso/ssotest"
)

// dexProvider stores a provider named name for dex, of strategy.
func dexProvider(t *testing.T, e *apitest.Env, dex *ssotest.Dex, name, strategy string, mappings ...models.GroupMapping) *models.SSOProvider {
	t.Helper()
	p := &models.SSOProvider{Name: name, Strategy: strategy, Label: "Dex " + name, Enabled: true, ClientID: apitest.Ptr(dex.ClientID),
		Scopes: apitest.Ptr("openid email profile groups"), DefaultRole: models.RoleMember, GroupMappings: mappings}
	if strategy == models.StrategyOIDC {
		p.Issuer, p.TokenAuthMethod = apitest.Ptr(dex.Issuer), apitest.Ptr(models.AuthBasic)
	} else {
		p.AuthorizationURL, p.TokenURL, p.UserinfoURL = apitest.Ptr(dex.AuthURL), apitest.Ptr(dex.TokenURL), apitest.Ptr(dex.UserinfoURL)
		p.TokenAuthMethod = apitest.Ptr(models.AuthPost)
	}
	models.NewProviderID(p)
	if err := e.Store.SetProviderSecret(p, models.ColClientSecret, dex.ClientSecret); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.CreateSSOProvider(context.Background(), p, models.ProviderChange{ActorID: e.Alpha.User.ID}); err != nil {
		t.Fatal(err)
	}
	if err := e.RDB.Incr(context.Background(), "sso:providers:version").Err(); err != nil {
		t.Fatal(err)
	}
	return p
}

// dexLogin signs b in at provider name through Dex's own login form.
func dexLogin(t *testing.T, b *apitest.Browser, dex *ssotest.Dex, name, user, password string) apitest.Response {
	t.Helper()
	r := b.Get("/auth/" + name)
	if r.Status != 302 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	cb, err := dex.Login(context.Background(), r.Header.Get("Location"), user, password)
	if err != nil {
		t.Fatalf("Dex login: %v\n%s", err, dex.Log())
	}
	return b.Get(cb.RequestURI())
}

// TestDexSignIn signs in against the real Dex, through its login form:
// OIDC with groups mapped to roles, the generic OAuth 2.0 strategy, and an
// unverified email.
func TestDexSignIn(t *testing.T) {
	ctx := context.Background()
	e := apitest.NewEnv(t)
	dex := ssotest.StartDex(t, ssotest.DexOptions{RedirectURIs: []string{
		"http://example.com/auth/dex/callback", "http://example.com/auth/dexoauth/callback"}})
	dexProvider(t, e, dex, "dex", models.StrategyOIDC, models.GroupMapping{Group: "admins", Role: models.RoleSuperAdmin})
	dexProvider(t, e, dex, "dexoauth", models.StrategyOAuth)

	// alice is in "admins": her new account is mapped to super_admin.
	if r := dexLogin(t, e.Browser(t), dex, "dex", "alice@example.com", "alice-password"); r.Status != 303 {
		t.Fatalf("alice: %d %s", r.Status, r.Body)
	}
	alice, err := e.Store.UserByEmail(ctx, "alice@example.com")
	if err != nil || alice.Role != models.RoleSuperAdmin {
		t.Fatalf("alice = %+v, %v", alice, err)
	}
	// bob has no mapped group: the default role, but he is his new
	// family's only admin, so the guard keeps him admin.
	if r := dexLogin(t, e.Browser(t), dex, "dex", "bob@example.com", "bob-password"); r.Status != 303 {
		t.Fatalf("bob: %d %s", r.Status, r.Body)
	}
	bob, _ := e.Store.UserByEmail(ctx, "bob@example.com")
	if bob.Role != models.RoleAdmin {
		t.Fatalf("bob = %s", bob.Role)
	}
	logs, _, _ := e.Store.AuditLogs(ctx, models.AuditFilter{EventType: models.EventLogin}, models.Page{Number: 1, Size: 5})
	if len(logs) == 0 || logs[0].Metadata["role_guard"] != models.GuardLastFamilyAdmin {
		t.Fatalf("bob's login record = %+v", logs[0].Metadata)
	}
	// eve's email is not verified at Dex: nothing is created.
	r := dexLogin(t, e.Browser(t), dex, "dex", "eve@example.com", "eve-password")
	if r.Status != 403 || !strings.Contains(string(r.Body), "has not confirmed your email address") {
		t.Fatalf("eve: %d %s", r.Status, r.Body)
	}
	if _, err := e.Store.UserByEmail(ctx, "eve@example.com"); err == nil {
		t.Fatal("an account was made for an unverified email")
	}

	// The generic OAuth 2.0 strategy against the same Dex: alice's email
	// is verified, but she already has an account, so Dex does not sign
	// her in to it silently: she is asked to prove it is hers.
	b := e.Browser(t)
	if r := dexLogin(t, b, dex, "dexoauth", "alice@example.com", "alice-password"); r.Status != 303 || r.Header.Get("Location") != "/auth/link" {
		t.Fatalf("oauth2 alice: %d %s", r.Status, r.Header.Get("Location"))
	}
	if page := b.Get("/auth/link"); !strings.Contains(string(page.Body), "Sign in with a method already connected to this account") {
		t.Fatalf("link page for a password-less user: %s", page.Body)
	}
}
