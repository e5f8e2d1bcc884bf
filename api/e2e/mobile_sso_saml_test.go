package e2e_test

import (
	"strings"
	"testing"

	"coffer/api/apitest"
	"coffer/models"
)

// TestMobileSSOSAML: the app's single sign-on through a SAML provider,
// from GET /auth/mobile/corp through the IdP's cross-site POST to the ACS
// to the app callback's one-time code and its exchange for tokens; a
// replayed response sends no code, and an identity linked to no account
// is refused at the app.
func TestMobileSSOSAML(t *testing.T) {
	s := apitest.NewSAMLEnv(t)
	ctx := t.Context()
	// The identity is linked on the web first (a just-in-time account).
	b := s.Browser(t)
	path, fields := s.Respond(t, b, "corp")
	if r := apitest.ACS(b, path, fields); r.Status != 303 {
		t.Fatalf("web sign-in: %d %s", r.Status, r.Body)
	}
	alice, err := s.Store.UserByEmail(ctx, "alice@example.org")
	if err != nil {
		t.Fatal(err)
	}
	ip := s.Browser(t).IP
	logins := apitest.AuditCount(t, s.Env, models.EventLogin, "")

	b = s.Browser(t)
	path, fields = s.MobileSAML(t, b, "alice", "pw")
	if path != "/auth/saml/"+s.Prov.ID.String()+"/callback" {
		t.Fatalf("IdP posts to %s", path)
	}
	q := apitest.AppCallback(t, apitest.ACS(b, path, fields))
	code := q.Get("code")
	if code == "" || q.Get("error") != "" {
		t.Fatalf("callback %v", q)
	}
	if n := apitest.AuditCount(t, s.Env, models.EventLogin, ""); n != logins+1 {
		t.Fatalf("login records %d, want %d", n, logins+1)
	}
	m := s.DoFrom(ip, "POST", "/api/v1/auth/sso_exchange", map[string]any{"code": code}).WantJSON(t, 200)
	user, _ := m["user"].(map[string]any)
	if m["token_type"] != "Bearer" || m["access_token"] == "" || m["refresh_token"] == "" || user["id"] != alice.ID.String() {
		t.Fatalf("exchange: %v", m)
	}
	if r := s.DoBearer("GET", "/api/v1/accounts", m["access_token"].(string)); r.Status != 200 {
		t.Fatalf("bearer: %d", r.Status)
	}
	if m := s.DoFrom(ip, "POST", "/api/v1/auth/sso_exchange", map[string]any{"code": code}).WantJSON(t, 401); m["error"] != "invalid_or_expired_code" {
		t.Fatalf("second exchange: %v", m)
	}

	// The same response posted again: its request is used up, no code.
	if r := apitest.ACS(b, path, fields); r.Status != 400 || strings.HasPrefix(r.Header.Get("Location"), "sureapp:") {
		t.Fatalf("replay: %d %s", r.Status, r.Header.Get("Location"))
	}

	// An identity of the IdP linked to no account: refused at the app,
	// nothing made.
	s.IdP.AddUser("bob", "pw", "bob@example.org", "staff")
	b = s.Browser(t)
	path, fields = s.MobileSAML(t, b, "bob", "pw")
	if q := apitest.AppCallback(t, apitest.ACS(b, path, fields)); q.Get("error") != "account_not_linked" || q.Get("code") != "" || q.Get("message") == "" {
		t.Fatalf("unlinked: %v", q)
	}
	if _, err := s.Store.UserByEmail(ctx, "bob@example.org"); err != models.ErrNotFound {
		t.Fatalf("an account was made: %v", err)
	}
}
