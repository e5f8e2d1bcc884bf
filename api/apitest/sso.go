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
