package signin_test

import (
	"errors"
	"strings"
	"testing"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/models"
)

func signupClosed(o *api.Options) { o.Web.SignupEnabled = false }

// TestSSOSignupClosed: with AUTH_SIGNUP_ENABLED=false single sign-on
// creates no new family, over OIDC and SAML; an invitation still admits,
// and a known account still signs in.
func TestSSOSignupClosed(t *testing.T) {
	t.Run("oidc", func(t *testing.T) {
		s := apitest.NewSSOEnv(t, models.StrategyOIDC, signupClosed)
		s.Refused(t, "sign-up is closed here", "jit_disabled")
		if _, err := s.Store.UserByEmail(t.Context(), "pat@example.com"); !errors.Is(err, models.ErrNotFound) {
			t.Fatalf("a user was made: %v", err)
		}
		// The invitation admits into alpha's family.
		path, _ := apitest.Invite(t, s.Env, "pat@example.com", models.RoleMember)
		if r := s.Join(s.Browser(t), path); r.Status != 303 {
			t.Fatalf("join: %d %s", r.Status, r.Body)
		}
		if u := s.User(t, "pat@example.com"); u.FamilyID != s.Alpha.Family.ID {
			t.Fatalf("joined user %+v", u)
		}
		// Then signs in as any known account does.
		if r := s.SSOLogin(s.Browser(t)); r.Status != 303 {
			t.Fatalf("later sign-in: %d %s", r.Status, r.Body)
		}
	})
	t.Run("saml", func(t *testing.T) {
		s := apitest.NewSAMLEnvWith(t, signupClosed)
		b := s.Browser(t)
		path, fields := s.Respond(t, b, "corp")
		if r := apitest.ACS(b, path, fields); r.Status != 403 || !strings.Contains(string(r.Body), "sign-up is closed here") {
			t.Fatalf("ACS: %d %s", r.Status, r.Body)
		}
		if _, err := s.Store.UserByEmail(t.Context(), "alice@example.org"); !errors.Is(err, models.ErrNotFound) {
			t.Fatalf("a user was made: %v", err)
		}
	})
	t.Run("open", func(t *testing.T) {
		s := apitest.NewSAMLEnv(t)
		b := s.Browser(t)
		path, fields := s.Respond(t, b, "corp")
		if r := apitest.ACS(b, path, fields); r.Status != 303 {
			t.Fatalf("ACS with sign-up open: %d %s", r.Status, r.Body)
		}
	})
}
