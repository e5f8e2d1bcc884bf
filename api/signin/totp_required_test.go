package signin_test

import (
	"net/url"
	"strings"
	"testing"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/sso/ssotest"
)

// An admin requires a second factor for the family on /settings/family:
// a member without one is sent to set it up right after the password,
// with no session until the first code confirms it; the app is refused
// until then.
func TestTOTPRequiredByFamily(t *testing.T) {
	e, skew := totpEnv(t)
	ctx := t.Context()
	admin := apitest.SignedInBrowser(t, e)
	if page := string(admin.Get("/settings/family").Body); !strings.Contains(page, `name="require_second_factor"`) {
		t.Fatalf("family screen: %s", page)
	}
	if r := admin.Post("/settings/family/second_factor", url.Values{"require_second_factor": {"on"}}); r.Status != 303 {
		t.Fatalf("require: %d %s", r.Status, r.Body)
	}
	if f, _ := e.Store.Family(ctx, e.Alpha.Family.ID); !f.RequireSecondFactor {
		t.Fatal("requirement not saved")
	}
	member := &models.User{FamilyID: e.Alpha.Family.ID, Email: "member-2fa@example.com", Role: models.RoleMember}
	if err := e.Store.CreateUser(ctx, member); err != nil {
		t.Fatal(err)
	}
	apitest.SetPassword(t, e, member, totpPassword)

	// The app is refused for the member until they set it up on the web.
	ip := e.Browser(t).IP
	r := e.DoFrom(ip, "POST", "/api/v1/auth/login", map[string]any{"email": member.Email, "password": totpPassword, "device": apitest.Phone})
	if m := r.WantJSON(t, 403); !strings.Contains(m["error"].(string), "requires two-step verification") {
		t.Fatalf("app before setup: %v", m)
	}

	b := e.Browser(t)
	r = b.Login(member.Email, totpPassword)
	if r.Status != 303 || r.Header.Get("Location") != "/sessions/two_factor/setup" || b.Cookies["session"] != "" {
		t.Fatalf("password step: %d %s", r.Status, r.Header.Get("Location"))
	}
	if r := b.Get("/settings/api_keys"); r.Status != 302 {
		t.Fatalf("signed in before setup: %d", r.Status)
	}
	if r := b.Post("/settings/family/second_factor", url.Values{}); r.Status == 303 {
		t.Fatal("changed the rule without a session")
	}
	if r := b.Get("/sessions/two_factor"); r.Status != 302 || r.Header.Get("Location") != "/sessions/two_factor/setup" {
		t.Fatalf("code step before setup: %d %s", r.Status, r.Header.Get("Location"))
	}
	secret, sealed := setup(t, b.Get("/sessions/two_factor/setup"))
	if r := b.Post("/sessions/two_factor/setup", url.Values{"totp_enrol": {sealed}, "code": {"123456"}}); r.Status != 422 || b.Cookies["session"] != "" {
		t.Fatalf("wrong first code: %d", r.Status)
	}
	r = b.Post("/sessions/two_factor/setup", url.Values{"totp_enrol": {sealed}, "code": {code(t, secret, now(skew))}})
	if r.Status != 200 || len(recoveryRe.FindAllString(string(r.Body), -1)) != 10 || b.Cookies["session"] == "" ||
		!strings.Contains(string(r.Body), `href="/settings/api_keys"`) {
		t.Fatalf("setup: %d %s", r.Status, r.Body)
	}
	if r := b.Get("/settings/api_keys"); r.Status != 200 {
		t.Fatalf("signed in after setup: %d", r.Status)
	}
	if n := len(auditMeta(t, e, models.EventSecondFactorEnabled)); n != 1 {
		t.Fatalf("second_factor_enabled: %d", n)
	}
	// The next sign-in asks for a code, and the app answers mfa_required.
	passwordStep(t, e, member.Email)
	r = e.DoFrom(ip, "POST", "/api/v1/auth/login", map[string]any{"email": member.Email, "password": totpPassword, "device": apitest.Phone})
	if m := r.WantJSON(t, 401); m["mfa_required"] != true {
		t.Fatalf("app after setup: %v", m)
	}

	// Turned off, a member without a second factor signs in with the password alone.
	admin.Get("/settings/family")
	if r := admin.Post("/settings/family/second_factor", url.Values{}); r.Status != 303 {
		t.Fatalf("unrequire: %d", r.Status)
	}
	if r := e.Browser(t).Login(e.Alpha.User.Email, totpPassword); r.Status != 303 || r.Header.Get("Location") != "/settings/api_keys" {
		t.Fatalf("after the rule is off: %d %s", r.Status, r.Header.Get("Location"))
	}
}

// Single sign-on leaves the second step to the identity provider: a
// person with an authenticator app, in a family that requires one, signs
// in through it without being asked for a code.
func TestTOTPNotAskedOnSSO(t *testing.T) {
	s := apitest.NewSSOEnv(t, models.StrategyOIDC)
	ctx := t.Context()
	u := &models.User{FamilyID: s.Alpha.Family.ID, Email: "sso-2fa@example.com", Role: models.RoleMember}
	if err := s.Store.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	apitest.SetPassword(t, s.Env, u, totpPassword)
	if err := s.Store.CreateIdentity(ctx, &models.SSOIdentity{FamilyID: u.FamilyID, UserID: u.ID, ProviderID: s.Prov.ID, Subject: "sso-2fa-sub", Issuer: apitest.Ptr(s.IdP.Issuer)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Store.EnableTOTP(ctx, u, "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP", 0, nil, &models.AuditLog{EventType: models.EventSecondFactorEnabled, UserID: &u.ID}); err != nil {
		t.Fatal(err)
	}
	if err := s.Store.SetRequireSecondFactor(ctx, s.Alpha.Family.ID, true); err != nil {
		t.Fatal(err)
	}
	idp := ssotest.DefaultUser()
	idp.Subject, idp.Email = "sso-2fa-sub", u.Email
	s.IdP.SetUser(idp)
	b := s.Browser(t)
	if r := s.SSOLogin(b); r.Status != 303 || r.Header.Get("Location") != "/settings/security" || b.Cookies["session"] == "" {
		t.Fatalf("sso sign-in: %d %s", r.Status, r.Header.Get("Location"))
	}
	if r := b.Get("/settings/security"); r.Status != 200 {
		t.Fatalf("signed in: %d", r.Status)
	}
	// The same person's password sign-in asks for the code.
	if r := s.Browser(t).Login(u.Email, totpPassword); r.Status != 303 || r.Header.Get("Location") != "/sessions/two_factor" {
		t.Fatalf("password sign-in: %d %s", r.Status, r.Header.Get("Location"))
	}
}

// A person joining by invitation a family that requires a second factor
// sets one up before their first session.
func TestTOTPRequiredAtInvitation(t *testing.T) {
	e, skew := totpEnv(t)
	if err := e.Store.SetRequireSecondFactor(t.Context(), e.Alpha.Family.ID, true); err != nil {
		t.Fatal(err)
	}
	path, _ := apitest.Invite(t, e, "invited-2fa@example.com", models.RoleMember)
	b := e.Browser(t)
	b.Get(path)
	r := b.Post(path, url.Values{"password": {totpPassword}, "password_confirmation": {totpPassword}})
	if r.Status != 303 || r.Header.Get("Location") != "/sessions/two_factor/setup" || b.Cookies["session"] != "" {
		t.Fatalf("join: %d %s %s", r.Status, r.Header.Get("Location"), r.Body)
	}
	secret, sealed := setup(t, b.Get("/sessions/two_factor/setup"))
	r = b.Post("/sessions/two_factor/setup", url.Values{"totp_enrol": {sealed}, "code": {code(t, secret, now(skew))}})
	if r.Status != 200 || b.Cookies["session"] == "" {
		t.Fatalf("setup: %d %s", r.Status, r.Body)
	}
	if r := b.Get("/"); r.Status != 200 {
		t.Fatalf("signed in: %d", r.Status)
	}
}
