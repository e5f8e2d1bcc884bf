package apitest

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"coffer/api"
	"coffer/models"
	"coffer/sso/ssotest"
)

// SSOEnv is an app with one OIDC provider, "corp", served by an
// in-process identity provider.
type SSOEnv struct {
	*Env
	IdP  *ssotest.Provider
	Prov *models.SSOProvider
}

func NewSSOEnv(t *testing.T, strategy string, opts ...func(*api.Options)) *SSOEnv {
	t.Helper()
	e := NewEnv(t, opts...)
	idp := ssotest.NewProvider(t)
	p := &models.SSOProvider{Name: "corp", Strategy: strategy, Label: "Corp SSO", Enabled: true,
		ClientID: Ptr(idp.ClientID), Scopes: Ptr("openid email profile groups"), DefaultRole: models.RoleMember}
	switch strategy {
	case models.StrategyOIDC:
		p.Issuer, p.TokenAuthMethod = Ptr(idp.Issuer), Ptr(models.AuthBasic)
	case models.StrategyOAuth:
		p.AuthorizationURL, p.TokenURL, p.UserinfoURL = Ptr(idp.AuthURL), Ptr(idp.TokenURL), Ptr(idp.UserinfoURL)
		p.TokenAuthMethod, p.Scopes = Ptr(models.AuthPost), Ptr("profile email groups")
	}
	models.NewProviderID(p)
	if err := e.Store.SetProviderSecret(p, models.ColClientSecret, idp.ClientSecret); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.CreateSSOProvider(context.Background(), p, models.ProviderChange{ActorID: e.Alpha.User.ID}); err != nil {
		t.Fatal(err)
	}
	return &SSOEnv{Env: e, IdP: idp, Prov: p}
}

func Ptr(s string) *string { return &s }

// Update saves s.prov and announces it.
func (s *SSOEnv) Update(t *testing.T) {
	t.Helper()
	if err := s.Store.UpdateSSOProvider(context.Background(), s.Prov, models.ProviderChange{ActorID: s.Alpha.User.ID}); err != nil {
		t.Fatal(err)
	}
	s.changed(t)
}

// changed announces a provider change made behind the screens' back.
func (s *SSOEnv) changed(t *testing.T) {
	t.Helper()
	if err := s.RDB.Incr(context.Background(), "sso:providers:version").Err(); err != nil {
		t.Fatal(err)
	}
}

// StartSSO follows the app to the identity provider and returns the
// callback the provider sends the browser back to.
func (s *SSOEnv) StartSSO(b *Browser, path string) *url.URL {
	b.T.Helper()
	r := b.Get(path)
	if r.Status != 302 {
		b.T.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	cb, err := s.IdP.Authorize(context.Background(), r.Header.Get("Location"))
	if err != nil {
		b.T.Fatal(err)
	}
	return cb
}

// SSOLogin signs b in through "corp" and returns the callback's answer.
func (s *SSOEnv) SSOLogin(b *Browser) Response {
	b.T.Helper()
	cb := s.StartSSO(b, "/auth/corp?return_to=/settings/security")
	return b.Get(cb.RequestURI())
}

// Refused signs in through the IdP in a new browser and expects a 403
// page saying msg and, when reason is set, one login_failed record of
// that reason.
func (s *SSOEnv) Refused(t *testing.T, msg, reason string) {
	t.Helper()
	r := s.SSOLogin(s.Browser(t))
	if r.Status != 403 || !strings.Contains(string(r.Body), msg) {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
	if reason != "" && AuditCount(t, s.Env, models.EventLoginFailed, reason) != 1 {
		t.Errorf("no %s record", reason)
	}
}

func (s *SSOEnv) User(t *testing.T, email string) *models.User {
	t.Helper()
	u, err := s.Store.UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatalf("user %s: %v", email, err)
	}
	return u
}

// samlEnv is an app with a SAML provider "corp" trusting a samlidp that
// has registered the app's own metadata.
type samlEnv struct {
	*Env
	IdP  *ssotest.SAMLIdP
	Prov *models.SSOProvider
}

func NewSAMLEnv(t *testing.T, edit ...func(*models.SSOProvider)) *samlEnv {
	t.Helper()
	return NewSAMLEnvWith(t, nil, edit...)
}

// NewSAMLEnvWith is NewSAMLEnv on an app built with opts (nil: none).
func NewSAMLEnvWith(t *testing.T, opts func(*api.Options), edit ...func(*models.SSOProvider)) *samlEnv {
	t.Helper()
	var o []func(*api.Options)
	if opts != nil {
		o = append(o, opts)
	}
	e := NewEnv(t, o...)
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

// SuperAdmin signs a super admin of alpha in and returns the browser.
func SuperAdmin(t *testing.T, e *Env) *Browser {
	t.Helper()
	root := NewSuperAdmin(t, e, e.Alpha.Family)
	b := e.Browser(t)
	if r := b.Login(root.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("super admin login: %d", r.Status)
	}
	return b
}

// OIDCForm is a valid new-provider form for idp.
func OIDCForm(idp *ssotest.Provider, name string) url.Values {
	return url.Values{
		"strategy": {models.StrategyOIDC}, "name": {name}, "label": {"Corp SSO"}, "enabled": {"1"},
		"issuer": {idp.Issuer}, "client_id": {idp.ClientID}, "client_secret": {idp.ClientSecret},
		"scopes": {"openid email profile groups"}, "default_role": {models.RoleMember},
		"mapping_group": {"Finance", ""}, "mapping_role": {models.RoleAdmin, models.RoleMember},
	}
}

func ProviderNamed(t *testing.T, e *Env, name string) *models.SSOProvider {
	t.Helper()
	ps, err := e.Store.SSOProviders(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range ps {
		if ps[i].Name == name {
			return &ps[i]
		}
	}
	t.Fatalf("no provider %q", name)
	return nil
}

func AnyStrings(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func MetadataText(m map[string]any) string {
	var b strings.Builder
	for k, v := range m {
		b.WriteString(k)
		if s, ok := v.(string); ok {
			b.WriteString(s)
		}
		for _, s := range AnyStrings(v) {
			b.WriteString(s)
		}
	}
	return b.String()
}

// Member adds a member with a password to a fixture family.
func Member(t *testing.T, e *Env, familyID any, email, role string) *models.User {
	t.Helper()
	u := &models.User{Email: email, Role: role}
	switch f := familyID.(type) {
	case *models.Family:
		u.FamilyID = f.ID
	}
	if err := e.Store.CreateUser(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	SetPassword(t, e, u, "correct horse battery")
	return u
}

// NewSuperAdmin adds a super admin, named after the family, to f.
func NewSuperAdmin(t *testing.T, e *Env, f *models.Family) *models.User {
	t.Helper()
	return Member(t, e, f, "root-"+f.ID.String()[:8]+"@example.com", models.RoleSuperAdmin)
}
