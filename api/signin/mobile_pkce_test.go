package signin_test

import (
	"coffer/api/apitest"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"coffer/api"
	"coffer/models"
)

// pkcePair is an app's PKCE verifier and its S256 challenge (RFC 7636).
func pkcePair(seed string) (verifier, challenge string) {
	verifier = base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat(seed, 40)[:40]))
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// pkceQuery is the app's start query with a challenge.
func pkceQuery(challenge, method string) string {
	q, _ := url.ParseQuery(apitest.MobileSSOQuery)
	q.Set("code_challenge", challenge)
	q.Set("code_challenge_method", method)
	return q.Encode()
}

// wantExchangeRefused posts body to the exchange from a fresh address and
// wants the ErrorResponse 401 with code.
func wantExchangeRefused(t *testing.T, e *apitest.Env, body map[string]any, code string) {
	t.Helper()
	m := e.DoFrom(e.Browser(t).IP, "POST", "/api/v1/auth/sso_exchange", body).WantJSON(t, 401)
	if m["error"] != code || m["message"] == "" {
		t.Fatalf("%v: %v, want %s", body, m, code)
	}
}

// TestMobileSSOPKCE: the app's single sign-on through the OIDC provider
// with a PKCE S256 challenge: the code is traded only with the verifier
// (a missing or wrong one is refused and leaves the code to the app),
// once, and not after its 5 minutes (the app's clock is moved; nothing
// sleeps). A malformed challenge or a plain method ends at the app.
func TestMobileSSOPKCE(t *testing.T) {
	skew := new(atomic.Int64)
	s := apitest.NewSSOEnv(t, models.StrategyOIDC, func(o *api.Options) {
		o.Clock = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	})
	if r := s.SSOLogin(s.Browser(t)); r.Status != 303 {
		t.Fatalf("web sign-in: %d %s", r.Status, r.Body)
	}
	pat := s.User(t, "pat@example.com")
	verifier, challenge := pkcePair("app-one")
	other, _ := pkcePair("another-app")

	q := s.MobileSSO(t, "/auth/mobile/corp?"+pkceQuery(challenge, "S256"))
	code := q.Get("code")
	if code == "" || q.Get("error") != "" {
		t.Fatalf("callback %v", q)
	}
	// Whoever read the callback but did not start the sign-in.
	wantExchangeRefused(t, s.Env, map[string]any{"code": code}, "invalid_code_verifier")
	wantExchangeRefused(t, s.Env, map[string]any{"code": code, "code_verifier": ""}, "invalid_code_verifier")
	wantExchangeRefused(t, s.Env, map[string]any{"code": code, "code_verifier": other}, "invalid_code_verifier")
	wantExchangeRefused(t, s.Env, map[string]any{"code": code, "code_verifier": challenge}, "invalid_code_verifier")
	wantExchangeRefused(t, s.Env, map[string]any{"code": code, "code_verifier": verifier + "!"}, "invalid_code_verifier")
	// The app itself.
	m := s.DoFrom(s.Browser(t).IP, "POST", "/api/v1/auth/sso_exchange", map[string]any{"code": code, "code_verifier": verifier}).WantJSON(t, 200)
	user, _ := m["user"].(map[string]any)
	if m["access_token"] == "" || user["id"] != pat.ID.String() {
		t.Fatalf("exchange: %v", m)
	}
	if r := s.DoBearer("GET", "/api/v1/accounts", m["access_token"].(string)); r.Status != 200 {
		t.Fatalf("bearer: %d", r.Status)
	}
	// Single use, the verifier notwithstanding.
	wantExchangeRefused(t, s.Env, map[string]any{"code": code, "code_verifier": verifier}, "invalid_or_expired_code")

	// Short-lived: past 5 minutes by the app's clock, though Redis still
	// has it; and refused for good once tried.
	code = s.MobileSSO(t, "/auth/mobile/corp?"+pkceQuery(challenge, "S256")).Get("code")
	skew.Store(int64(5*time.Minute + time.Second))
	wantExchangeRefused(t, s.Env, map[string]any{"code": code, "code_verifier": verifier}, "invalid_or_expired_code")
	skew.Store(0)
	wantExchangeRefused(t, s.Env, map[string]any{"code": code, "code_verifier": verifier}, "invalid_or_expired_code")
	// Just inside the 5 minutes it still works.
	code = s.MobileSSO(t, "/auth/mobile/corp?"+pkceQuery(challenge, "S256")).Get("code")
	skew.Store(int64(5*time.Minute - 5*time.Second))
	s.DoFrom(s.Browser(t).IP, "POST", "/api/v1/auth/sso_exchange", map[string]any{"code": code, "code_verifier": verifier}).WantJSON(t, 200)
	skew.Store(0)

	// A form post works as the JSON one does.
	code = s.MobileSSO(t, "/auth/mobile/corp?"+pkceQuery(challenge, "S256")).Get("code")
	b := s.Browser(t)
	if r := b.Send("POST", "/api/v1/auth/sso_exchange", url.Values{"code": {code}}, nil); r.Status != 401 || !strings.Contains(string(r.Body), "invalid_code_verifier") {
		t.Fatalf("form without verifier: %d %s", r.Status, r.Body)
	}
	if r := b.Send("POST", "/api/v1/auth/sso_exchange", url.Values{"code": {code}, "code_verifier": {verifier}}, nil); r.Status != 200 {
		t.Fatalf("form with verifier: %d %s", r.Status, r.Body)
	}

	// What the start refuses, at the app.
	for name, query := range map[string]string{
		"plain method":     pkceQuery(challenge, "plain"),
		"no method":        pkceQuery(challenge, ""),
		"short challenge":  pkceQuery(challenge[:42], "S256"),
		"padded challenge": pkceQuery(challenge[:42]+"=", "S256"),
		"method alone":     pkceQuery("", "S256"),
	} {
		q := apitest.AppCallback(t, s.Browser(t).Get("/auth/mobile/corp?"+query))
		if q.Get("code") != "" || q.Get("error") == "" || q.Get("message") == "" {
			t.Fatalf("%s: %v", name, q)
		}
	}
}

// TestMobileSSOPKCERequired: with MOBILE_SSO_PKCE=required (the
// service's default) a start without a challenge ends at the app with
// pkce_required and a message the app shows, and no code; with one, the
// sign-in goes through.
func TestMobileSSOPKCERequired(t *testing.T) {
	s := apitest.NewSSOEnv(t, models.StrategyOIDC, func(o *api.Options) { o.SSO.MobilePKCERequired = true })
	if r := s.SSOLogin(s.Browser(t)); r.Status != 303 {
		t.Fatalf("web sign-in: %d %s", r.Status, r.Body)
	}
	q := apitest.AppCallback(t, s.Browser(t).Get("/auth/mobile/corp?"+apitest.MobileSSOQuery))
	if q.Get("error") != "pkce_required" || q.Get("code") != "" || !strings.Contains(q.Get("message"), "code_challenge") {
		t.Fatalf("no challenge: %v", q)
	}
	verifier, challenge := pkcePair("required")
	code := s.MobileSSO(t, "/auth/mobile/corp?"+pkceQuery(challenge, "S256")).Get("code")
	wantExchangeRefused(t, s.Env, map[string]any{"code": code}, "invalid_code_verifier")
	s.DoFrom(s.Browser(t).IP, "POST", "/api/v1/auth/sso_exchange", map[string]any{"code": code, "code_verifier": verifier}).WantJSON(t, 200)
}

// TestMobileSSOSAMLPKCE: the same binding through a SAML provider: the
// challenge rides the SAML request kept in Redis across the IdP's
// cross-site POST.
func TestMobileSSOSAMLPKCE(t *testing.T) {
	s := apitest.NewSAMLEnv(t)
	b := s.Browser(t)
	path, fields := s.Respond(t, b, "corp")
	if r := apitest.ACS(b, path, fields); r.Status != 303 {
		t.Fatalf("web sign-in: %d %s", r.Status, r.Body)
	}
	verifier, challenge := pkcePair("saml-app")
	b = s.Browser(t)
	r := b.Get("/auth/mobile/corp?" + pkceQuery(challenge, "S256"))
	if r.Status != 302 || !strings.HasPrefix(r.Header.Get("Location"), s.IdP.SSOURL) {
		t.Fatalf("start: %d %s", r.Status, r.Header.Get("Location"))
	}
	action, fields, err := s.IdP.Login(r.Header.Get("Location"), "alice", "pw")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(action)
	code := apitest.AppCallback(t, apitest.ACS(b, u.Path, fields)).Get("code")
	if code == "" {
		t.Fatal("no code")
	}
	wantExchangeRefused(t, s.Env, map[string]any{"code": code}, "invalid_code_verifier")
	other, _ := pkcePair("intruder")
	wantExchangeRefused(t, s.Env, map[string]any{"code": code, "code_verifier": other}, "invalid_code_verifier")
	m := s.DoFrom(s.Browser(t).IP, "POST", "/api/v1/auth/sso_exchange", map[string]any{"code": code, "code_verifier": verifier}).WantJSON(t, 200)
	if user, _ := m["user"].(map[string]any); user["email"] != "alice@example.org" {
		t.Fatalf("exchange: %v", m)
	}
	wantExchangeRefused(t, s.Env, map[string]any{"code": code, "code_verifier": verifier}, "invalid_or_expired_code")
}
