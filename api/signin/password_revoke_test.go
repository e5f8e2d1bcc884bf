package signin_test

import (
	"coffer/api/apitest"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"
)

// appTokens signs the mobile app in as the alpha user and returns its
// access and refresh tokens, checked to work.
func appTokens(t *testing.T, e *apitest.Env, ip, password string) (access, refresh string) {
	t.Helper()
	r := e.DoFrom(ip, "POST", "/api/v1/auth/login", map[string]any{"email": e.Alpha.User.Email, "password": password, "device": apitest.Phone})
	m := r.WantJSON(t, 200)
	access, refresh = m["access_token"].(string), m["refresh_token"].(string)
	if r := e.DoBearer("GET", "/api/v1/accounts", access); r.Status != 200 {
		t.Fatalf("the app's access token before the change: %d %s", r.Status, r.Body)
	}
	return access, refresh
}

// wantAppSignedOut: the old access token answers 401 and the old refresh
// token no longer rotates.
func wantAppSignedOut(t *testing.T, e *apitest.Env, ip, access, refresh, when string) {
	t.Helper()
	if r := e.DoBearer("GET", "/api/v1/accounts", access); r.Status != 401 {
		t.Errorf("%s: the old access token answers %d, want 401", when, r.Status)
	}
	if r := e.DoFrom(ip, "POST", "/api/v1/auth/refresh", map[string]any{"refresh_token": refresh, "device": apitest.Phone}); r.Status != 401 {
		t.Errorf("%s: the old refresh token answers %d, want 401: %s", when, r.Status, r.Body)
	}
}

// TestPasswordChangeEndsAppTokens: changing the password (signed in) and
// resetting it (by the mailed link) each end the app's tokens; the change
// keeps the browser that made it and says so, and API keys keep working.
// On the old code the old access token still answered 200 and the old
// refresh token still rotated.
func TestPasswordChangeEndsAppTokens(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ip := e.Browser(t).IP
	access, refresh := appTokens(t, e, ip, "correct horse battery")

	b.Get("/settings/security")
	r := b.Post("/settings/security/password", url.Values{"current_password": {"correct horse battery"}, "new_password": {"a brand new password"}})
	if r.Status != 303 {
		t.Fatalf("change: %d %s", r.Status, r.Body)
	}
	page := b.Get("/settings/security")
	if page.Status != 200 || !strings.Contains(string(page.Body), "This browser stays signed in") || !strings.Contains(string(page.Body), "API keys keep working") {
		t.Fatalf("the screen after the change does not say what it kept: %d %s", page.Status, page.Body)
	}
	wantAppSignedOut(t, e, ip, access, refresh, "after a change")
	if r := e.Do("GET", "/api/v1/accounts", e.Alpha.Key, nil); r.Status != 200 {
		t.Errorf("the API key after a change: %d", r.Status)
	}

	// A reset by the mailed link ends them too.
	access, refresh = appTokens(t, e, ip, "a brand new password")
	raw := "reset-token-" + e.Alpha.User.ID.String()
	sum := sha256.Sum256([]byte(raw))
	if err := e.RDB.Set(t.Context(), "pwreset:"+hex.EncodeToString(sum[:]), e.Alpha.User.ID.String(), time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	o := e.Browser(t)
	if r := o.Get("/password/reset?token=" + raw); r.Status != 200 {
		t.Fatalf("reset form: %d", r.Status)
	}
	if r := o.Post("/password/reset", url.Values{"token": {raw}, "password": {"a third good password"}}); r.Status != 303 {
		t.Fatalf("reset: %d %s", r.Status, r.Body)
	}
	wantAppSignedOut(t, e, ip, access, refresh, "after a reset")
}
