package sso

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"coffer/models"
)

func strp(s string) *string { return &s }

type validateCase struct {
	name  string
	edit  bool // an update; otherwise a create
	p     func(p *models.SSOProvider)
	in    func(in *ProviderSecrets)
	want  FieldErrors
	check func(t *testing.T, p *models.SSOProvider)
}

func runValidate(t *testing.T, base func() *models.SSOProvider, o Options, tests []validateCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base()
			if tt.p != nil {
				tt.p(p)
			}
			in := ProviderSecrets{ClientSecret: "s3cret"}
			if tt.edit {
				in.ClientSecret = ""
				p.ClientSecretEnc = strp("enc:v1:stored")
			}
			if tt.in != nil {
				tt.in(&in)
			}
			got := ValidateProvider(context.Background(), p, in, !tt.edit, o)
			want := tt.want
			if want == nil {
				want = FieldErrors{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ValidateProvider =\n %q\n want\n %q", got, want)
			}
			if tt.check != nil {
				tt.check(t, p)
			}
		})
	}
}

func TestValidateProviderOIDC(t *testing.T) {
	good := newFakeIssuer(t, nil)
	broken := newFakeIssuer(t, func(f *fakeIssuer) { f.code = http.StatusInternalServerError })
	o := Options{HTTPClient: good.srv.Client(), Now: func() time.Time { return testNow }}
	base := func() *models.SSOProvider {
		return &models.SSOProvider{Name: "okta", Label: "Okta", Strategy: models.StrategyOIDC, Enabled: true,
			Issuer: strp(good.srv.URL), ClientID: strp("coffer")}
	}
	long := strings.Repeat("a", 41)
	runValidate(t, base, o, []validateCase{
		{name: "valid, defaults filled in", check: func(t *testing.T, p *models.SSOProvider) {
			if models.Str(p.Scopes) != "openid email profile" || models.Str(p.TokenAuthMethod) != models.AuthBasic ||
				p.DefaultRole != models.RoleMember || p.GroupMappings == nil || p.Prompt != nil {
				t.Errorf("defaults: scopes %q, auth %q, role %q, mappings %v, prompt %v", models.Str(p.Scopes),
					models.Str(p.TokenAuthMethod), p.DefaultRole, p.GroupMappings, p.Prompt)
			}
		}},
		{name: "fields trimmed", p: func(p *models.SSOProvider) {
			p.Name, p.Label, p.ClientID = " okta ", " Okta ", strp(" coffer ")
			p.Scopes = strp("  openid   email ")
		}, check: func(t *testing.T, p *models.SSOProvider) {
			if p.Name != "okta" || p.Label != "Okta" || *p.ClientID != "coffer" || *p.Scopes != "openid email" {
				t.Errorf("not trimmed: %q %q %q %q", p.Name, p.Label, *p.ClientID, *p.Scopes)
			}
		}},
		{name: "name reserved", p: func(p *models.SSOProvider) { p.Name = "saml" }, want: FieldErrors{"name": MsgNameReserved}},
		{name: "name not a slug", p: func(p *models.SSOProvider) { p.Name = "Okta!" }, want: FieldErrors{"name": MsgNamePattern}},
		{name: "name starts with a digit", p: func(p *models.SSOProvider) { p.Name = "1okta" }, want: FieldErrors{"name": MsgNamePattern}},
		{name: "name too short", p: func(p *models.SSOProvider) { p.Name = "o" }, want: FieldErrors{"name": MsgNameLength}},
		{name: "name too long", p: func(p *models.SSOProvider) { p.Name = long }, want: FieldErrors{"name": MsgNameLength}},
		{name: "name missing", p: func(p *models.SSOProvider) { p.Name = "" }, want: FieldErrors{"name": MsgRequired}},
		{name: "label missing", p: func(p *models.SSOProvider) { p.Label = "  " }, want: FieldErrors{"label": MsgRequired}},
		{name: "label too long", p: func(p *models.SSOProvider) { p.Label = strings.Repeat("é", 61) },
			want: FieldErrors{"label": "Use at most 60 characters."}},
		{name: "label of 60 characters", p: func(p *models.SSOProvider) { p.Label = strings.Repeat("é", 60) }},
		{name: "unknown strategy", p: func(p *models.SSOProvider) { p.Strategy = "ldap" },
			want: FieldErrors{"strategy": "Choose openid_connect, oauth2 or saml."}},

		{name: "issuer missing", p: func(p *models.SSOProvider) { p.Issuer = nil }, want: FieldErrors{"issuer": MsgRequired}},
		{name: "issuer relative", p: func(p *models.SSOProvider) { p.Issuer = strp("idp.example/realm") },
			want: FieldErrors{"issuer": "Enter an absolute URL."}},
		{name: "issuer http off loopback", p: func(p *models.SSOProvider) { p.Issuer = strp("http://idp.example") },
			want: FieldErrors{"issuer": "Use https (http only for 127.0.0.1, ::1 or localhost)."}},
		{name: "issuer other scheme", p: func(p *models.SSOProvider) { p.Issuer = strp("ftp://idp.example") },
			want: FieldErrors{"issuer": "Use https (http only for 127.0.0.1, ::1 or localhost)."}},
		{name: "issuer with query", p: func(p *models.SSOProvider) { p.Issuer = strp("https://idp.example/?a=1") },
			want: FieldErrors{"issuer": "Remove the query and fragment."}},
		{name: "issuer with fragment", p: func(p *models.SSOProvider) { p.Issuer = strp("https://idp.example/#x") },
			want: FieldErrors{"issuer": "Remove the query and fragment."}},
		{name: "issuer with credentials", p: func(p *models.SSOProvider) { p.Issuer = strp("https://u:p@idp.example") },
			want: FieldErrors{"issuer": "Remove the user name and password from the URL."}},
		{name: "discovery fails on create", p: func(p *models.SSOProvider) { p.Issuer = strp(broken.srv.URL) },
			want: FieldErrors{"issuer": "The discovery document returned HTTP 500."}},
		{name: "discovery fails on create while disabled", p: func(p *models.SSOProvider) {
			p.Issuer, p.Enabled = strp(broken.srv.URL), false
		}, want: FieldErrors{"issuer": "The discovery document returned HTTP 500."}},
		{name: "discovery fails on an update that keeps it enabled", edit: true,
			p:    func(p *models.SSOProvider) { p.Issuer = strp(broken.srv.URL) },
			want: FieldErrors{"issuer": "The discovery document returned HTTP 500."}},
		{name: "disabling never runs discovery", edit: true,
			p: func(p *models.SSOProvider) { p.Issuer, p.Enabled = strp(broken.srv.URL), false }},
		{name: "issuer mismatch by a trailing slash", p: func(p *models.SSOProvider) { p.Issuer = strp(good.srv.URL + "/") },
			want: FieldErrors{"issuer": fmt.Sprintf("Issuer mismatch: configured %s/, provider says %s (differs only by a trailing slash).",
				good.srv.URL, good.srv.URL)}},

		{name: "client id missing", p: func(p *models.SSOProvider) { p.ClientID = strp(" ") }, want: FieldErrors{"client_id": MsgRequired}},
		{name: "client secret missing on create", in: func(in *ProviderSecrets) { in.ClientSecret = "" },
			want: FieldErrors{"client_secret": MsgRequired}},
		{name: "blank secret on edit keeps the stored one", edit: true},
		{name: "scopes without openid", p: func(p *models.SSOProvider) { p.Scopes = strp("email profile") },
			want: FieldErrors{"scopes": "Scopes must include openid."}},
		{name: "scopes with a quote", p: func(p *models.SSOProvider) { p.Scopes = strp(`openid "email"`) },
			want: FieldErrors{"scopes": "Use printable ASCII scope names separated by spaces."}},
		{name: "group mappings without the groups scope", p: func(p *models.SSOProvider) {
			p.GroupMappings = []models.GroupMapping{{Group: "admins", Role: models.RoleAdmin}}
		}, want: FieldErrors{"scopes": MsgGroupsScope}},
		{name: "group mappings with the groups scope", p: func(p *models.SSOProvider) {
			p.Scopes = strp("openid email groups")
			p.GroupMappings = []models.GroupMapping{{Group: "admins", Role: models.RoleAdmin}}
		}},
		{name: "only empty mapping rows need no groups scope", p: func(p *models.SSOProvider) {
			p.GroupMappings = []models.GroupMapping{{Group: " ", Role: ""}, {}}
		}, check: func(t *testing.T, p *models.SSOProvider) {
			if len(p.GroupMappings) != 0 || p.GroupMappings == nil {
				t.Errorf("mappings = %#v, want empty", p.GroupMappings)
			}
		}},
		{name: "prompt", p: func(p *models.SSOProvider) { p.Prompt = strp("select_account") }},
		{name: "prompt unknown", p: func(p *models.SSOProvider) { p.Prompt = strp("always") },
			want: FieldErrors{"prompt": "Choose login, consent, select_account or none, or leave it empty."}},
		{name: "token auth post", p: func(p *models.SSOProvider) { p.TokenAuthMethod = strp(models.AuthPost) },
			check: func(t *testing.T, p *models.SSOProvider) {
				if *p.TokenAuthMethod != models.AuthPost {
					t.Errorf("token auth = %q", *p.TokenAuthMethod)
				}
			}},
		{name: "token auth unknown", p: func(p *models.SSOProvider) { p.TokenAuthMethod = strp("private_key_jwt") },
			want: FieldErrors{"token_auth_method": "Choose client_secret_post or client_secret_basic."}},

		{name: "default role super_admin unconfirmed", p: func(p *models.SSOProvider) { p.DefaultRole = models.RoleSuperAdmin },
			want: FieldErrors{"default_role": MsgConfirmSuperAdmin}},
		{name: "default role super_admin confirmed", p: func(p *models.SSOProvider) { p.DefaultRole = models.RoleSuperAdmin },
			in: func(in *ProviderSecrets) { in.ConfirmSuperAdmin = true }},
		{name: "default role unknown", p: func(p *models.SSOProvider) { p.DefaultRole = "owner" },
			want: FieldErrors{"default_role": MsgRole}},
		{name: "mapping rows", p: func(p *models.SSOProvider) {
			p.Scopes = strp("openid groups")
			p.GroupMappings = []models.GroupMapping{
				{Group: "ok", Role: "admin"}, {}, {Group: strings.Repeat("g", 257), Role: "member"},
				{Group: "x", Role: "owner"}, {Group: "", Role: "admin"}, {Group: strings.Repeat("g", 256), Role: " member "},
			}
		}, want: FieldErrors{
			"group_mappings[2].group": "Use 1 to 256 characters.",
			"group_mappings[3].role":  MsgRole,
			"group_mappings[4].group": "Use 1 to 256 characters.",
		}, check: func(t *testing.T, p *models.SSOProvider) {
			if len(p.GroupMappings) != 5 || p.GroupMappings[4].Role != "member" {
				t.Errorf("mappings = %d rows, last %+v", len(p.GroupMappings), p.GroupMappings[len(p.GroupMappings)-1])
			}
		}},
		{name: "rules invalid", p: func(p *models.SSOProvider) { p.Rules = strp(`{"conditions": [{"value": 1, "role": "admin"}]}`) },
			want: FieldErrors{"rules": "rules.conditions[0]: attribute is required"}},
		{name: "rules blank cleared", p: func(p *models.SSOProvider) { p.Rules = strp("  ") },
			check: func(t *testing.T, p *models.SSOProvider) {
				if p.Rules != nil {
					t.Errorf("rules = %q, want nil", *p.Rules)
				}
			}},
		{name: "rules groups mapping allowed for OIDC", p: func(p *models.SSOProvider) {
			p.Rules = strp(`{"custom_mappings": {"groups": "roles"}}`)
		}},
		{name: "several errors at once", p: func(p *models.SSOProvider) {
			p.Name, p.Label, p.Issuer = "new", "", strp("http://idp.example")
		}, in: func(in *ProviderSecrets) { in.ClientSecret = "" }, want: FieldErrors{
			"name": MsgNameReserved, "label": MsgRequired, "client_secret": MsgRequired,
			"issuer": "Use https (http only for 127.0.0.1, ::1 or localhost).",
		}},
	})
}

func TestValidateProviderOIDCSecretNoneStored(t *testing.T) {
	f := newFakeIssuer(t, nil)
	p := &models.SSOProvider{Name: "okta", Label: "Okta", Strategy: models.StrategyOIDC, Enabled: true,
		Issuer: strp(f.srv.URL), ClientID: strp("coffer")}
	got := ValidateProvider(context.Background(), p, ProviderSecrets{}, false, Options{HTTPClient: f.srv.Client()})
	if want := (FieldErrors{"client_secret": MsgRequired}); !reflect.DeepEqual(got, want) {
		t.Errorf("ValidateProvider = %q, want %q", got, want)
	}
}

func TestValidateProviderOAuth(t *testing.T) {
	base := func() *models.SSOProvider {
		return &models.SSOProvider{Name: "github", Label: "GitHub", Strategy: models.StrategyOAuth, Enabled: true,
			ClientID: strp("coffer"), AuthorizationURL: strp("https://github.com/login/oauth/authorize"),
			TokenURL: strp("https://github.com/login/oauth/access_token"), UserinfoURL: strp("https://api.github.com/user")}
	}
	runValidate(t, base, Options{}, []validateCase{
		{name: "valid, post by default, no scopes needed", check: func(t *testing.T, p *models.SSOProvider) {
			if models.Str(p.TokenAuthMethod) != models.AuthPost || p.Scopes != nil {
				t.Errorf("auth %q scopes %v", models.Str(p.TokenAuthMethod), p.Scopes)
			}
		}},
		{name: "loopback http URLs", p: func(p *models.SSOProvider) {
			p.AuthorizationURL, p.TokenURL, p.UserinfoURL = strp("http://127.0.0.1:5556/auth"),
				strp("http://localhost:5556/token"), strp("http://[::1]:5556/userinfo")
		}},
		{name: "URLs missing", p: func(p *models.SSOProvider) { p.AuthorizationURL, p.TokenURL, p.UserinfoURL = nil, strp(""), nil },
			want: FieldErrors{"authorization_url": MsgRequired, "token_url": MsgRequired, "userinfo_url": MsgRequired}},
		{name: "URL rule", p: func(p *models.SSOProvider) {
			p.AuthorizationURL, p.TokenURL, p.UserinfoURL = strp("http://10.0.0.1/auth"), strp("/token"), strp("https://api.example/u?x")
		}, want: FieldErrors{"authorization_url": "Use https (http only for 127.0.0.1, ::1 or localhost).",
			"token_url": "Enter an absolute URL.", "userinfo_url": "Remove the query and fragment."}},
		{name: "group mappings need no groups scope", p: func(p *models.SSOProvider) {
			p.GroupMappings = []models.GroupMapping{{Group: "org/admins", Role: models.RoleAdmin}}
		}},
		{name: "subject mapping allowed", p: func(p *models.SSOProvider) { p.Rules = strp(`{"custom_mappings": {"subject": "id"}}`) }},
		{name: "basic", p: func(p *models.SSOProvider) { p.TokenAuthMethod = strp(models.AuthBasic) }},
		{name: "client missing", p: func(p *models.SSOProvider) { p.ClientID = nil },
			in:   func(in *ProviderSecrets) { in.ClientSecret = "" },
			want: FieldErrors{"client_id": MsgRequired, "client_secret": MsgRequired}},
	})
}

func TestCheckURL(t *testing.T) {
	tests := map[string]string{
		"https://idp.example":                  "",
		"https://idp.example:8443/realms/a/":   "",
		"HTTPS://IDP.EXAMPLE":                  "",
		"http://127.0.0.1:8080":                "",
		"http://[::1]/":                        "",
		"http://LOCALHOST/x":                   "",
		"http://127.0.0.2":                     "Use https (http only for 127.0.0.1, ::1 or localhost).",
		"http://localhost.evil.example":        "Use https (http only for 127.0.0.1, ::1 or localhost).",
		"javascript:alert(1)":                  "Enter an absolute URL.",
		"https:///path":                        "Enter an absolute URL.",
		"https://idp.example/?":                "Remove the query and fragment.",
		"https://idp.example/#":                "Remove the query and fragment.",
		"https://idp.example/%zz":              "Enter an absolute URL.",
		"https://" + strings.Repeat("a", 2048): "Use at most 2048 characters.",
	}
	for in, want := range tests {
		if got := checkURL(in); got != want {
			t.Errorf("checkURL(%.40q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidateName(t *testing.T) {
	tests := map[string]string{
		"okta": "", "ok": "", "a-b_c9": "", strings.Repeat("a", 40): "",
		"": MsgRequired, "o": MsgNameLength, strings.Repeat("a", 41): MsgNameLength,
		"Okta": MsgNamePattern, "Okta!": MsgNamePattern, "_okta": MsgNamePattern, "-okta": MsgNamePattern,
		"9okta": MsgNamePattern, "ok ta": MsgNamePattern, "okta/x": MsgNamePattern, "økta": MsgNamePattern,
		"saml": MsgNameReserved, "link": MsgNameReserved, "logout": MsgNameReserved, "failure": MsgNameReserved,
		"callback": MsgNameReserved, "metadata": MsgNameReserved, "new": MsgNameReserved,
	}
	for in, want := range tests {
		err := ValidateName(in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("ValidateName(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzProviderName(f *testing.F) {
	for _, s := range []string{"okta", "saml", "Okta!", "a", "", "new", "a-b_c", "ok\x00", "ökta", strings.Repeat("z", 41)} {
		f.Add(s)
	}
	slug := regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	messages := []string{MsgRequired, MsgNamePattern, MsgNameLength, MsgNameReserved}
	f.Fuzz(func(t *testing.T, name string) {
		err := ValidateName(name)
		valid := slug.MatchString(name) && len(name) >= 2 && len(name) <= 40 &&
			!strings.Contains(" saml link logout failure callback metadata new ", " "+name+" ")
		if (err == nil) != valid {
			t.Fatalf("ValidateName(%q) = %v, want valid %v", name, err, valid)
		}
		if err != nil {
			found := false
			for _, m := range messages {
				found = found || err.Error() == m
			}
			if !found {
				t.Fatalf("ValidateName(%q): unexpected message %q", name, err)
			}
		}
	})
}
