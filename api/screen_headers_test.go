package api_test

import "testing"

// TestScreenSafetyHeaders: every screen answer (a page, a redirect, an
// error page, a page for a signed-in user) carries nosniff and
// Referrer-Policy: same-origin. The old code sent neither.
func TestScreenSafetyHeaders(t *testing.T) {
	e := newEnv(t)
	b := signedInBrowser(t, e)
	anon := e.browser(t)
	for _, c := range []struct {
		what string
		r    response
	}{
		{"sign-in page", anon.get("/sessions/new")},
		{"redirect to sign-in", anon.get("/settings/security")},
		{"error page", anon.get("/invitations/made-up-token")},
		{"not found", anon.get("/no-such-screen")},
		{"signed-in page", b.get("/settings/security")},
		{"api", e.do("GET", "/api/v1/accounts", e.alpha.Key, nil)},
	} {
		if got := c.r.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s (%d): X-Content-Type-Options %q", c.what, c.r.status, got)
		}
		if got := c.r.header.Get("Referrer-Policy"); got != "same-origin" {
			t.Errorf("%s (%d): Referrer-Policy %q", c.what, c.r.status, got)
		}
	}
}
