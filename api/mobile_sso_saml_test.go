package api_test

import (
	"net/url"
	"strings"
	"testing"

	"coffer/models"
)

// mobileSAML starts the app's sign-in at /auth/mobile/corp in b, signs
// user in at the IdP and returns the ACS path and the form the IdP posts.
func (s *samlEnv) mobileSAML(t *testing.T, b *browser, user, password string) (string, url.Values) {
	t.Helper()
	r := b.get("/auth/mobile/corp?" + mobileSSOQuery)
	if r.status != 302 || !strings.HasPrefix(r.header.Get("Location"), s.idp.SSOURL) {
		t.Fatalf("start: %d %s", r.status, r.header.Get("Location"))
	}
	action, fields, err := s.idp.Login(r.header.Get("Location"), user, password)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(action)
	return u.Path, fields
}

// TestMobileSSOSAML: the app's single sign-on through a SAML provider,
// from GET /auth/mobile/corp through the IdP's cross-site POST to the ACS
// to the app callback's one-time code and its exchange for tokens; a
// replayed response sends no code, and an identity linked to no account
// is refused at the app.
func TestMobileSSOSAML(t *testing.T) {
	s := newSAMLEnv(t)
	ctx := t.Context()
	// The identity is linked on the web first (a just-in-time account).
	b := s.browser(t)
	path, fields := s.respond(t, b, "corp")
	if r := acs(b, path, fields); r.status != 303 {
		t.Fatalf("web sign-in: %d %s", r.status, r.body)
	}
	alice, err := s.store.UserByEmail(ctx, "alice@example.org")
	if err != nil {
		t.Fatal(err)
	}
	ip := s.browser(t).ip
	logins := auditCount(t, s.env, models.EventLogin, "")

	b = s.browser(t)
	path, fields = s.mobileSAML(t, b, "alice", "pw")
	if path != "/auth/saml/"+s.prov.ID.String()+"/callback" {
		t.Fatalf("IdP posts to %s", path)
	}
	q := appCallback(t, acs(b, path, fields))
	code := q.Get("code")
	if code == "" || q.Get("error") != "" {
		t.Fatalf("callback %v", q)
	}
	if n := auditCount(t, s.env, models.EventLogin, ""); n != logins+1 {
		t.Fatalf("login records %d, want %d", n, logins+1)
	}
	m := s.doFrom(ip, "POST", "/api/v1/auth/sso_exchange", map[string]any{"code": code}).wantJSON(t, 200)
	user, _ := m["user"].(map[string]any)
	if m["token_type"] != "Bearer" || m["access_token"] == "" || m["refresh_token"] == "" || user["id"] != alice.ID.String() {
		t.Fatalf("exchange: %v", m)
	}
	if r := s.doBearer("GET", "/api/v1/accounts", m["access_token"].(string)); r.status != 200 {
		t.Fatalf("bearer: %d", r.status)
	}
	if m := s.doFrom(ip, "POST", "/api/v1/auth/sso_exchange", map[string]any{"code": code}).wantJSON(t, 401); m["error"] != "invalid_or_expired_code" {
		t.Fatalf("second exchange: %v", m)
	}

	// The same response posted again: its request is used up, no code.
	if r := acs(b, path, fields); r.status != 400 || strings.HasPrefix(r.header.Get("Location"), "sureapp:") {
		t.Fatalf("replay: %d %s", r.status, r.header.Get("Location"))
	}

	// An identity of the IdP linked to no account: refused at the app,
	// nothing made.
	s.idp.AddUser("bob", "pw", "bob@example.org", "staff")
	b = s.browser(t)
	path, fields = s.mobileSAML(t, b, "bob", "pw")
	if q := appCallback(t, acs(b, path, fields)); q.Get("error") != "account_not_linked" || q.Get("code") != "" || q.Get("message") == "" {
		t.Fatalf("unlinked: %v", q)
	}
	if _, err := s.store.UserByEmail(ctx, "bob@example.org"); err != models.ErrNotFound {
		t.Fatalf("an account was made: %v", err)
	}
}
