package apitest

import (
	"net/url"
	"strings"
	"testing"
)

// MobileSAML starts the app's sign-in at /auth/mobile/corp in b, signs
// user in at the IdP and returns the ACS path and the form the IdP posts.
func (s *samlEnv) MobileSAML(t *testing.T, b *Browser, user, password string) (string, url.Values) {
	t.Helper()
	r := b.Get("/auth/mobile/corp?" + MobileSSOQuery)
	if r.Status != 302 || !strings.HasPrefix(r.Header.Get("Location"), s.IdP.SSOURL) {
		t.Fatalf("start: %d %s", r.Status, r.Header.Get("Location"))
	}
	action, fields, err := s.IdP.Login(r.Header.Get("Location"), user, password)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(action)
	return u.Path, fields
}
