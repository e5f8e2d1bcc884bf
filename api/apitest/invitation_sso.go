package apitest

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"coffer/models"
)

// Invite has alpha's admin invite email with role; it returns the link's
// path and the invitation.
func Invite(t *testing.T, e *Env, email, role string) (string, *models.Invitation) {
	t.Helper()
	inv, token, err := e.Store.CreateInvitation(t.Context(), e.Alpha.Family.ID, e.Alpha.User.ID, email, role)
	if err != nil {
		t.Fatal(err)
	}
	return "/invitations/" + token, inv
}

// ContinueWith opens the invitation at path in b and presses "Continue
// with" the provider name; it returns the answer to the press.
func ContinueWith(b *Browser, path, name string) Response {
	b.T.Helper()
	page := b.Get(path)
	if page.Status != 200 || !strings.Contains(string(page.Body), `action="`+path+`/sso/`+name+`"`) {
		b.T.Fatalf("invitation page without the %s button: %d %s", name, page.Status, page.Body)
	}
	return b.Post(path+"/sso/"+name, nil)
}

// StartJoin presses corp's button on the invitation and returns the
// callback the provider sends the browser back to.
func (s *SSOEnv) StartJoin(b *Browser, path string) *url.URL {
	b.T.Helper()
	r := ContinueWith(b, path, "corp")
	if r.Status != 302 {
		b.T.Fatalf("continue with corp: %d %s", r.Status, r.Body)
	}
	cb, err := s.IdP.Authorize(context.Background(), r.Header.Get("Location"))
	if err != nil {
		b.T.Fatal(err)
	}
	return cb
}

// Join follows the invitation through the provider in b and returns the
// callback's answer.
func (s *SSOEnv) Join(b *Browser, path string) Response {
	b.T.Helper()
	return b.Get(s.StartJoin(b, path).RequestURI())
}
