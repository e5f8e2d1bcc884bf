package sso

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"coffer/models"
)

// FieldErrors maps a form field to the message shown beside it
// (spec/sso.md §4.1). A group mapping row is named by its index in the
// submitted form, as "group_mappings[2].role". An entry whose key starts
// with WarningPrefix is a warning: shown, but it does not block saving.
type FieldErrors map[string]string

// WarningPrefix marks a FieldErrors entry that warns without blocking:
// "warning:idp_certificates" for an expired IdP certificate.
const WarningPrefix = "warning:"

// HasErrors reports whether any entry blocks saving. Use it, not len,
// to decide between saving and a 422.
func (e FieldErrors) HasErrors() bool {
	for k := range e {
		if !strings.HasPrefix(k, WarningPrefix) {
			return true
		}
	}
	return false
}

// Warnings returns the warnings by field name, without the prefix.
func (e FieldErrors) Warnings() map[string]string {
	w := map[string]string{}
	for k, v := range e {
		if f, ok := strings.CutPrefix(k, WarningPrefix); ok {
			w[f] = v
		}
	}
	return w
}

// ProviderSecrets are the form values that are not columns of the
// provider: the secrets as typed (blank on edit keeps the stored one) and
// the box confirming a super_admin default role.
type ProviderSecrets struct {
	ClientSecret      string
	SPPrivateKey      string // PEM
	ConfirmSuperAdmin bool
}

// LogValue keeps the secrets out of logs.
func (s ProviderSecrets) LogValue() slog.Value {
	return slog.GroupValue(slog.Bool("client_secret_set", s.ClientSecret != ""),
		slog.Bool("sp_private_key_set", s.SPPrivateKey != ""), slog.Bool("confirm_super_admin", s.ConfirmSuperAdmin))
}

// Messages of the provider form that the spec words.
const (
	MsgRequired          = "Required."
	MsgNamePattern       = "Use lowercase letters, digits, - and _; start with a letter."
	MsgNameLength        = "Use 2 to 40 characters."
	MsgNameReserved      = "This name is reserved."
	MsgGroupsScope       = "Group mappings need the groups scope."
	MsgGroupAttribute    = "Group mappings need a group attribute."
	MsgTransientNameID   = "A transient NameID changes at every login; use persistent or the email attribute."
	MsgKeyMismatch       = "The private key does not match the certificate."
	MsgConfirmSuperAdmin = "Every account created through this provider becomes a super admin."
	MsgRole              = "Choose member, admin or super_admin."
)

// reservedNames collide with the paths under /auth.
var reservedNames = []string{"saml", "link", "logout", "failure", "callback", "metadata", "new"}

// ValidateName checks a provider name, the callback path segment: 2 to
// 40 characters of ^[a-z][a-z0-9_-]*$, not a reserved word. Uniqueness is
// the store's to check. The error's text is the form message.
func ValidateName(name string) error {
	if name == "" {
		return message(MsgRequired)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		lower := c >= 'a' && c <= 'z'
		if !lower && (i == 0 || !(c >= '0' && c <= '9' || c == '-' || c == '_')) {
			return message(MsgNamePattern)
		}
	}
	if len(name) < 2 || len(name) > 40 {
		return message(MsgNameLength)
	}
	if slices.Contains(reservedNames, name) {
		return message(MsgNameReserved)
	}
	return nil
}

// ValidateProvider checks a provider as submitted on the admin form and
// fills in what the spec defaults: OIDC scopes, token auth method, SAML
// NameID format and subject source, default role; it trims text fields,
// drops empty group mapping rows and, for SAML with a metadata URL, fills
// empty entity ID, SSO URL, SLO URL and certificates from the metadata.
// So p is changed, and is what to save when nothing blocks.
//
// creating is true for a new provider. An OIDC provider's discovery
// document is checked on create and on any update that leaves it enabled
// (p.Enabled), never when disabling. Name uniqueness is the caller's.
// On edit, a blank in.SPPrivateKey keeps the stored key (p.SPPrivateKeyEnc),
// whose match with the certificate is then not checked; pass the opened
// stored key to check it against a new certificate.
func ValidateProvider(ctx context.Context, p *models.SSOProvider, in ProviderSecrets, creating bool, o Options) FieldErrors {
	e := FieldErrors{}
	p.Name = strings.TrimSpace(p.Name)
	if err := ValidateName(p.Name); err != nil {
		e["name"] = err.Error()
	}
	p.Label = strings.TrimSpace(p.Label)
	switch n := utf8.RuneCountInString(p.Label); {
	case n == 0:
		e["label"] = MsgRequired
	case n > 60:
		e["label"] = "Use at most 60 characters."
	}

	p.DefaultRole = strings.TrimSpace(p.DefaultRole)
	if p.DefaultRole == "" {
		p.DefaultRole = models.RoleMember
	}
	switch {
	case !models.ValidRole(p.DefaultRole):
		e["default_role"] = MsgRole
	case p.DefaultRole == models.RoleSuperAdmin && !in.ConfirmSuperAdmin:
		e["default_role"] = MsgConfirmSuperAdmin
	}
	validateMappings(p, e)
	if text := trim(&p.Rules); text != "" {
		if _, err := models.ParseRoleMapping(text, p.Strategy); err != nil {
			e["rules"] = err.Error()
		}
	}

	switch p.Strategy {
	case models.StrategyOIDC:
		validateOIDC(ctx, p, in, creating, o, e)
	case models.StrategyOAuth:
		validateOAuth(p, in, creating, e)
	case models.StrategySAML:
		validateSAML(ctx, p, in, creating, o, e)
	default:
		e["strategy"] = "Choose openid_connect, oauth2 or saml."
	}
	return e
}

func validateMappings(p *models.SSOProvider, e FieldErrors) {
	kept := []models.GroupMapping{}
	for i, m := range p.GroupMappings {
		m.Role = strings.TrimSpace(m.Role)
		if strings.TrimSpace(m.Group) == "" && m.Role == "" {
			continue
		}
		if n := utf8.RuneCountInString(m.Group); strings.TrimSpace(m.Group) == "" || n > 256 {
			e[fmt.Sprintf("group_mappings[%d].group", i)] = "Use 1 to 256 characters."
		}
		if !models.ValidRole(m.Role) {
			e[fmt.Sprintf("group_mappings[%d].role", i)] = MsgRole
		}
		kept = append(kept, m)
	}
	p.GroupMappings = kept
}

func validateOIDC(ctx context.Context, p *models.SSOProvider, in ProviderSecrets, creating bool, o Options, e FieldErrors) {
	issuerOK := requireURL(&p.Issuer, "issuer", e)
	validateClient(p, in, creating, e)
	scopes := validateScopes(p, e)
	if scopes == "" {
		scopes = "openid email profile"
		p.Scopes = &scopes
	}
	if _, bad := e["scopes"]; !bad {
		fields := strings.Fields(scopes)
		switch {
		case !slices.Contains(fields, "openid"):
			e["scopes"] = "Scopes must include openid."
		case len(p.GroupMappings) > 0 && !slices.Contains(fields, "groups"):
			e["scopes"] = MsgGroupsScope
		}
	}
	switch trim(&p.Prompt) {
	case "", "login", "consent", "select_account", "none":
	default:
		e["prompt"] = "Choose login, consent, select_account or none, or leave it empty."
	}
	validateAuthMethod(p, models.AuthBasic, e)
	if issuerOK && (creating || p.Enabled) {
		if err := CheckDiscovery(ctx, *p.Issuer, o.HTTPClient); err != nil {
			e["issuer"] = err.Error()
		}
	}
}

func validateOAuth(p *models.SSOProvider, in ProviderSecrets, creating bool, e FieldErrors) {
	validateClient(p, in, creating, e)
	requireURL(&p.AuthorizationURL, "authorization_url", e)
	requireURL(&p.TokenURL, "token_url", e)
	requireURL(&p.UserinfoURL, "userinfo_url", e)
	validateScopes(p, e)
	validateAuthMethod(p, models.AuthPost, e)
}

func validateClient(p *models.SSOProvider, in ProviderSecrets, creating bool, e FieldErrors) {
	switch id := trim(&p.ClientID); {
	case id == "":
		e["client_id"] = MsgRequired
	case len(id) > 512:
		e["client_id"] = "Use at most 512 characters."
	}
	if in.ClientSecret == "" && (creating || p.ClientSecretEnc == nil) {
		e["client_secret"] = MsgRequired
	}
}

// validateScopes normalizes the space-separated scopes and returns them.
func validateScopes(p *models.SSOProvider, e FieldErrors) string {
	scopes := strings.Join(strings.Fields(models.Str(p.Scopes)), " ")
	setOptional(&p.Scopes, scopes)
	for _, r := range scopes {
		// RFC 6749 §3.3 scope-token characters, and the separating space.
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			e["scopes"] = "Use printable ASCII scope names separated by spaces."
			break
		}
	}
	return scopes
}

func validateAuthMethod(p *models.SSOProvider, def string, e FieldErrors) {
	switch trim(&p.TokenAuthMethod) {
	case "":
		p.TokenAuthMethod = &def
	case models.AuthPost, models.AuthBasic:
	default:
		e["token_auth_method"] = "Choose client_secret_post or client_secret_basic."
	}
}

// trim trims an optional column in place, setting it to nil when blank,
// and returns its value.
func trim(v **string) string {
	s := strings.TrimSpace(models.Str(*v))
	setOptional(v, s)
	return s
}

func setOptional(v **string, s string) {
	if s == "" {
		*v = nil
		return
	}
	*v = &s
}

// requireURL checks a required URL field and reports whether it is valid.
func requireURL(v **string, field string, e FieldErrors) bool {
	s := trim(v)
	if s == "" {
		e[field] = MsgRequired
		return false
	}
	return optionalURL(s, field, e)
}

func optionalURL(s, field string, e FieldErrors) bool {
	if msg := checkURL(s); msg != "" {
		e[field] = msg
		return false
	}
	return true
}

// checkURL is the URL rule of the provider form: absolute, https (http
// only for loopback hosts), no credentials, query or fragment. It returns
// the message, or "".
func checkURL(s string) string {
	if len(s) > 2048 {
		return "Use at most 2048 characters."
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return "Enter an absolute URL."
	}
	if u.User != nil {
		return "Remove the user name and password from the URL."
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#") {
		return "Remove the query and fragment."
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme == "https" || scheme == "http" && loopback(u.Hostname()) {
		return ""
	}
	return "Use https (http only for 127.0.0.1, ::1 or localhost)."
}

func loopback(host string) bool {
	return host == "127.0.0.1" || host == "::1" || strings.EqualFold(host, "localhost")
}
