package signin_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"coffer/api/apitest"
)

// TestExpiredAccessToken: an access token stops at its expiry, though the
// web process has it cached and the auth version has not moved. The
// clocks of the app and the store are moved; nothing sleeps.
func TestExpiredAccessToken(t *testing.T) {
	e, skew := apitest.ShortTokenEnv(t)
	m := e.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.Alpha.User.Email, "password": "correct horse battery", "device": apitest.Phone}).WantJSON(t, 200)
	if m["expires_in"] != float64(2) {
		t.Fatalf("expires_in %v", m["expires_in"])
	}
	access := m["access_token"].(string)
	wantBearer(t, access, 200, e) // read, then served from the cache
	ip := e.Browser(t).IP

	// Past the expiry (fosite rounds it to the second), well within the
	// cache's own lifetime.
	skew.Store(int64(4 * time.Second))
	r := e.DoBearer("GET", "/api/v1/accounts", access)
	if r.Status != 401 || !strings.Contains(r.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("expired token: %d %s", r.Status, r.Header.Get("WWW-Authenticate"))
	}

	// The refresh token outlives it and brings a working one (timed by
	// fosite on the real clock, so the app's goes back to it).
	m = e.DoFrom(ip, "POST", "/api/v1/auth/refresh", map[string]any{"refresh_token": m["refresh_token"], "device": apitest.Phone}).WantJSON(t, 200)
	skew.Store(0)
	wantBearer(t, m["access_token"].(string), 200, e)
}

// TestRefreshTokenOfAnotherClient: a refresh token presented by another
// client than the one it was issued to is refused, and still works for
// its own client.
func TestRefreshTokenOfAnotherClient(t *testing.T) {
	e := apitest.NewEnv(t, apitest.TrustLoopback)
	base := e.Listen()
	ctx := apitest.OAuthClientCtx(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	_, refresh := apitest.MobileLogin(t, e, e.Alpha.User, "correct horse battery")
	other := apitest.RegisterClient(t, ctx, base, "http://127.0.0.1/callback")

	b := e.Browser(t)
	r := b.Send("POST", "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {other}}, nil)
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil || r.Status != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("another client's refresh token: %d %s", r.Status, r.Body)
	}
	r = b.Send("POST", "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {"coffer-mobile"}}, nil)
	if r.Status != 200 {
		t.Fatalf("its own client, afterwards: %d %s", r.Status, r.Body)
	}
}

// TestRegistrationLimit: the 11th dynamic registration in an hour from
// one IP is 429 with Retry-After; another IP still registers.
func TestRegistrationLimit(t *testing.T) {
	e := apitest.NewEnv(t)
	register := func(ip string) apitest.Response {
		body, _ := json.Marshal(map[string]any{"client_name": "Limit", "redirect_uris": []string{"http://127.0.0.1/cb"}})
		req := httptest.NewRequest("POST", "/oauth/register", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", ip)
		resp, err := e.App.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return apitest.Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
	}
	ip := e.Browser(t).IP
	for i := 1; i <= 10; i++ {
		if r := register(ip); r.Status != 201 {
			t.Fatalf("registration %d: %d %s", i, r.Status, r.Body)
		}
	}
	r := register(ip)
	if r.Status != 429 || r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), "rate_limited") {
		t.Fatalf("11th registration: %d %v %s", r.Status, r.Header, r.Body)
	}
	if r := register(e.Browser(t).IP); r.Status != 201 {
		t.Fatalf("another IP: %d", r.Status)
	}
}
