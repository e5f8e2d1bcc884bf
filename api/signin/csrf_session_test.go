package signin_test

import (
	"net/url"
	"testing"

	"coffer/api/apitest"
)

// TestCSRFBoundToSession: a form token works only in the session it was
// given in. One from before sign-in, or from another session (even with
// the CSRF cookie planted in this browser), is refused; sign-in replaces
// the CSRF cookie.
func TestCSRFBoundToSession(t *testing.T) {
	e := apitest.NewEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	b := e.Browser(t)
	if r := b.Get("/sessions/new"); r.Status != 200 || b.CSRF == "" {
		t.Fatalf("sign-in page: %d", r.Status)
	}
	before, cookieBefore := b.CSRF, b.Cookies["csrf"]
	if r := b.Post("/sessions", url.Values{"email": {e.Alpha.User.Email}, "password": {"correct horse battery"}}); r.Status != 303 {
		t.Fatalf("sign-in: %d %s", r.Status, r.Body)
	}
	if b.Cookies["csrf"] == "" || b.Cookies["csrf"] == cookieBefore {
		t.Errorf("CSRF cookie not replaced at sign-in: %q", b.Cookies["csrf"])
	}
	signedOut := func() bool { return b.Get("/settings/security").Status == 302 }
	// The token of the sign-in page, sent with the old cookie too.
	for _, cookie := range []string{cookieBefore, b.Cookies["csrf"]} {
		now := b.Cookies["csrf"]
		b.Cookies["csrf"] = cookie
		if r := b.Post("/sessions/logout", url.Values{"csrf_token": {before}}); r.Status != 403 {
			t.Errorf("pre-sign-in token: %d", r.Status)
		}
		b.Cookies["csrf"] = now
	}
	if signedOut() {
		t.Fatal("signed out by a pre-sign-in token")
	}

	// Another session's browser, given this browser's CSRF cookie (as a
	// sibling site could plant it), gets a token that is its own only.
	other := apitest.SignedInBrowser(t, e)
	other.Cookies["csrf"] = b.Cookies["csrf"]
	if r := other.Get("/settings/security"); r.Status != 200 {
		t.Fatalf("other session: %d", r.Status)
	}
	if r := b.Post("/sessions/logout", url.Values{"csrf_token": {other.CSRF}}); r.Status != 403 {
		t.Errorf("another session's token: %d", r.Status)
	}
	if signedOut() {
		t.Fatal("signed out by another session's token")
	}
	// The session's own token works.
	if r := b.Post("/sessions/logout", nil); r.Status != 303 && r.Status != 302 {
		t.Fatalf("own token: %d %s", r.Status, r.Body)
	}
	if !signedOut() {
		t.Error("still signed in")
	}
}
