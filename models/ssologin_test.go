package models_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"coffer/models"
	"coffer/models/modelstest"
)

// ssoFixture is a family with two providers, one that maps roles.
type ssoFixture struct {
	s      *models.Store
	family *modelstest.FamilyFixture
	plain  *models.SSOProvider // no mappings: a login never changes a role
	mapped *models.SSOProvider // Admins → admin
}

func newSSOFixture(t *testing.T) *ssoFixture {
	t.Helper()
	s := modelstest.NewStore(t)
	x := &ssoFixture{s: s, family: modelstest.NewFamily(t, s, "ssologin")}
	for _, p := range []**models.SSOProvider{&x.plain, &x.mapped} {
		name := "plain"
		if p == &x.mapped {
			name = "mapped"
		}
		*p = &models.SSOProvider{Name: name, Strategy: models.StrategyOIDC, Label: name, Enabled: true,
			Issuer: ptr("https://" + name + ".example"), ClientID: ptr("coffer"), DefaultRole: models.RoleMember}
		if name == "mapped" {
			(*p).GroupMappings = []models.GroupMapping{{Group: "Admins", Role: models.RoleAdmin}}
		}
		models.NewProviderID(*p)
		if err := s.CreateSSOProvider(context.Background(), *p, models.ProviderChange{ActorID: x.family.User.ID}); err != nil {
			t.Fatal(err)
		}
	}
	return x
}

// member adds a member without names to the fixture's family.
func (x *ssoFixture) member(t *testing.T, name string) *models.User {
	t.Helper()
	u := &models.User{FamilyID: x.family.Family.ID, Email: name + "@example.com", Role: models.RoleMember}
	if err := x.s.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return u
}

func (x *ssoFixture) signIn(p *models.SSOProvider, subject string, groups ...string) models.SSOSignIn {
	return models.SSOSignIn{SignIn: browser, Provider: p, Identity: &models.VerifiedIdentity{
		Subject: subject, Issuer: models.Str(p.Issuer), Email: subject + "@idp.example", EmailVerified: true,
		FirstName: "Ada", LastName: "Lovelace", Groups: groups, Claims: map[string]any{},
		IDToken: "id-token-" + subject, NameID: "name-" + subject, SessionIndex: "index-" + subject,
	}}
}

// newEvents returns the audit records written since n records existed.
func newEvents(t *testing.T, s *models.Store, n int) []models.AuditLog {
	t.Helper()
	return auditEvents(t, s)[n:]
}

// checkSSOSession checks the session a token opens, and returns its user.
func checkSSOSession(t *testing.T, s *models.Store, token string, in models.SSOSignIn) *models.User {
	t.Helper()
	sess, err := s.SessionByToken(context.Background(), token, time.Hour)
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	if sess.Method != models.MethodSSO || sess.ProviderID == nil || *sess.ProviderID != in.Provider.ID ||
		models.Str(sess.SAMLNameID) != in.Identity.NameID || models.Str(sess.SAMLSessionIndex) != in.Identity.SessionIndex ||
		s.SessionIDToken(sess) != in.Identity.IDToken || models.Str(sess.IP) != models.Str(in.IP) {
		t.Errorf("session = %+v", sess)
	}
	if sess.User.LastLoginAt == nil || models.Str(sess.User.FirstName) != "Ada" {
		t.Errorf("user after login = %+v", sess.User)
	}
	return sess.User
}

func TestLoginWithSSO(t *testing.T) {
	x := newSSOFixture(t)
	ctx := context.Background()
	s := x.s
	other := x.member(t, "owner")
	if err := s.CreateIdentity(ctx, &models.SSOIdentity{FamilyID: other.FamilyID, UserID: other.ID, ProviderID: x.plain.ID, Subject: "taken"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name       string
		provider   *models.SSOProvider
		known      bool // the identity exists before the login
		subject    string
		groups     []string
		wantErr    error
		wantEvents string
		wantRole   string
	}{
		{"known identity", x.plain, true, "known", nil, nil, "login", models.RoleMember},
		{"new link proved by password", x.plain, false, "linked", nil, nil, "link,login", models.RoleMember},
		{"mapped groups change the role", x.mapped, true, "promoted", []string{"Admins"}, nil, "role_changed,login", models.RoleAdmin},
		{"subject linked to someone else", x.plain, false, "taken", nil, models.ErrConflict, "", models.RoleMember},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := x.member(t, tt.subject+"-user")
			var known *models.SSOIdentity
			if tt.known {
				known = &models.SSOIdentity{FamilyID: u.FamilyID, UserID: u.ID, ProviderID: tt.provider.ID, Subject: tt.subject, Issuer: tt.provider.Issuer}
				if err := s.CreateIdentity(ctx, known); err != nil {
					t.Fatal(err)
				}
			}
			n := len(auditEvents(t, s))
			in := x.signIn(tt.provider, tt.subject, tt.groups...)
			token, err := s.LoginWithSSO(ctx, in, u, known)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			events := newEvents(t, s, n)
			if got := eventTypes(events); got != tt.wantEvents {
				t.Fatalf("records = %q, want %q", got, tt.wantEvents)
			}
			if tt.wantErr != nil {
				if c, _ := s.CountUserSessions(ctx, u.FamilyID, u.ID); c != 0 {
					t.Errorf("%d sessions after a refused login", c)
				}
				return
			}
			if got := checkSSOSession(t, s, token, in); got.Role != tt.wantRole {
				t.Errorf("role = %s, want %s", got.Role, tt.wantRole)
			}
			ident, err := s.IdentityBySubject(ctx, tt.provider.ID, tt.subject)
			if err != nil || ident.UserID != u.ID || models.Str(ident.Email) != in.Identity.Email || ident.LastUsedAt == nil {
				t.Fatalf("identity = %+v, %v", ident, err)
			}
			login := events[len(events)-1]
			if login.Metadata["identity_id"] != ident.ID.String() || login.Metadata["role"] != tt.wantRole ||
				models.Str(login.Provider) != tt.provider.Name || *login.UserID != u.ID {
				t.Errorf("login record = %+v", login)
			}
			if tt.provider == x.mapped && fmt.Sprint(login.Metadata["matched_groups"]) != "[Admins]" {
				t.Errorf("matched_groups = %v", login.Metadata["matched_groups"])
			}
			if events[0].EventType == models.EventLink && events[0].Metadata["proof"] != "password" {
				t.Errorf("link record = %+v", events[0])
			}
		})
	}
}

func TestCreateSSOAccount(t *testing.T) {
	x := newSSOFixture(t)
	ctx := context.Background()
	s := x.s
	for _, tt := range []struct {
		name      string
		provider  *models.SSOProvider
		email     string
		role      string
		wantErr   error
		wantRole  string
		wantGuard any
	}{
		{"admin of a new family", x.plain, "jit@example.com", models.RoleAdmin, nil, models.RoleAdmin, nil},
		{"super admin by default role", x.plain, "root@example.com", models.RoleSuperAdmin, nil, models.RoleSuperAdmin, nil},
		{"mappings cannot demote the only admin", x.mapped, "mapped@example.com", models.RoleAdmin, nil, models.RoleAdmin, models.GuardLastFamilyAdmin},
		{"email taken meanwhile", x.plain, x.family.User.Email, models.RoleAdmin, models.ErrConflict, "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := len(auditEvents(t, s))
			in := x.signIn(tt.provider, "jit-"+tt.email)
			f := &models.Family{Name: "jit " + tt.email, Currency: "USD"}
			u := &models.User{Email: tt.email, Role: tt.role, FirstName: ptr("Ada")}
			token, err := s.CreateSSOAccount(ctx, in, f, u)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			events := newEvents(t, s, n)
			if tt.wantErr != nil {
				if len(events) != 0 || familiesNamed(t, s, f.Name) != 0 {
					t.Errorf("a refused account left %d records and %d families", len(events), familiesNamed(t, s, f.Name))
				}
				return
			}
			got := checkSSOSession(t, s, token, in)
			if got.Role != tt.wantRole || got.FamilyID != f.ID {
				t.Errorf("user = %+v, want role %s in family %s", got, tt.wantRole, f.ID)
			}
			if eventTypes(events) != "jit_account_created,login" {
				t.Fatalf("records = %q", eventTypes(events))
			}
			jit, login := events[0], events[1]
			if jit.Metadata["family_id"] != f.ID.String() || jit.Metadata["role"] != tt.wantRole || jit.Metadata["identity_id"] != login.Metadata["identity_id"] {
				t.Errorf("jit record = %+v", jit.Metadata)
			}
			if login.Metadata["role_guard"] != tt.wantGuard {
				t.Errorf("role_guard = %v, want %v", login.Metadata["role_guard"], tt.wantGuard)
			}
		})
	}
}

func TestLinkIdentity(t *testing.T) {
	x := newSSOFixture(t)
	ctx := context.Background()
	s := x.s
	for _, tt := range []struct {
		name       string
		provider   *models.SSOProvider
		groups     []string
		wantEvents string
		wantRole   string
	}{
		{"linked by the session", x.plain, nil, "link", models.RoleMember},
		{"a mapped provider sets the role", x.mapped, []string{"Admins"}, "role_changed,link", models.RoleAdmin},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := x.member(t, "link-"+tt.provider.Name)
			n := len(auditEvents(t, s))
			in := x.signIn(tt.provider, "link-"+tt.provider.Name, tt.groups...)
			if err := s.LinkIdentity(ctx, in, u); err != nil {
				t.Fatal(err)
			}
			events := newEvents(t, s, n)
			if got := eventTypes(events); got != tt.wantEvents {
				t.Fatalf("records = %q, want %q", got, tt.wantEvents)
			}
			ident, err := s.IdentityBySubject(ctx, tt.provider.ID, in.Identity.Subject)
			if err != nil || ident.UserID != u.ID {
				t.Fatalf("identity = %+v, %v", ident, err)
			}
			link := events[len(events)-1]
			if link.Metadata["proof"] != "session" || link.Metadata["identity_id"] != ident.ID.String() {
				t.Errorf("link record = %+v", link.Metadata)
			}
			if c, _ := s.CountUserSessions(ctx, u.FamilyID, u.ID); c != 0 {
				t.Errorf("a link made %d sessions", c)
			}
			if got, _ := s.UserByID(ctx, u.ID); got.Role != tt.wantRole {
				t.Errorf("role = %s, want %s", got.Role, tt.wantRole)
			}
			// The same subject cannot be linked twice.
			n = len(auditEvents(t, s))
			if err := s.LinkIdentity(ctx, in, x.member(t, "second-"+tt.provider.Name)); !errors.Is(err, models.ErrConflict) {
				t.Fatalf("second link: %v", err)
			}
			if events := newEvents(t, s, n); len(events) != 0 {
				t.Errorf("a refused link wrote %q", eventTypes(events))
			}
		})
	}
}
