package signin_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/models"
	"coffer/sso/ssotest"
)

// invitationState is the invitation, and why it cannot be used (nil
// while open).
func invitationState(t *testing.T, e *apitest.Env, inv *models.Invitation) (*models.Invitation, error) {
	t.Helper()
	got, err := e.Store.Invitation(t.Context(), inv.FamilyID, inv.ID)
	if err != nil && !errors.Is(err, models.ErrInvitationUsed) && !errors.Is(err, models.ErrInvitationExpired) && !errors.Is(err, models.ErrInvitationRevoked) {
		t.Fatal(err)
	}
	return got, err
}

func TestJoinByInvitationOIDC(t *testing.T) {
	s := apitest.NewSSOEnv(t, models.StrategyOIDC)
	path, inv := apitest.Invite(t, s.Env, "Pat@Example.com", models.RoleMember) // the IdP says pat@example.com
	b := s.Browser(t)
	if r := b.Get(path); !strings.Contains(string(r.Body), "Continue with Corp SSO") || !strings.Contains(string(r.Body), `name="password"`) {
		t.Fatalf("invitation page: %s", r.Body)
	}
	r := s.Join(b, path)
	if r.Status != 303 || r.Header.Get("Location") != "/" {
		t.Fatalf("callback: %d %s %s", r.Status, r.Header.Get("Location"), r.Body)
	}
	if home := b.Get("/"); home.Status != 200 || !strings.Contains(string(home.Body), "Welcome! You have joined the household.") {
		t.Fatalf("after the join: %d", home.Status)
	}
	if accounts := b.Get("/accounts"); accounts.Status != 200 || !strings.Contains(string(accounts.Body), "Checking") {
		t.Fatalf("the new member sees the family's accounts: %d", accounts.Status)
	}
	u := s.User(t, "pat@example.com")
	if u.FamilyID != s.Alpha.Family.ID || u.Role != models.RoleMember || u.PasswordHash != nil || models.Str(u.FirstName) != "Pat" {
		t.Fatalf("joined user %+v", u)
	}
	if got, err := invitationState(t, s.Env, inv); !errors.Is(err, models.ErrInvitationUsed) || *got.AcceptedUserID != u.ID {
		t.Fatalf("invitation after the join: %v %+v", err, got)
	}
	logs, _, err := s.Store.AuditLogs(t.Context(), models.AuditFilter{EventType: models.EventJITCreated}, models.Page{Number: 1, Size: 5})
	if err != nil || len(logs) != 1 || logs[0].Metadata["invitation_id"] != inv.ID.String() ||
		logs[0].Metadata["family_id"] != s.Alpha.Family.ID.String() || logs[0].Metadata["role"] != models.RoleMember ||
		models.Str(logs[0].Provider) != "corp" || *logs[0].UserID != u.ID {
		t.Fatalf("jit record: %+v %v", logs, err)
	}
	if n := apitest.AuditCount(t, s.Env, models.EventLogin, ""); n != 1 {
		t.Errorf("login records = %d", n)
	}

	// The link is used up; the person signs in with the provider now.
	if r := s.Browser(t).Get(path); r.Status != 410 || !strings.Contains(string(r.Body), "already been used") {
		t.Fatalf("used link: %d", r.Status)
	}
	late := s.Browser(t)
	late.Get(path)
	if r := late.Post(path+"/sso/corp", nil); r.Status != 410 || !strings.Contains(string(r.Body), "already been used") {
		t.Fatalf("starting from a used link: %d", r.Status)
	}
	b2 := s.Browser(t)
	if r := s.SSOLogin(b2); r.Status != 303 {
		t.Fatalf("later sign-in: %d %s", r.Status, r.Body)
	}
	if n := apitest.AuditCount(t, s.Env, models.EventJITCreated, ""); n != 1 {
		t.Errorf("jit records after a later sign-in = %d", n)
	}
}

// TestJoinByInvitationLinkOnly: an invitation admits even where single
// sign-on never creates accounts, and outside the allowed domains; with
// password sign-in off, the page offers only the providers.
func TestJoinByInvitationLinkOnly(t *testing.T) {
	s := apitest.NewSSOEnv(t, models.StrategyOIDC, func(o *api.Options) {
		o.SSO.JITMode, o.SSO.AllowedDomains = api.JITLinkOnly, []string{"corp.example"}
		o.Web.LocalLogin = false
	})
	s.Refused(t, "accounts cannot be created through single sign-on here", "jit_disabled")
	path, _ := apitest.Invite(t, s.Env, "pat@example.com", models.RoleAdmin)
	b := s.Browser(t)
	if r := b.Get(path); strings.Contains(string(r.Body), `name="password"`) || !strings.Contains(string(r.Body), "Continue with Corp SSO") {
		t.Fatalf("invitation page without password sign-in: %s", r.Body)
	}
	if r := s.Join(b, path); r.Status != 303 {
		t.Fatalf("join: %d %s", r.Status, r.Body)
	}
	if u := s.User(t, "pat@example.com"); u.FamilyID != s.Alpha.Family.ID || u.Role != models.RoleAdmin {
		t.Fatalf("joined user %+v", u)
	}
}

func TestJoinByInvitationRefusals(t *testing.T) {
	s := apitest.NewSSOEnv(t, models.StrategyOIDC)
	ctx := t.Context()
	// refused follows the link through the provider and expects status,
	// msg and a login_failed record of reason; nothing joins, and the
	// invitation is as it was.
	refused := func(t *testing.T, path string, inv *models.Invitation, status int, msg, reason string) {
		t.Helper()
		_, before := invitationState(t, s.Env, inv)
		n := apitest.AuditCount(t, s.Env, models.EventLoginFailed, reason)
		b := s.Browser(t)
		r := s.Join(b, path)
		if r.Status != status || !strings.Contains(string(r.Body), msg) {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		if apitest.AuditCount(t, s.Env, models.EventLoginFailed, reason) != n+1 {
			t.Errorf("no %s record", reason)
		}
		if _, after := invitationState(t, s.Env, inv); !errors.Is(after, before) {
			t.Errorf("invitation %v, then %v", before, after)
		}
		if r := b.Get("/settings/security"); r.Status != 302 {
			t.Errorf("a session was issued: %d", r.Status)
		}
	}
	const taken = "This email already has an account, in another household. Ask to be invited with another address."

	t.Run("another address", func(t *testing.T) {
		path, inv := apitest.Invite(t, s.Env, "someone@example.com", models.RoleMember)
		refused(t, path, inv, 403, "This invitation was sent to another email address.", "invitation_email_mismatch")
		if _, err := s.Store.UserByEmail(ctx, "pat@example.com"); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("an account was created: %v", err)
		}
	})
	t.Run("an unverified address", func(t *testing.T) {
		u := ssotest.DefaultUser()
		u.EmailVerified = false
		s.IdP.SetUser(u)
		t.Cleanup(func() { s.IdP.SetUser(ssotest.DefaultUser()) })
		path, inv := apitest.Invite(t, s.Env, "pat@example.com", models.RoleMember)
		refused(t, path, inv, 403, "has not confirmed your email address", "email_unverified")
	})
	t.Run("an address of another family", func(t *testing.T) {
		u := ssotest.DefaultUser()
		u.Subject, u.Email = "beta-user", s.Beta.User.Email
		s.IdP.SetUser(u)
		t.Cleanup(func() { s.IdP.SetUser(ssotest.DefaultUser()) })
		path, inv := apitest.Invite(t, s.Env, s.Beta.User.Email, models.RoleMember)
		refused(t, path, inv, 409, taken, "invitation_unusable")
	})
	t.Run("an identity of another family", func(t *testing.T) {
		u := ssotest.DefaultUser()
		u.Subject, u.Email = "elsewhere", "elsewhere@example.com"
		s.IdP.SetUser(u)
		t.Cleanup(func() { s.IdP.SetUser(ssotest.DefaultUser()) })
		if r := s.SSOLogin(s.Browser(t)); r.Status != 303 { // a family of their own, just in time
			t.Fatalf("JIT: %d", r.Status)
		}
		path, inv := apitest.Invite(t, s.Env, "elsewhere@example.com", models.RoleMember)
		refused(t, path, inv, 409, taken, "invitation_unusable")
		if got := s.User(t, "elsewhere@example.com"); got.FamilyID == s.Alpha.Family.ID {
			t.Error("moved to the inviting family")
		}
	})
	t.Run("expired during the round trip", func(t *testing.T) {
		path, inv := apitest.Invite(t, s.Env, "pat@example.com", models.RoleMember)
		b := s.Browser(t)
		cb := s.StartJoin(b, path)
		if _, err := s.Store.DB().NewUpdate().Table("invitations").Set("expires_at = ?", time.Now().Add(-time.Minute)).
			Where("id = ?", inv.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if r := b.Get(cb.RequestURI()); r.Status != 410 || !strings.Contains(string(r.Body), "This invitation has expired. Ask for a new one.") {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		if r := s.Browser(t).Get(path); r.Status != 410 {
			t.Fatalf("expired link: %d", r.Status)
		}
	})
	t.Run("revoked during the round trip", func(t *testing.T) {
		path, inv := apitest.Invite(t, s.Env, "pat@example.com", models.RoleMember)
		b := s.Browser(t)
		cb := s.StartJoin(b, path)
		if err := s.Store.RevokeInvitation(ctx, s.Alpha.Family.ID, inv.ID); err != nil {
			t.Fatal(err)
		}
		if r := b.Get(cb.RequestURI()); r.Status != 410 || !strings.Contains(string(r.Body), "This invitation was withdrawn. Ask for a new one.") {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		late := s.Browser(t)
		late.Get(path)
		if r := late.Post(path+"/sso/corp", nil); r.Status != 410 || !strings.Contains(string(r.Body), "withdrawn") {
			t.Fatalf("starting from a revoked link: %d", r.Status)
		}
	})
	t.Run("an unknown provider", func(t *testing.T) {
		path, _ := apitest.Invite(t, s.Env, "pat@example.com", models.RoleMember)
		b := s.Browser(t)
		b.Get(path)
		if r := b.Post(path+"/sso/nope", nil); r.Status != 404 {
			t.Fatalf("got %d", r.Status)
		}
		if r := b.Post(path+"/sso/corp", url.Values{"csrf_token": {"forged"}}); r.Status != 403 {
			t.Fatalf("without the CSRF token: %d", r.Status)
		}
	})
	if _, err := s.Store.UserByEmail(ctx, "pat@example.com"); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("a refused join made an account: %v", err)
	}
}

// TestJoinByInvitationRace: two callbacks of one link at once join once.
func TestJoinByInvitationRace(t *testing.T) {
	s := apitest.NewSSOEnv(t, models.StrategyOIDC)
	path, _ := apitest.Invite(t, s.Env, "pat@example.com", models.RoleMember)
	const tabs = 3
	bs := make([]*apitest.Browser, tabs)
	cbs := make([]*url.URL, tabs)
	for i := range bs {
		bs[i] = s.Browser(t)
		cbs[i] = s.StartJoin(bs[i], path)
	}
	done := make(chan apitest.Response, tabs)
	for i := range bs {
		go func() { done <- bs[i].Get(cbs[i].RequestURI()) }()
	}
	joined := 0
	for range tabs {
		switch r := <-done; {
		case r.Status == 303:
			joined++
		case r.Status != 410 || !strings.Contains(string(r.Body), "already been used"):
			t.Errorf("a tab got %d %s", r.Status, r.Body)
		}
	}
	n, err := s.Store.DB().NewSelect().Table("users").Where("lower(email) = 'pat@example.com'").Count(t.Context())
	if err != nil || n != 1 || joined != 1 {
		t.Fatalf("users = %d, joins = %d, %v", n, joined, err)
	}
	if c := apitest.AuditCount(t, s.Env, models.EventJITCreated, ""); c != 1 {
		t.Fatalf("jit records = %d", c)
	}
}

// TestJoinByInvitationMember: someone who is in the family already signs
// in through the link, and the invitation is used.
func TestJoinByInvitationMember(t *testing.T) {
	s := apitest.NewSSOEnv(t, models.StrategyOIDC)
	ctx := t.Context()
	addMember := func(email string) *models.User {
		u := &models.User{FamilyID: s.Alpha.Family.ID, Email: email, Role: models.RoleMember}
		if err := s.Store.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		return u
	}

	// The identity is linked to a member already: they just sign in.
	path, inv := apitest.Invite(t, s.Env, "pat@example.com", models.RoleAdmin)
	pat := addMember("pat@example.com")
	in := models.SSOSignIn{Provider: s.Prov, Identity: &models.VerifiedIdentity{Subject: "user-1", Issuer: s.IdP.Issuer,
		Email: "pat@example.com", EmailVerified: true, Claims: map[string]any{}}}
	if err := s.Store.LinkIdentity(ctx, in, pat); err != nil {
		t.Fatal(err)
	}
	b := s.Browser(t)
	if r := s.Join(b, path); r.Status != 303 || r.Header.Get("Location") != "/" {
		t.Fatalf("sign-in through the link: %d %s", r.Status, r.Body)
	}
	if r := b.Get("/settings/security"); r.Status != 200 || !strings.Contains(string(r.Body), "pat@example.com") {
		t.Fatalf("not signed in as pat: %d", r.Status)
	}
	if got, err := invitationState(t, s.Env, inv); !errors.Is(err, models.ErrInvitationUsed) || *got.AcceptedUserID != pat.ID {
		t.Fatalf("invitation: %v %+v", err, got)
	}
	if got := s.User(t, "pat@example.com"); got.Role != models.RoleMember {
		t.Errorf("a sign-in by invitation changed the role to %s", got.Role)
	}

	// The address has an account but no identity: the owner proves it
	// theirs on the link page, as on any sign-in.
	u := ssotest.DefaultUser()
	u.Subject, u.Email = "user-2", "sam@example.com"
	s.IdP.SetUser(u)
	path, inv = apitest.Invite(t, s.Env, "sam@example.com", models.RoleMember)
	sam := addMember("sam@example.com")
	if r := s.Join(s.Browser(t), path); r.Status != 303 || r.Header.Get("Location") != "/auth/link" {
		t.Fatalf("email of a member: %d %s %s", r.Status, r.Header.Get("Location"), r.Body)
	}
	if got, err := invitationState(t, s.Env, inv); !errors.Is(err, models.ErrInvitationUsed) || *got.AcceptedUserID != sam.ID {
		t.Fatalf("invitation: %v %+v", err, got)
	}
	if idents, _ := s.Store.UserIdentities(ctx, sam.FamilyID, sam.ID); len(idents) != 0 {
		t.Fatal("linked without proof")
	}
}

// TestJoinByInvitationSAML: the same through a SAML provider whose
// mappings would make alice an admin; she joins with the invited role, and
// the mappings apply at her next sign-in.
func TestJoinByInvitationSAML(t *testing.T) {
	s := apitest.NewSAMLEnv(t)
	path, inv := apitest.Invite(t, s.Env, "alice@example.org", models.RoleMember)
	b := s.Browser(t)
	r := apitest.ContinueWith(b, path, "corp")
	if r.Status != 302 {
		t.Fatalf("continue: %d %s", r.Status, r.Body)
	}
	action, fields, err := s.IdP.Login(r.Header.Get("Location"), "alice", "pw")
	if err != nil {
		t.Fatal(err)
	}
	acsURL, _ := url.Parse(action)
	if r := apitest.ACS(b, acsURL.Path, fields); r.Status != 303 || r.Header.Get("Location") != "/" {
		t.Fatalf("ACS: %d %s %s", r.Status, r.Header.Get("Location"), r.Body)
	}
	u, err := s.Store.UserByEmail(t.Context(), "alice@example.org")
	if err != nil || u.FamilyID != s.Alpha.Family.ID || u.Role != models.RoleMember {
		t.Fatalf("joined user %+v %v", u, err)
	}
	if _, err := invitationState(t, s.Env, inv); !errors.Is(err, models.ErrInvitationUsed) {
		t.Fatalf("invitation: %v", err)
	}
	if apitest.AuditCount(t, s.Env, models.EventJITCreated, "") != 1 {
		t.Error("no jit record")
	}

	next := s.Browser(t)
	p, f := s.Respond(t, next, "corp")
	if r := apitest.ACS(next, p, f); r.Status != 303 {
		t.Fatalf("next sign-in: %d %s", r.Status, r.Body)
	}
	if u, _ := s.Store.UserByEmail(t.Context(), "alice@example.org"); u.Role != models.RoleAdmin {
		t.Errorf("role at the next sign-in = %s", u.Role)
	}
}
