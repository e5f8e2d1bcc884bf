package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"
)

// appTokens signs the mobile app in as the alpha user and returns its
// access and refresh tokens, checked to work.
func appTokens(t *testing.T, e *env, ip, password string) (access, refresh string) {
	t.Helper()
	r := e.doFrom(ip, "POST", "/api/v1/auth/login", map[string]any{"email": e.alpha.User.Email, "password": password, "device": phone})
	m := r.wantJSON(t, 200)
	access, refresh = m["access_token"].(string), m["refresh_token"].(string)
	if r := e.doBearer("GET", "/api/v1/accounts", access); r.status != 200 {
		t.Fatalf("the app's access token before the change: %d %s", r.status, r.body)
	}
	return access, refresh
}

// wantAppSignedOut: the old access token answers 401 and the old refresh
// token no longer rotates.
func wantAppSignedOut(t *testing.T, e *env, ip, access, refresh, when string) {
	t.Helper()
	if r := e.doBearer("GET", "/api/v1/accounts", access); r.status != 401 {
		t.Errorf("%s: the old access token answers %d, want 401", when, r.status)
	}
	if r := e.doFrom(ip, "POST", "/api/v1/auth/refresh", map[string]any{"refresh_token": refresh, "device": phone}); r.status != 401 {
		t.Errorf("%s: the old refresh token answers %d, want 401: %s", when, r.status, r.body)
	}
}

// TestPasswordChangeEndsAppTokens: changing the password (signed in) and
// resetting it (by the mailed link) each end the app's tokens; the change
// keeps the browser that made it and says so, and API keys keep working.
// On the old code the old access token still answered 200 and the old
// refresh token still rotated.
func TestPasswordChangeEndsAppTokens(t *testing.T) {
	e := newEnv(t)
	b := signedInBrowser(t, e)
	ip := e.browser(t).ip
	access, refresh := appTokens(t, e, ip, "correct horse battery")

	b.get("/settings/security")
	r := b.post("/settings/security/password", url.Values{"current_password": {"correct horse battery"}, "new_password": {"a brand new password"}})
	if r.status != 303 {
		t.Fatalf("change: %d %s", r.status, r.body)
	}
	page := b.get("/settings/security")
	if page.status != 200 || !strings.Contains(string(page.body), "This browser stays signed in") || !strings.Contains(string(page.body), "API keys keep working") {
		t.Fatalf("the screen after the change does not say what it kept: %d %s", page.status, page.body)
	}
	wantAppSignedOut(t, e, ip, access, refresh, "after a change")
	if r := e.do("GET", "/api/v1/accounts", e.alpha.Key, nil); r.status != 200 {
		t.Errorf("the API key after a change: %d", r.status)
	}

	// A reset by the mailed link ends them too.
	access, refresh = appTokens(t, e, ip, "a brand new password")
	raw := "reset-token-" + e.alpha.User.ID.String()
	sum := sha256.Sum256([]byte(raw))
	if err := e.rdb.Set(t.Context(), "pwreset:"+hex.EncodeToString(sum[:]), e.alpha.User.ID.String(), time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	o := e.browser(t)
	if r := o.get("/password/reset?token=" + raw); r.status != 200 {
		t.Fatalf("reset form: %d", r.status)
	}
	if r := o.post("/password/reset", url.Values{"token": {raw}, "password": {"a third good password"}}); r.status != 303 {
		t.Fatalf("reset: %d %s", r.status, r.body)
	}
	wantAppSignedOut(t, e, ip, access, refresh, "after a reset")
}
