package apitest

import (
	"net/url"
	"strings"
	"testing"
)

// MobileSSOQuery is what the app appends to /auth/mobile/<provider>
// (mobile/lib/services/auth_service.dart, buildSsoUrl).
var MobileSSOQuery = url.Values{"device_id": {"4f1c"}, "device_name": {"Ana's phone"}, "device_type": {"ios"},
	"os_version": {"18.1"}, "app_version": {"1.4.0"}}.Encode()

// MobileSSO walks the app's sign-in through the in-process provider and
// returns the query of the app callback the browser is sent to.
func (s *SSOEnv) MobileSSO(t *testing.T, path string) url.Values {
	t.Helper()
	b := s.Browser(t)
	cb := s.StartSSO(b, path)
	r := b.Get(cb.RequestURI())
	return AppCallback(t, r)
}

func AppCallback(t *testing.T, r Response) url.Values {
	t.Helper()
	loc := r.Header.Get("Location")
	if r.Status != 302 || !strings.HasPrefix(loc, "sureapp://oauth/callback?") {
		t.Fatalf("not sent to the app: %d %q %s", r.Status, loc, r.Body)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}
