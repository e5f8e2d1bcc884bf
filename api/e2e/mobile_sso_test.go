package e2e_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/sso/ssotest"
)

// TestMobileSSO: the app's single sign-on, from GET /auth/mobile/corp to
// the tokens of POST /api/v1/auth/sso_exchange, and what it refuses.
func TestMobileSSO(t *testing.T) {
	s := apitest.NewSSOEnv(t, models.StrategyOIDC)
	ctx := t.Context()
	// The identity is linked on the web first (here by a just-in-time
	// account).
	if r := s.SSOLogin(s.Browser(t)); r.Status != 303 {
		t.Fatalf("web sign-in: %d %s", r.Status, r.Body)
	}
	pat := s.User(t, "pat@example.com")
	ip := s.Browser(t).IP // the app's address, counted by the token endpoints' limit
	logins := apitest.AuditCount(t, s.Env, models.EventLogin, "")

	q := s.MobileSSO(t, "/auth/mobile/corp?"+apitest.MobileSSOQuery)
	code := q.Get("code")
	if code == "" || q.Get("error") != "" {
		t.Fatalf("callback %v", q)
	}
	if n := apitest.AuditCount(t, s.Env, models.EventLogin, ""); n != logins+1 {
		t.Fatalf("login records %d, want %d", n, logins+1)
	}
	// Kept hashed and short-lived.
	if n, _ := s.RDB.Exists(ctx, "mobile_sso:"+code).Result(); n != 0 {
		t.Fatal("the code is stored in clear")
	}
	sum := sha256.Sum256([]byte(code))
	if ttl, _ := s.RDB.TTL(ctx, "mobile_sso:"+hex.EncodeToString(sum[:])).Result(); ttl <= 0 || ttl > 5*time.Minute {
		t.Fatalf("code TTL %v", ttl)
	}

	m := s.DoFrom(ip, "POST", "/api/v1/auth/sso_exchange", map[string]any{"code": code}).WantJSON(t, 200)
	user, _ := m["user"].(map[string]any)
	if m["token_type"] != "Bearer" || m["access_token"] == "" || m["refresh_token"] == "" || user["email"] != pat.Email || user["id"] != pat.ID.String() {
		t.Fatalf("exchange: %v", m)
	}
	if r := s.DoBearer("GET", "/api/v1/accounts", m["access_token"].(string)); r.Status != 200 {
		t.Fatalf("bearer: %d", r.Status)
	}
	r := s.DoFrom(ip, "POST", "/api/v1/auth/refresh", map[string]any{"refresh_token": m["refresh_token"], "device": apitest.Phone})
	r.WantJSON(t, 200)

	// Single use; unknown and missing codes alike.
	for _, body := range []any{map[string]any{"code": code}, map[string]any{"code": "nope"}, map[string]any{}, "not json",
		map[string]any{"code": strings.Repeat("x", 500)}} {
		m := s.DoFrom(ip, "POST", "/api/v1/auth/sso_exchange", body).WantJSON(t, 401)
		if m["error"] != "invalid_or_expired_code" || m["message"] == "" {
			t.Fatalf("%v: %v", body, m)
		}
	}
	// Expired: Redis forgets it.
	q = s.MobileSSO(t, "/auth/mobile/corp?"+apitest.MobileSSOQuery)
	sum = sha256.Sum256([]byte(q.Get("code")))
	if err := s.RDB.Del(ctx, "mobile_sso:"+hex.EncodeToString(sum[:])).Err(); err != nil {
		t.Fatal(err)
	}
	s.DoFrom(ip, "POST", "/api/v1/auth/sso_exchange", map[string]any{"code": q.Get("code")}).WantJSON(t, 401)

	// Suspended between the sign-in and the exchange.
	q = s.MobileSSO(t, "/auth/mobile/corp?"+apitest.MobileSSOQuery)
	if err := s.Store.SuspendUser(ctx, models.AdminChange{ActorRole: models.RoleSuperAdmin, TargetID: pat.ID}); err != nil {
		t.Fatal(err)
	}
	s.DoFrom(ip, "POST", "/api/v1/auth/sso_exchange", map[string]any{"code": q.Get("code")}).WantJSON(t, 401)
	// And a suspended user's sign-in ends at the app with an error.
	if q := s.MobileSSO(t, "/auth/mobile/corp?"+apitest.MobileSSOQuery); q.Get("error") != "suspended" || q.Get("code") != "" || q.Get("message") == "" {
		t.Fatalf("suspended: %v", q)
	}

	// Cancelled at the provider: the app hears it, not a web page.
	s.IdP.SetBehaviour(ssotest.Behaviour{AuthorizeError: "access_denied"})
	if q := s.MobileSSO(t, "/auth/mobile/corp?"+apitest.MobileSSOQuery); q.Get("error") != "idp_error" || q.Get("code") != "" || q.Get("message") == "" {
		t.Fatalf("cancelled: %v", q)
	}
	s.IdP.SetBehaviour(ssotest.Behaviour{})

	// An identity linked to no account: refused at the app, nothing made.
	s.IdP.SetUser(ssotest.User{Subject: "user-2", Email: "kim@example.com", EmailVerified: true, GivenName: "Kim"})
	if q := s.MobileSSO(t, "/auth/mobile/corp?"+apitest.MobileSSOQuery); q.Get("error") != "account_not_linked" || q.Get("code") != "" {
		t.Fatalf("unlinked: %v", q)
	}
	if _, err := s.Store.UserByEmail(ctx, "kim@example.com"); err != models.ErrNotFound {
		t.Fatalf("an account was made: %v", err)
	}

	// What the start refuses.
	b := s.Browser(t)
	if r := b.Get("/auth/mobile/corp?" + apitest.MobileSSOQuery + "&redirect_uri=" + url.QueryEscape("https://evil.example/cb")); r.Status != 400 || r.Header.Get("Location") != "" {
		t.Fatalf("foreign redirect_uri: %d %s", r.Status, r.Header.Get("Location"))
	}
	if r := b.Get("/auth/mobile/corp?" + apitest.MobileSSOQuery + "&redirect_uri=" + url.QueryEscape("sureapp://oauth/callback")); r.Status != 302 ||
		strings.HasPrefix(r.Header.Get("Location"), "sureapp:") {
		t.Fatalf("the app's own redirect_uri: %d %s", r.Status, r.Header.Get("Location"))
	}
	if q := apitest.AppCallback(t, b.Get("/auth/mobile/nope?"+apitest.MobileSSOQuery)); q.Get("error") != "invalid_provider" {
		t.Fatalf("unknown provider: %v", q)
	}
	if q := apitest.AppCallback(t, b.Get("/auth/mobile/corp?device_id=x")); q.Get("error") != "missing_device_info" {
		t.Fatalf("no device: %v", q)
	}
}
