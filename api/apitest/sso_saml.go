package apitest

import (
	"context"
	"net/url"
	"testing"

	"coffer/models"
	"coffer/sso/ssotest"
)

// samlEnv is an app with a SAML provider "corp" trusting a samlidp that
// has registered the app's own metadata.
type samlEnv struct {
	*Env
	IdP  *ssotest.SAMLIdP
	Prov *models.SSOProvider
}

func NewSAMLEnv(t *testing.T, edit ...func(*models.SSOProvider)) *samlEnv {
	t.Helper()
	e := NewEnv(t)
	idp := ssotest.StartSAMLIdP(t)
	idp.AddUser("alice", "pw", "alice@example.org", "staff", "Admins")
	s := &samlEnv{Env: e, IdP: idp}
	s.Prov = s.AddProvider(t, "corp", edit...)
	return s
}

// AddProvider stores a SAML provider for the IdP and registers it there.
func (s *samlEnv) AddProvider(t *testing.T, name string, edit ...func(*models.SSOProvider)) *models.SSOProvider {
	t.Helper()
	p := &models.SSOProvider{Name: name, Strategy: models.StrategySAML, Label: "Corp SAML", Enabled: true,
		IdPEntityID: Ptr(s.IdP.EntityID), IdPSSOURL: Ptr(s.IdP.SSOURL), IdPSLOURL: Ptr(s.IdP.URL + "/slo"),
		IdPCertificates: Ptr(s.IdP.CertPEM), NameIDFormat: Ptr("email"), SubjectSource: Ptr("email_attribute"),
		GroupAttribute: Ptr("eduPersonAffiliation"), DefaultRole: models.RoleMember,
		GroupMappings: []models.GroupMapping{{Group: "Admins", Role: models.RoleAdmin}}}
	for _, fn := range edit {
		fn(p)
	}
	models.NewProviderID(p)
	if err := s.Store.CreateSSOProvider(context.Background(), p, models.ProviderChange{ActorID: s.Alpha.User.ID}); err != nil {
		t.Fatal(err)
	}
	if err := s.RDB.Incr(context.Background(), "sso:providers:version").Err(); err != nil {
		t.Fatal(err)
	}
	md := s.Browser(t).Get("/auth/saml/" + p.ID.String() + "/metadata")
	if md.Status != 200 || md.Header.Get("Content-Type") != "application/samlmetadata+xml" {
		t.Fatalf("metadata: %d %s", md.Status, md.Header.Get("Content-Type"))
	}
	s.IdP.RegisterSP(name, md.Body)
	return p
}

// Respond starts a sign-in in b and returns the ACS path and the form
// the IdP posts there after alice signs in.
func (s *samlEnv) Respond(t *testing.T, b *Browser, name string) (string, url.Values) {
	t.Helper()
	r := b.Get("/auth/" + name + "?return_to=/settings/security")
	if r.Status != 302 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	action, fields, err := s.IdP.Login(r.Header.Get("Location"), "alice", "pw")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(action)
	return u.Path, fields
}

// ACS posts a response as the IdP's auto-submitting form does: cross-site,
// without our CSRF token.
func ACS(b *Browser, path string, fields url.Values) Response {
	b.T.Helper()
	return b.Send("POST", path, fields, map[string]string{"Origin": "null"})
}
