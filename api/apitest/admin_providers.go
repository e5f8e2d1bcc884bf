package apitest

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"coffer/models"
	"coffer/sso/ssotest"
)

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
