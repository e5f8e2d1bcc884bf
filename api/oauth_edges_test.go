package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"coffer/api"
)

// shortTokenEnv is an env whose access tokens live 2 s, on clocks (the
// app's and the store's) that the test moves forward with skew; alpha's
// user has the password "correct horse battery".
func shortTokenEnv(t *testing.T) (*env, *atomic.Int64) {
	t.Helper()
	skew := new(atomic.Int64)
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	e := newEnv(t, func(o *api.Options) {
		o.Clock = clock
		o.OAuth.AccessTokenTTL = 2 * time.Second
	})
	e.store.Now = func() time.Time { return clock().UTC() }
	setPassword(t, e, e.alpha.User, "correct horse battery")
	return e, skew
}

// TestExpiredAccessToken: an access token stops at its expiry, though the
// web process has it cached and the auth version has not moved. The
// clocks of the app and the store are moved; nothing sleeps.
func TestExpiredAccessToken(t *testing.T) {
	e, skew := shortTokenEnv(t)
	m := e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.alpha.User.Email, "password": "correct horse battery", "device": phone}).wantJSON(t, 200)
	if m["expires_in"] != float64(2) {
		t.Fatalf("expires_in %v", m["expires_in"])
	}
	access := m["access_token"].(string)
	wantBearer(t, access, 200, e) // read, then served from the cache
	ip := e.browser(t).ip

	// Past the expiry (fosite rounds it to the second), well within the
	// cache's own lifetime.
	skew.Store(int64(4 * time.Second))
	r := e.doBearer("GET", "/api/v1/accounts", access)
	if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("expired token: %d %s", r.status, r.header.Get("WWW-Authenticate"))
	}

	// The refresh token outlives it and brings a working one (timed by
	// fosite on the real clock, so the app's goes back to it).
	m = e.doFrom(ip, "POST", "/api/v1/auth/refresh", map[string]any{"refresh_token": m["refresh_token"], "device": phone}).wantJSON(t, 200)
	skew.Store(0)
	wantBearer(t, m["access_token"].(string), 200, e)
}

// TestRefreshTokenOfAnotherClient: a refresh token presented by another
// client than the one it was issued to is refused, and still works for
// its own client.
func TestRefreshTokenOfAnotherClient(t *testing.T) {
	e := newEnv(t, trustLoopback)
	base := e.listen()
	ctx := oauthClientCtx(t)
	setPassword(t, e, e.alpha.User, "correct horse battery")
	_, refresh := mobileLogin(t, e, e.alpha.User, "correct horse battery")
	other := registerClient(t, ctx, base, "http://127.0.0.1/callback")

	b := e.browser(t)
	r := b.send("POST", "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {other}}, nil)
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil || r.status != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("another client's refresh token: %d %s", r.status, r.body)
	}
	r = b.send("POST", "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {"coffer-mobile"}}, nil)
	if r.status != 200 {
		t.Fatalf("its own client, afterwards: %d %s", r.status, r.body)
	}
}

// TestRegistrationLimit: the 11th dynamic registration in an hour from
// one IP is 429 with Retry-After; another IP still registers.
func TestRegistrationLimit(t *testing.T) {
	e := newEnv(t)
	register := func(ip string) response {
		body, _ := json.Marshal(map[string]any{"client_name": "Limit", "redirect_uris": []string{"http://127.0.0.1/cb"}})
		req := httptest.NewRequest("POST", "/oauth/register", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", ip)
		resp, err := e.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return response{status: resp.StatusCode, header: resp.Header, body: out}
	}
	ip := e.browser(t).ip
	for i := 1; i <= 10; i++ {
		if r := register(ip); r.status != 201 {
			t.Fatalf("registration %d: %d %s", i, r.status, r.body)
		}
	}
	r := register(ip)
	if r.status != 429 || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), "rate_limited") {
		t.Fatalf("11th registration: %d %v %s", r.status, r.header, r.body)
	}
	if r := register(e.browser(t).ip); r.status != 201 {
		t.Fatalf("another IP: %d", r.status)
	}
}

// doFrom is do from the client address ip (X-Forwarded-For), for the
// endpoints limited per IP: each test counts on an address of its own,
// not on the one every do shares.
func (e *env) doFrom(ip, method, path string, body any) response {
	e.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			e.t.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", ip)
	resp, err := e.app.Test(req, -1)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, body: out}
	noLeak(e.t, r)
	e.validate(req, r)
	return r
}
