package screens_test

import (
	"net/url"
	"testing"

	"coffer/api/apitest"
)

// TestScreenSafetyHeaders: every screen answer (a page, a redirect, an
// error page, a page for a signed-in user) carries nosniff and
// Referrer-Policy: same-origin. The old code sent neither.
func TestScreenSafetyHeaders(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	anon := e.Browser(t)
	for _, c := range []struct {
		what string
		r    apitest.Response
	}{
		{"sign-in page", anon.Get("/sessions/new")},
		{"redirect to sign-in", anon.Get("/settings/security")},
		{"error page", anon.Get("/invitations/made-up-token")},
		{"not found", anon.Get("/no-such-screen")},
		{"signed-in page", b.Get("/settings/security")},
		{"forbidden screen", b.Get("/admin/sso_providers")},
		{"oauth error page", b.Get("/oauth/authorize?client_id=cofc_unknown&response_type=code")},
		{"form refused for its CSRF token", b.Send("POST", "/sessions/logout", url.Values{"csrf_token": {"forged"}}, nil)},
		{"api", e.Do("GET", "/api/v1/accounts", e.Alpha.Key, nil)},
	} {
		if got := c.r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s (%d): X-Content-Type-Options %q", c.what, c.r.Status, got)
		}
		if got := c.r.Header.Get("Referrer-Policy"); got != "same-origin" {
			t.Errorf("%s (%d): Referrer-Policy %q", c.what, c.r.Status, got)
		}
	}
}
