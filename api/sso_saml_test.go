package api_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"coffer/models"
	"coffer/sso/ssotest"
)

// samlEnv is an app with a SAML provider "corp" trusting a samlidp that
// has registered the app's own metadata.
type samlEnv struct {
	*env
	idp  *ssotest.SAMLIdP
	prov *models.SSOProvider
}

func newSAMLEnv(t *testing.T, edit ...func(*models.SSOProvider)) *samlEnv {
	t.Helper()
	e := newEnv(t)
	idp := ssotest.StartSAMLIdP(t)
	idp.AddUser("alice", "pw", "alice@example.org", "staff", "Admins")
	s := &samlEnv{env: e, idp: idp}
	s.prov = s.addProvider(t, "corp", edit...)
	return s
}

// addProvider stores a SAML provider for the IdP and registers it there.
func (s *samlEnv) addProvider(t *testing.T, name string, edit ...func(*models.SSOProvider)) *models.SSOProvider {
	t.Helper()
	p := &models.SSOProvider{Name: name, Strategy: models.StrategySAML, Label: "Corp SAML", Enabled: true,
		IdPEntityID: ptr(s.idp.EntityID), IdPSSOURL: ptr(s.idp.SSOURL), IdPSLOURL: ptr(s.idp.URL + "/slo"),
		IdPCertificates: ptr(s.idp.CertPEM), NameIDFormat: ptr("email"), SubjectSource: ptr("email_attribute"),
		GroupAttribute: ptr("eduPersonAffiliation"), DefaultRole: models.RoleMember,
		GroupMappings: []models.GroupMapping{{Group: "Admins", Role: models.RoleAdmin}}}
	for _, fn := range edit {
		fn(p)
	}
	models.NewProviderID(p)
	if err := s.store.CreateSSOProvider(context.Background(), p, models.ProviderChange{ActorID: s.alpha.User.ID}); err != nil {
		t.Fatal(err)
	}
	if err := s.rdb.Incr(context.Background(), "sso:providers:version").Err(); err != nil {
		t.Fatal(err)
	}
	md := s.browser(t).get("/auth/saml/" + p.ID.String() + "/metadata")
	if md.status != 200 || md.header.Get("Content-Type") != "application/samlmetadata+xml" {
		t.Fatalf("metadata: %d %s", md.status, md.header.Get("Content-Type"))
	}
	s.idp.RegisterSP(name, md.body)
	return p
}

// respond starts a sign-in in b and returns the ACS path and the form
// the IdP posts there after alice signs in.
func (s *samlEnv) respond(t *testing.T, b *browser, name string) (string, url.Values) {
	t.Helper()
	r := b.get("/auth/" + name + "?return_to=/settings/security")
	if r.status != 302 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	action, fields, err := s.idp.Login(r.header.Get("Location"), "alice", "pw")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(action)
	return u.Path, fields
}

// acs posts a response as the IdP's auto-submitting form does: cross-site,
// without our CSRF token.
func acs(b *browser, path string, fields url.Values) response {
	b.t.Helper()
	return b.send("POST", path, fields, map[string]string{"Origin": "null"})
}

func TestSAMLSignIn(t *testing.T) {
	ctx := context.Background()
	s := newSAMLEnv(t)
	b := s.browser(t)
	path, fields := s.respond(t, b, "corp")
	if path != "/auth/saml/"+s.prov.ID.String()+"/callback" {
		t.Fatalf("IdP posts to %s", path)
	}
	if r := acs(b, path, fields); r.status != 303 || r.header.Get("Location") != "/settings/security" {
		t.Fatalf("ACS: %d %s %s", r.status, r.header.Get("Location"), r.body)
	}
	u, err := s.store.UserByEmail(ctx, "alice@example.org")
	if err != nil || u.Role != models.RoleAdmin {
		t.Fatalf("JIT user: %+v %v", u, err)
	}
	logs, _, _ := s.store.AuditLogs(ctx, models.AuditFilter{EventType: models.EventLogin}, models.Page{Number: 1, Size: 1})
	if len(logs) != 1 || !strings.Contains(metadataText(logs[0].Metadata), "Admins") {
		t.Fatalf("login record: %+v", logs)
	}

	// The same response posted again: its request was used up.
	if r := acs(b, path, fields); r.status != 400 || !strings.Contains(string(r.body), "could not be accepted") {
		t.Fatalf("repost: %d", r.status)
	}

	// Logout continues at the IdP's single logout.
	if r := b.get("/settings/security"); r.status != 200 {
		t.Fatalf("not signed in: %d", r.status)
	}
	r := b.post("/sessions/logout", url.Values{})
	if r.status != 302 || !strings.HasPrefix(r.header.Get("Location"), s.idp.URL+"/slo?SAMLRequest=") {
		t.Fatalf("logout: %d %s", r.status, r.header.Get("Location"))
	}
	if auditCount(t, s.env, models.EventLogoutIdP, "") != 1 {
		t.Error("no logout_idp record")
	}
	// An answer that does not verify still leaves the user signed out here.
	back := b.get("/auth/saml/" + s.prov.ID.String() + "/logout?SAMLResponse=bm90IHhtbA")
	if back.status != 303 {
		t.Fatalf("logout response: %d", back.status)
	}
	if page := b.get("/sessions/new"); !strings.Contains(string(page.body), "The identity provider did not confirm.") {
		t.Fatalf("after logout: %s", page.body)
	}
}

func TestSAMLAttacks(t *testing.T) {
	s := newSAMLEnv(t)
	other := s.addProvider(t, "other")
	invalid := func(t *testing.T, r response, reason string) {
		t.Helper()
		if r.status != 400 || !strings.Contains(string(r.body), "The sign-in response from Corp SAML could not be accepted.") ||
			!strings.Contains(string(r.body), "Reference: ") {
			t.Fatalf("got %d %s", r.status, r.body)
		}
		if auditCount(t, s.env, models.EventLoginFailed, reason) == 0 {
			t.Fatalf("no %s record", reason)
		}
	}
	t.Run("another browser's response", func(t *testing.T) {
		path, fields := s.respond(t, s.browser(t), "corp")
		invalid(t, acs(s.browser(t), path, fields), "saml_invalid")
	})
	t.Run("provider A's response at B's ACS", func(t *testing.T) {
		b := s.browser(t)
		_, fields := s.respond(t, b, "corp")
		invalid(t, acs(b, "/auth/saml/"+other.ID.String()+"/callback", fields), "saml_invalid")
	})
	t.Run("unsolicited", func(t *testing.T) {
		s.idp.AddShortcut("direct", "http://example.com/auth/saml/"+s.prov.ID.String())
		action, fields, err := s.idp.Login(s.idp.URL+"/login/direct", "alice", "pw")
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(action)
		invalid(t, acs(s.browser(t), u.Path, fields), "saml_unsolicited")
	})
	t.Run("malformed", func(t *testing.T) {
		path := "/auth/saml/" + s.prov.ID.String() + "/callback"
		invalid(t, acs(s.browser(t), path, url.Values{"SAMLResponse": {"%%% not base64"}}), "saml_invalid")
		if r := acs(s.browser(t), path, url.Values{"SAMLResponse": {strings.Repeat("A", 600<<10)}}); r.status != 413 {
			t.Fatalf("oversized: %d", r.status)
		}
	})
	if r := s.browser(t).get("/auth/saml/" + s.prov.ID.String() + "x/metadata"); r.status != 404 {
		t.Errorf("bad provider id: %d", r.status)
	}
}

func TestSAMLIdPInitiatedAndReplay(t *testing.T) {
	s := newSAMLEnv(t, func(p *models.SSOProvider) { p.AllowIdPInitiated = true })
	s.idp.AddShortcut("direct", "http://example.com/auth/saml/"+s.prov.ID.String())
	action, fields, err := s.idp.Login(s.idp.URL+"/login/direct", "alice", "pw")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(action)
	if r := acs(s.browser(t), u.Path, fields); r.status != 303 {
		t.Fatalf("IdP-initiated: %d %s", r.status, r.body)
	}
	// The same assertion again, from anywhere: refused by the replay cache.
	r := acs(s.browser(t), u.Path, fields)
	if r.status != 400 || auditCount(t, s.env, models.EventLoginFailed, "saml_replay") != 1 {
		t.Fatalf("replay: %d", r.status)
	}
}
