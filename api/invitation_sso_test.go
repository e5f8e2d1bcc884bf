package api_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"coffer/api"
	"coffer/models"
	"coffer/sso/ssotest"
)

// invite has alpha's admin invite email with role; it returns the link's
// path and the invitation.
func invite(t *testing.T, e *env, email, role string) (string, *models.Invitation) {
	t.Helper()
	inv, token, err := e.store.CreateInvitation(t.Context(), e.alpha.Family.ID, e.alpha.User.ID, email, role)
	if err != nil {
		t.Fatal(err)
	}
	return "/invitations/" + token, inv
}

// continueWith opens the invitation at path in b and presses "Continue
// with" the provider name; it returns the answer to the press.
func continueWith(b *browser, path, name string) response {
	b.t.Helper()
	page := b.get(path)
	if page.status != 200 || !strings.Contains(string(page.body), `action="`+path+`/sso/`+name+`"`) {
		b.t.Fatalf("invitation page without the %s button: %d %s", name, page.status, page.body)
	}
	return b.post(path+"/sso/"+name, nil)
}

// startJoin presses corp's button on the invitation and returns the
// callback the provider sends the browser back to.
func (s *ssoEnv) startJoin(b *browser, path string) *url.URL {
	b.t.Helper()
	r := continueWith(b, path, "corp")
	if r.status != 302 {
		b.t.Fatalf("continue with corp: %d %s", r.status, r.body)
	}
	cb, err := s.idp.Authorize(context.Background(), r.header.Get("Location"))
	if err != nil {
		b.t.Fatal(err)
	}
	return cb
}

// join follows the invitation through the provider in b and returns the
// callback's answer.
func (s *ssoEnv) join(b *browser, path string) response {
	b.t.Helper()
	return b.get(s.startJoin(b, path).RequestURI())
}

// invitationState is the invitation, and why it cannot be used (nil
// while open).
func invitationState(t *testing.T, e *env, inv *models.Invitation) (*models.Invitation, error) {
	t.Helper()
	got, err := e.store.Invitation(t.Context(), inv.FamilyID, inv.ID)
	if err != nil && !errors.Is(err, models.ErrInvitationUsed) && !errors.Is(err, models.ErrInvitationExpired) && !errors.Is(err, models.ErrInvitationRevoked) {
		t.Fatal(err)
	}
	return got, err
}

func TestJoinByInvitationOIDC(t *testing.T) {
	s := newSSOEnv(t, models.StrategyOIDC)
	path, inv := invite(t, s.env, "Pat@Example.com", models.RoleMember) // the IdP says pat@example.com
	b := s.browser(t)
	if r := b.get(path); !strings.Contains(string(r.body), "Continue with Corp SSO") || !strings.Contains(string(r.body), `name="password"`) {
		t.Fatalf("invitation page: %s", r.body)
	}
	r := s.join(b, path)
	if r.status != 303 || r.header.Get("Location") != "/" {
		t.Fatalf("callback: %d %s %s", r.status, r.header.Get("Location"), r.body)
	}
	if home := b.get("/"); home.status != 200 || !strings.Contains(string(home.body), "Welcome! You have joined the household.") {
		t.Fatalf("after the join: %d", home.status)
	}
	if accounts := b.get("/accounts"); accounts.status != 200 || !strings.Contains(string(accounts.body), "Checking") {
		t.Fatalf("the new member sees the family's accounts: %d", accounts.status)
	}
	u := s.user(t, "pat@example.com")
	if u.FamilyID != s.alpha.Family.ID || u.Role != models.RoleMember || u.PasswordHash != nil || models.Str(u.FirstName) != "Pat" {
		t.Fatalf("joined user %+v", u)
	}
	if got, err := invitationState(t, s.env, inv); !errors.Is(err, models.ErrInvitationUsed) || *got.AcceptedUserID != u.ID {
		t.Fatalf("invitation after the join: %v %+v", err, got)
	}
	logs, _, err := s.store.AuditLogs(t.Context(), models.AuditFilter{EventType: models.EventJITCreated}, models.Page{Number: 1, Size: 5})
	if err != nil || len(logs) != 1 || logs[0].Metadata["invitation_id"] != inv.ID.String() ||
		logs[0].Metadata["family_id"] != s.alpha.Family.ID.String() || logs[0].Metadata["role"] != models.RoleMember ||
		models.Str(logs[0].Provider) != "corp" || *logs[0].UserID != u.ID {
		t.Fatalf("jit record: %+v %v", logs, err)
	}
	if n := auditCount(t, s.env, models.EventLogin, ""); n != 1 {
		t.Errorf("login records = %d", n)
	}

	// The link is used up; the person signs in with the provider now.
	if r := s.browser(t).get(path); r.status != 410 || !strings.Contains(string(r.body), "already been used") {
		t.Fatalf("used link: %d", r.status)
	}
	late := s.browser(t)
	late.get(path)
	if r := late.post(path+"/sso/corp", nil); r.status != 410 || !strings.Contains(string(r.body), "already been used") {
		t.Fatalf("starting from a used link: %d", r.status)
	}
	b2 := s.browser(t)
	if r := s.ssoLogin(b2); r.status != 303 {
		t.Fatalf("later sign-in: %d %s", r.status, r.body)
	}
	if n := auditCount(t, s.env, models.EventJITCreated, ""); n != 1 {
		t.Errorf("jit records after a later sign-in = %d", n)
	}
}

// TestJoinByInvitationLinkOnly: an invitation admits even where single
// sign-on never creates accounts, and outside the allowed domains; with
// password sign-in off, the page offers only the providers.
func TestJoinByInvitationLinkOnly(t *testing.T) {
	s := newSSOEnv(t, models.StrategyOIDC, func(o *api.Options) {
		o.SSO.JITMode, o.SSO.AllowedDomains = api.JITLinkOnly, []string{"corp.example"}
		o.Web.LocalLogin = false
	})
	s.refused(t, "accounts cannot be created through single sign-on here", "jit_disabled")
	path, _ := invite(t, s.env, "pat@example.com", models.RoleAdmin)
	b := s.browser(t)
	if r := b.get(path); strings.Contains(string(r.body), `name="password"`) || !strings.Contains(string(r.body), "Continue with Corp SSO") {
		t.Fatalf("invitation page without password sign-in: %s", r.body)
	}
	if r := s.join(b, path); r.status != 303 {
		t.Fatalf("join: %d %s", r.status, r.body)
	}
	if u := s.user(t, "pat@example.com"); u.FamilyID != s.alpha.Family.ID || u.Role != models.RoleAdmin {
		t.Fatalf("joined user %+v", u)
	}
}

func TestJoinByInvitationRefusals(t *testing.T) {
	s := newSSOEnv(t, models.StrategyOIDC)
	ctx := t.Context()
	// refused follows the link through the provider and expects status,
	// msg and a login_failed record of reason; nothing joins, and the
	// invitation is as it was.
	refused := func(t *testing.T, path string, inv *models.Invitation, status int, msg, reason string) {
		t.Helper()
		_, before := invitationState(t, s.env, inv)
		n := auditCount(t, s.env, models.EventLoginFailed, reason)
		b := s.browser(t)
		r := s.join(b, path)
		if r.status != status || !strings.Contains(string(r.body), msg) {
			t.Fatalf("got %d %s", r.status, r.body)
		}
		if auditCount(t, s.env, models.EventLoginFailed, reason) != n+1 {
			t.Errorf("no %s record", reason)
		}
		if _, after := invitationState(t, s.env, inv); !errors.Is(after, before) {
			t.Errorf("invitation %v, then %v", before, after)
		}
		if r := b.get("/settings/security"); r.status != 302 {
			t.Errorf("a session was issued: %d", r.status)
		}
	}
	const taken = "This email already has an account, in another household. Ask to be invited with another address."

	t.Run("another address", func(t *testing.T) {
		path, inv := invite(t, s.env, "someone@example.com", models.RoleMember)
		refused(t, path, inv, 403, "This invitation was sent to another email address.", "invitation_email_mismatch")
		if _, err := s.store.UserByEmail(ctx, "pat@example.com"); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("an account was created: %v", err)
		}
	})
	t.Run("an unverified address", func(t *testing.T) {
		u := ssotest.DefaultUser()
		u.EmailVerified = false
		s.idp.SetUser(u)
		t.Cleanup(func() { s.idp.SetUser(ssotest.DefaultUser()) })
		path, inv := invite(t, s.env, "pat@example.com", models.RoleMember)
		refused(t, path, inv, 403, "has not confirmed your email address", "email_unverified")
	})
	t.Run("an address of another family", func(t *testing.T) {
		u := ssotest.DefaultUser()
		u.Subject, u.Email = "beta-user", s.beta.User.Email
		s.idp.SetUser(u)
		t.Cleanup(func() { s.idp.SetUser(ssotest.DefaultUser()) })
		path, inv := invite(t, s.env, s.beta.User.Email, models.RoleMember)
		refused(t, path, inv, 409, taken, "invitation_unusable")
	})
	t.Run("an identity of another family", func(t *testing.T) {
		u := ssotest.DefaultUser()
		u.Subject, u.Email = "elsewhere", "elsewhere@example.com"
		s.idp.SetUser(u)
		t.Cleanup(func() { s.idp.SetUser(ssotest.DefaultUser()) })
		if r := s.ssoLogin(s.browser(t)); r.status != 303 { // a family of their own, just in time
			t.Fatalf("JIT: %d", r.status)
		}
		path, inv := invite(t, s.env, "elsewhere@example.com", models.RoleMember)
		refused(t, path, inv, 409, taken, "invitation_unusable")
		if got := s.user(t, "elsewhere@example.com"); got.FamilyID == s.alpha.Family.ID {
			t.Error("moved to the inviting family")
		}
	})
	t.Run("expired during the round trip", func(t *testing.T) {
		path, inv := invite(t, s.env, "pat@example.com", models.RoleMember)
		b := s.browser(t)
		cb := s.startJoin(b, path)
		if _, err := s.store.DB().NewUpdate().Table("invitations").Set("expires_at = ?", time.Now().Add(-time.Minute)).
			Where("id = ?", inv.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if r := b.get(cb.RequestURI()); r.status != 410 || !strings.Contains(string(r.body), "This invitation has expired. Ask for a new one.") {
			t.Fatalf("got %d %s", r.status, r.body)
		}
		if r := s.browser(t).get(path); r.status != 410 {
			t.Fatalf("expired link: %d", r.status)
		}
	})
	t.Run("revoked during the round trip", func(t *testing.T) {
		path, inv := invite(t, s.env, "pat@example.com", models.RoleMember)
		b := s.browser(t)
		cb := s.startJoin(b, path)
		if err := s.store.RevokeInvitation(ctx, s.alpha.Family.ID, inv.ID); err != nil {
			t.Fatal(err)
		}
		if r := b.get(cb.RequestURI()); r.status != 410 || !strings.Contains(string(r.body), "This invitation was withdrawn. Ask for a new one.") {
			t.Fatalf("got %d %s", r.status, r.body)
		}
		late := s.browser(t)
		late.get(path)
		if r := late.post(path+"/sso/corp", nil); r.status != 410 || !strings.Contains(string(r.body), "withdrawn") {
			t.Fatalf("starting from a revoked link: %d", r.status)
		}
	})
	t.Run("an unknown provider", func(t *testing.T) {
		path, _ := invite(t, s.env, "pat@example.com", models.RoleMember)
		b := s.browser(t)
		b.get(path)
		if r := b.post(path+"/sso/nope", nil); r.status != 404 {
			t.Fatalf("got %d", r.status)
		}
		if r := b.post(path+"/sso/corp", url.Values{"csrf_token": {"forged"}}); r.status != 403 {
			t.Fatalf("without the CSRF token: %d", r.status)
		}
	})
	if _, err := s.store.UserByEmail(ctx, "pat@example.com"); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("a refused join made an account: %v", err)
	}
}

// TestJoinByInvitationRace: two callbacks of one link at once join once.
func TestJoinByInvitationRace(t *testing.T) {
	s := newSSOEnv(t, models.StrategyOIDC)
	path, _ := invite(t, s.env, "pat@example.com", models.RoleMember)
	const tabs = 3
	bs := make([]*browser, tabs)
	cbs := make([]*url.URL, tabs)
	for i := range bs {
		bs[i] = s.browser(t)
		cbs[i] = s.startJoin(bs[i], path)
	}
	done := make(chan response, tabs)
	for i := range bs {
		go func() { done <- bs[i].get(cbs[i].RequestURI()) }()
	}
	joined := 0
	for range tabs {
		switch r := <-done; {
		case r.status == 303:
			joined++
		case r.status != 410 || !strings.Contains(string(r.body), "already been used"):
			t.Errorf("a tab got %d %s", r.status, r.body)
		}
	}
	n, err := s.store.DB().NewSelect().Table("users").Where("lower(email) = 'pat@example.com'").Count(t.Context())
	if err != nil || n != 1 || joined != 1 {
		t.Fatalf("users = %d, joins = %d, %v", n, joined, err)
	}
	if c := auditCount(t, s.env, models.EventJITCreated, ""); c != 1 {
		t.Fatalf("jit records = %d", c)
	}
}

// TestJoinByInvitationMember: someone who is in the family already signs
// in through the link, and the invitation is used.
func TestJoinByInvitationMember(t *testing.T) {
	s := newSSOEnv(t, models.StrategyOIDC)
	ctx := t.Context()
	addMember := func(email string) *models.User {
		u := &models.User{FamilyID: s.alpha.Family.ID, Email: email, Role: models.RoleMember}
		if err := s.store.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		return u
	}

	// The identity is linked to a member already: they just sign in.
	path, inv := invite(t, s.env, "pat@example.com", models.RoleAdmin)
	pat := addMember("pat@example.com")
	in := models.SSOSignIn{Provider: s.prov, Identity: &models.VerifiedIdentity{Subject: "user-1", Issuer: s.idp.Issuer,
		Email: "pat@example.com", EmailVerified: true, Claims: map[string]any{}}}
	if err := s.store.LinkIdentity(ctx, in, pat); err != nil {
		t.Fatal(err)
	}
	b := s.browser(t)
	if r := s.join(b, path); r.status != 303 || r.header.Get("Location") != "/" {
		t.Fatalf("sign-in through the link: %d %s", r.status, r.body)
	}
	if r := b.get("/settings/security"); r.status != 200 || !strings.Contains(string(r.body), "pat@example.com") {
		t.Fatalf("not signed in as pat: %d", r.status)
	}
	if got, err := invitationState(t, s.env, inv); !errors.Is(err, models.ErrInvitationUsed) || *got.AcceptedUserID != pat.ID {
		t.Fatalf("invitation: %v %+v", err, got)
	}
	if got := s.user(t, "pat@example.com"); got.Role != models.RoleMember {
		t.Errorf("a sign-in by invitation changed the role to %s", got.Role)
	}

	// The address has an account but no identity: the owner proves it
	// theirs on the link page, as on any sign-in.
	u := ssotest.DefaultUser()
	u.Subject, u.Email = "user-2", "sam@example.com"
	s.idp.SetUser(u)
	path, inv = invite(t, s.env, "sam@example.com", models.RoleMember)
	sam := addMember("sam@example.com")
	if r := s.join(s.browser(t), path); r.status != 303 || r.header.Get("Location") != "/auth/link" {
		t.Fatalf("email of a member: %d %s %s", r.status, r.header.Get("Location"), r.body)
	}
	if got, err := invitationState(t, s.env, inv); !errors.Is(err, models.ErrInvitationUsed) || *got.AcceptedUserID != sam.ID {
		t.Fatalf("invitation: %v %+v", err, got)
	}
	if idents, _ := s.store.UserIdentities(ctx, sam.ID); len(idents) != 0 {
		t.Fatal("linked without proof")
	}
}

// TestJoinByInvitationSAML: the same through a SAML provider whose
// mappings would make alice an admin; she joins with the invited role, and
// the mappings apply at her next sign-in.
func TestJoinByInvitationSAML(t *testing.T) {
	s := newSAMLEnv(t)
	path, inv := invite(t, s.env, "alice@example.org", models.RoleMember)
	b := s.browser(t)
	r := continueWith(b, path, "corp")
	if r.status != 302 {
		t.Fatalf("continue: %d %s", r.status, r.body)
	}
	action, fields, err := s.idp.Login(r.header.Get("Location"), "alice", "pw")
	if err != nil {
		t.Fatal(err)
	}
	acsURL, _ := url.Parse(action)
	if r := acs(b, acsURL.Path, fields); r.status != 303 || r.header.Get("Location") != "/" {
		t.Fatalf("ACS: %d %s %s", r.status, r.header.Get("Location"), r.body)
	}
	u, err := s.store.UserByEmail(t.Context(), "alice@example.org")
	if err != nil || u.FamilyID != s.alpha.Family.ID || u.Role != models.RoleMember {
		t.Fatalf("joined user %+v %v", u, err)
	}
	if _, err := invitationState(t, s.env, inv); !errors.Is(err, models.ErrInvitationUsed) {
		t.Fatalf("invitation: %v", err)
	}
	if auditCount(t, s.env, models.EventJITCreated, "") != 1 {
		t.Error("no jit record")
	}

	next := s.browser(t)
	p, f := s.respond(t, next, "corp")
	if r := acs(next, p, f); r.status != 303 {
		t.Fatalf("next sign-in: %d %s", r.status, r.body)
	}
	if u, _ := s.store.UserByEmail(t.Context(), "alice@example.org"); u.Role != models.RoleAdmin {
		t.Errorf("role at the next sign-in = %s", u.Role)
	}
}
