package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"coffer/models"
	"coffer/sso/ssotest"
)

// mobileSSOQuery is what the app appends to /auth/mobile/<provider>
// (mobile/lib/services/auth_service.dart, buildSsoUrl).
var mobileSSOQuery = url.Values{"device_id": {"4f1c"}, "device_name": {"Ana's phone"}, "device_type": {"ios"},
	"os_version": {"18.1"}, "app_version": {"1.4.0"}}.Encode()

// mobileSSO walks the app's sign-in through the in-process provider and
// returns the query of the app callback the browser is sent to.
func (s *ssoEnv) mobileSSO(t *testing.T, path string) url.Values {
	t.Helper()
	b := s.browser(t)
	cb := s.startSSO(b, path)
	r := b.get(cb.RequestURI())
	return appCallback(t, r)
}

func appCallback(t *testing.T, r response) url.Values {
	t.Helper()
	loc := r.header.Get("Location")
	if r.status != 302 || !strings.HasPrefix(loc, "sureapp://oauth/callback?") {
		t.Fatalf("not sent to the app: %d %q %s", r.status, loc, r.body)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// TestMobileSSO: the app's single sign-on, from GET /auth/mobile/corp to
// the tokens of POST /api/v1/auth/sso_exchange, and what it refuses.
func TestMobileSSO(t *testing.T) {
	s := newSSOEnv(t, models.StrategyOIDC)
	ctx := t.Context()
	// The identity is linked on the web first (here by a just-in-time
	// account).
	if r := s.ssoLogin(s.browser(t)); r.status != 303 {
		t.Fatalf("web sign-in: %d %s", r.status, r.body)
	}
	pat := s.user(t, "pat@example.com")
	ip := s.browser(t).ip // the app's address, counted by the token endpoints' limit
	logins := auditCount(t, s.env, models.EventLogin, "")

	q := s.mobileSSO(t, "/auth/mobile/corp?"+mobileSSOQuery)
	code := q.Get("code")
	if code == "" || q.Get("error") != "" {
		t.Fatalf("callback %v", q)
	}
	if n := auditCount(t, s.env, models.EventLogin, ""); n != logins+1 {
		t.Fatalf("login records %d, want %d", n, logins+1)
	}
	// Kept hashed and short-lived.
	if n, _ := s.rdb.Exists(ctx, "mobile_sso:"+code).Result(); n != 0 {
		t.Fatal("the code is stored in clear")
	}
	sum := sha256.Sum256([]byte(code))
	if ttl, _ := s.rdb.TTL(ctx, "mobile_sso:"+hex.EncodeToString(sum[:])).Result(); ttl <= 0 || ttl > 5*time.Minute {
		t.Fatalf("code TTL %v", ttl)
	}

	m := s.doFrom(ip, "POST", "/api/v1/auth/sso_exchange", map[string]any{"code": code}).wantJSON(t, 200)
	user, _ := m["user"].(map[string]any)
	if m["token_type"] != "Bearer" || m["access_token"] == "" || m["refresh_token"] == "" || user["email"] != pat.Email || user["id"] != pat.ID.String() {
		t.Fatalf("exchange: %v", m)
	}
	if r := s.doBearer("GET", "/api/v1/accounts", m["access_token"].(string)); r.status != 200 {
		t.Fatalf("bearer: %d", r.status)
	}
	r := s.doFrom(ip, "POST", "/api/v1/auth/refresh", map[string]any{"refresh_token": m["refresh_token"], "device": phone})
	r.wantJSON(t, 200)

	// Single use; unknown and missing codes alike.
	for _, body := range []any{map[string]any{"code": code}, map[string]any{"code": "nope"}, map[string]any{}, "not json",
		map[string]any{"code": strings.Repeat("x", 500)}} {
		m := s.doFrom(ip, "POST", "/api/v1/auth/sso_exchange", body).wantJSON(t, 401)
		if m["error"] != "invalid_or_expired_code" || m["message"] == "" {
			t.Fatalf("%v: %v", body, m)
		}
	}
	// Expired: Redis forgets it.
	q = s.mobileSSO(t, "/auth/mobile/corp?"+mobileSSOQuery)
	sum = sha256.Sum256([]byte(q.Get("code")))
	if err := s.rdb.Del(ctx, "mobile_sso:"+hex.EncodeToString(sum[:])).Err(); err != nil {
		t.Fatal(err)
	}
	s.doFrom(ip, "POST", "/api/v1/auth/sso_exchange", map[string]any{"code": q.Get("code")}).wantJSON(t, 401)

	// Suspended between the sign-in and the exchange.
	q = s.mobileSSO(t, "/auth/mobile/corp?"+mobileSSOQuery)
	if err := s.store.SuspendUser(ctx, models.AdminChange{ActorRole: models.RoleSuperAdmin, TargetID: pat.ID}); err != nil {
		t.Fatal(err)
	}
	s.doFrom(ip, "POST", "/api/v1/auth/sso_exchange", map[string]any{"code": q.Get("code")}).wantJSON(t, 401)
	// And a suspended user's sign-in ends at the app with an error.
	if q := s.mobileSSO(t, "/auth/mobile/corp?"+mobileSSOQuery); q.Get("error") != "suspended" || q.Get("code") != "" || q.Get("message") == "" {
		t.Fatalf("suspended: %v", q)
	}

	// Cancelled at the provider: the app hears it, not a web page.
	s.idp.SetBehaviour(ssotest.Behaviour{AuthorizeError: "access_denied"})
	if q := s.mobileSSO(t, "/auth/mobile/corp?"+mobileSSOQuery); q.Get("error") != "idp_error" || q.Get("code") != "" || q.Get("message") == "" {
		t.Fatalf("cancelled: %v", q)
	}
	s.idp.SetBehaviour(ssotest.Behaviour{})

	// An identity linked to no account: refused at the app, nothing made.
	s.idp.SetUser(ssotest.User{Subject: "user-2", Email: "kim@example.com", EmailVerified: true, GivenName: "Kim"})
	if q := s.mobileSSO(t, "/auth/mobile/corp?"+mobileSSOQuery); q.Get("error") != "account_not_linked" || q.Get("code") != "" {
		t.Fatalf("unlinked: %v", q)
	}
	if _, err := s.store.UserByEmail(ctx, "kim@example.com"); err != models.ErrNotFound {
		t.Fatalf("an account was made: %v", err)
	}

	// What the start refuses.
	b := s.browser(t)
	if r := b.get("/auth/mobile/corp?" + mobileSSOQuery + "&redirect_uri=" + url.QueryEscape("https://evil.example/cb")); r.status != 400 || r.header.Get("Location") != "" {
		t.Fatalf("foreign redirect_uri: %d %s", r.status, r.header.Get("Location"))
	}
	if r := b.get("/auth/mobile/corp?" + mobileSSOQuery + "&redirect_uri=" + url.QueryEscape("sureapp://oauth/callback")); r.status != 302 ||
		strings.HasPrefix(r.header.Get("Location"), "sureapp:") {
		t.Fatalf("the app's own redirect_uri: %d %s", r.status, r.header.Get("Location"))
	}
	if q := appCallback(t, b.get("/auth/mobile/nope?"+mobileSSOQuery)); q.Get("error") != "invalid_provider" {
		t.Fatalf("unknown provider: %v", q)
	}
	if q := appCallback(t, b.get("/auth/mobile/corp?device_id=x")); q.Get("error") != "missing_device_info" {
		t.Fatalf("no device: %v", q)
	}
}
