package apitest

import (
	"testing"
)

// SignedInBrowser is a browser signed in as the alpha family's admin.
func SignedInBrowser(t *testing.T, e *Env) *Browser {
	t.Helper()
	SetPassword(t, e, e.Alpha.User, "correct horse battery")
	b := e.Browser(t)
	if r := b.Login(e.Alpha.User.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("login: %d %s", r.Status, r.Body)
	}
	return b
}
