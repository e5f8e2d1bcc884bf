package admin

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
	"coffer/models/secret"
	"coffer/sso"
)

type providersData struct {
	Providers []providerRow
	ReadOnly  string // yaml mode: the notice instead of the controls
	BaseURL   string
}

type providerRow struct {
	*models.SSOProvider
	CallbackURL string
	Warnings    []string
}

func (h *Handler) baseURL() string { return h.registry.Options().BaseURL }

// callbackURL is what the identity provider must be told: the OIDC/OAuth
// redirect URI or the SAML ACS URL.
func (h *Handler) callbackURL(p *models.SSOProvider) string {
	if p.Strategy == models.StrategySAML {
		return h.baseURL() + "/auth/saml/" + p.ID.String() + "/callback"
	}
	return h.baseURL() + "/auth/" + p.Name + "/callback"
}

func (h *Handler) adminListProviders(c *fiber.Ctx) error {
	ps, err := h.store.SSOProviders(c.UserContext())
	if err != nil {
		return err
	}
	d := providersData{BaseURL: h.baseURL(), ReadOnly: h.providersReadOnly()}
	plaintext := 0
	for i := range ps {
		p := &ps[i]
		row := providerRow{SSOProvider: p, CallbackURL: h.callbackURL(p), Warnings: sso.CertificateWarnings(p, h.now())}
		for _, col := range []string{models.ColClientSecret, models.ColSPPrivateKey} {
			v := models.Str(*sealedValue(p, col))
			switch {
			case v == "":
			case !secret.IsSealed(v):
				plaintext++
			default:
				if _, err := h.store.ProviderSecret(p, col); err != nil {
					row.Warnings = append(row.Warnings, "secret unreadable, enter it again")
				}
			}
		}
		d.Providers = append(d.Providers, row)
	}
	msg := ""
	if plaintext > 0 {
		msg = fmt.Sprintf("%d secrets stored in plain text; run the backfill (coffer secrets backfill).", plaintext)
	}
	return h.pages.Render(c, fiber.StatusOK, "providers", web.Page{Title: "Sign-in providers", Error: msg, Data: d})
}

func sealedValue(p *models.SSOProvider, col string) **string {
	if col == models.ColClientSecret {
		return &p.ClientSecretEnc
	}
	return &p.SPPrivateKeyEnc
}

// providersReadOnly is the notice of yaml mode, "" in db mode.
func (h *Handler) providersReadOnly() string {
	if h.providersFile == "" {
		return ""
	}
	return fmt.Sprintf("Managed by %s; restart to apply changes.", h.providersFile)
}

// writable refuses changes in yaml mode.
func (h *Handler) writable() error {
	if msg := h.providersReadOnly(); msg != "" {
		return &httperr.Error{Status: fiber.StatusForbidden, Code: "forbidden", Message: msg}
	}
	return nil
}

type providerForm struct {
	P          *models.SSOProvider
	Creating   bool
	Errors     sso.FieldErrors
	SecretSet  bool // a client secret is stored
	KeySet     bool // an SP private key is stored
	Mappings   []models.GroupMapping
	Rules      string
	Roles      []string
	Strategies []string
	Callback   string
	EntityID   string
	Metadata   string
	ConfirmSA  bool
}

func (h *Handler) providerFormPage(c *fiber.Ctx, status int, f providerForm, msg string) error {
	f.Roles = []string{models.RoleMember, models.RoleAdmin, models.RoleSuperAdmin}
	f.Strategies = []string{models.StrategyOIDC, models.StrategyOAuth, models.StrategySAML}
	f.SecretSet = f.P.ClientSecretEnc != nil
	f.KeySet = f.P.SPPrivateKeyEnc != nil
	f.Rules = models.Str(f.P.Rules)
	f.Mappings = append(slices.Clone(f.P.GroupMappings), make([]models.GroupMapping, 3)...)
	if f.P.ID.String() != "00000000-0000-0000-0000-000000000000" {
		f.Callback = h.callbackURL(f.P)
		f.EntityID = h.baseURL() + "/auth/saml/" + f.P.ID.String()
		f.Metadata = f.EntityID + "/metadata"
	} else {
		f.Callback = h.baseURL() + "/auth/<name>/callback"
	}
	title := "New sign-in provider"
	if !f.Creating {
		title = "Edit " + f.P.Label
	}
	if msg == "" && f.Errors.HasErrors() {
		msg = "The provider was not saved: correct the fields marked below."
	}
	return h.pages.Render(c, status, "provider_form", web.Page{Title: title, Error: msg, Data: f})
}

func (h *Handler) adminNewProvider(c *fiber.Ctx) error {
	if err := h.writable(); err != nil {
		return err
	}
	strategy := c.Query("strategy")
	if strategy != models.StrategyOAuth && strategy != models.StrategySAML {
		strategy = models.StrategyOIDC
	}
	p := &models.SSOProvider{Strategy: strategy, Enabled: true, DefaultRole: models.RoleMember}
	return h.providerFormPage(c, fiber.StatusOK, providerForm{P: p, Creating: true}, "")
}

func (h *Handler) adminEditProvider(c *fiber.Ctx) error {
	p, err := h.pathProvider(c)
	if err != nil {
		return err
	}
	return h.providerFormPage(c, fiber.StatusOK, providerForm{P: p}, "")
}

func (h *Handler) pathProvider(c *fiber.Ctx) (*models.SSOProvider, error) {
	id, err := httperr.PathID(c)
	if err != nil {
		return nil, err
	}
	return h.store.SSOProvider(c.UserContext(), id)
}

// providerToChange is the provider of the path, unless providers are
// read-only (see writable).
func (h *Handler) providerToChange(c *fiber.Ctx) (*models.SSOProvider, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	return h.pathProvider(c)
}

// readProviderForm copies the posted fields into p. Name and strategy are
// read on create only; blank secrets keep the stored ones.
func readProviderForm(c *fiber.Ctx, p *models.SSOProvider, creating bool) sso.ProviderSecrets {
	form := func(name string) string { return strings.TrimSpace(strings.Clone(c.FormValue(name))) }
	opt := func(name string) *string {
		if v := form(name); v != "" {
			return &v
		}
		return nil
	}
	if creating {
		p.Name, p.Strategy = form("name"), form("strategy")
	}
	p.Label = form("label")
	p.Enabled = c.FormValue("enabled") != ""
	p.DefaultRole = form("default_role")
	p.Rules = opt("rules")
	p.GroupMappings = nil
	args := c.Request().PostArgs()
	groups, roles := args.PeekMulti("mapping_group"), args.PeekMulti("mapping_role")
	for i := range groups {
		m := models.GroupMapping{Group: strings.TrimSpace(string(groups[i]))}
		if i < len(roles) {
			m.Role = string(roles[i])
		}
		if m.Group != "" {
			p.GroupMappings = append(p.GroupMappings, m)
		}
	}
	switch p.Strategy {
	case models.StrategySAML:
		p.IdPMetadataURL, p.IdPEntityID, p.IdPSSOURL, p.IdPSLOURL = opt("idp_metadata_url"), opt("idp_entity_id"), opt("idp_sso_url"), opt("idp_slo_url")
		if certs := strings.ReplaceAll(c.FormValue("idp_certificates"), "\r\n", "\n"); strings.TrimSpace(certs) != "" {
			certs = strings.TrimSpace(certs)
			p.IdPCertificates = &certs
		} else {
			p.IdPCertificates = nil
		}
		p.NameIDFormat, p.SubjectSource = opt("name_id_format"), opt("subject_source")
		p.EmailAttribute, p.GroupAttribute = opt("email_attribute"), opt("group_attribute")
		p.SignRequests, p.AllowIdPInitiated = c.FormValue("sign_requests") != "", c.FormValue("allow_idp_initiated") != ""
		if cert := strings.TrimSpace(strings.ReplaceAll(c.FormValue("sp_certificate"), "\r\n", "\n")); cert != "" {
			p.SPCertificate = &cert
		} else {
			p.SPCertificate = nil
		}
	default:
		p.Issuer, p.ClientID, p.Scopes, p.Prompt = opt("issuer"), opt("client_id"), opt("scopes"), opt("prompt")
		p.AuthorizationURL, p.TokenURL, p.UserinfoURL = opt("authorization_url"), opt("token_url"), opt("userinfo_url")
		p.TokenAuthMethod = opt("token_auth_method")
	}
	return sso.ProviderSecrets{
		ClientSecret:      strings.TrimSpace(strings.Clone(c.FormValue("client_secret"))),
		SPPrivateKey:      strings.TrimSpace(strings.ReplaceAll(c.FormValue("sp_private_key"), "\r\n", "\n")),
		ConfirmSuperAdmin: c.FormValue("confirm_super_admin") != "",
	}
}

// saveSecrets seals the secrets typed into the form; blank ones keep the
// stored values.
func (h *Handler) saveSecrets(p *models.SSOProvider, in sso.ProviderSecrets) error {
	if in.ClientSecret != "" && p.Strategy != models.StrategySAML {
		if err := h.store.SetProviderSecret(p, models.ColClientSecret, in.ClientSecret); err != nil {
			return err
		}
	}
	if in.SPPrivateKey != "" && p.Strategy == models.StrategySAML {
		if err := h.store.SetProviderSecret(p, models.ColSPPrivateKey, in.SPPrivateKey); err != nil {
			return err
		}
	}
	return nil
}

func (h *Handler) providerChange(c *fiber.Ctx, changed []string) models.ProviderChange {
	return models.ProviderChange{ActorID: web.SessionOf(c).UserID, IP: web.NonEmpty(web.ClientIP(c)),
		UserAgent: web.Clip(c.Get(fiber.HeaderUserAgent), 512), Changed: changed}
}

func (h *Handler) adminCreateProvider(c *fiber.Ctx) error {
	if err := h.writable(); err != nil {
		return err
	}
	ctx := c.UserContext()
	p := &models.SSOProvider{}
	in := readProviderForm(c, p, true)
	models.NewProviderID(p)
	if errs := sso.ValidateProvider(ctx, p, in, true, h.registry.Options()); errs.HasErrors() {
		return h.providerFormPage(c, fiber.StatusUnprocessableEntity, providerForm{P: p, Creating: true, Errors: errs, ConfirmSA: in.ConfirmSuperAdmin}, "")
	}
	if err := h.saveSecrets(p, in); err != nil {
		return err
	}
	err := h.store.CreateSSOProvider(ctx, p, h.providerChange(c, changedFields(&models.SSOProvider{}, p)))
	if errors.Is(err, models.ErrConflict) {
		return h.providerFormPage(c, fiber.StatusUnprocessableEntity, providerForm{P: p, Creating: true,
			Errors: sso.FieldErrors{"name": "Name is already used."}}, "")
	}
	if err != nil {
		return err
	}
	return h.providersChanged(c, fmt.Sprintf("%s was created.", p.Label))
}

func (h *Handler) adminUpdateProvider(c *fiber.Ctx) error {
	ctx := c.UserContext()
	old, err := h.providerToChange(c)
	if err != nil {
		return err
	}
	p := *old
	in := readProviderForm(c, &p, false)
	// The box confirms a change to super_admin; a default that already was
	// super_admin needs no new confirmation at every edit.
	in.ConfirmSuperAdmin = in.ConfirmSuperAdmin || old.DefaultRole == models.RoleSuperAdmin
	// Disabling never runs the discovery check, so a broken provider can
	// always be switched off.
	if errs := sso.ValidateProvider(ctx, &p, in, false, h.registry.Options()); errs.HasErrors() {
		return h.providerFormPage(c, fiber.StatusUnprocessableEntity, providerForm{P: &p, Errors: errs, ConfirmSA: in.ConfirmSuperAdmin}, "")
	}
	if err := h.saveSecrets(&p, in); err != nil {
		return err
	}
	if err := h.store.UpdateSSOProvider(ctx, &p, h.providerChange(c, changedFields(old, &p))); err != nil {
		return err
	}
	return h.providersChanged(c, fmt.Sprintf("%s was saved.", p.Label))
}

func (h *Handler) adminToggleProvider(c *fiber.Ctx) error {
	ctx := c.UserContext()
	old, err := h.providerToChange(c)
	if err != nil {
		return err
	}
	p := *old
	p.Enabled = !p.Enabled
	if p.Enabled {
		// Enabling is a save that leaves the provider on: it is checked.
		if errs := sso.ValidateProvider(ctx, &p, sso.ProviderSecrets{ConfirmSuperAdmin: true}, false, h.registry.Options()); errs.HasErrors() {
			return h.providerFormPage(c, fiber.StatusUnprocessableEntity, providerForm{P: &p, Errors: errs}, "")
		}
	}
	if err := h.store.SetProviderEnabled(ctx, p.ID, p.Enabled, h.providerChange(c, nil)); err != nil {
		return err
	}
	state := "disabled"
	if p.Enabled {
		state = "enabled"
	}
	return h.providersChanged(c, fmt.Sprintf("%s is %s.", p.Label, state))
}

type providerTestData struct {
	P       *models.SSOProvider
	Results []sso.CheckResult
}

func (h *Handler) adminTestProvider(c *fiber.Ctx) error {
	p, err := h.pathProvider(c)
	if err != nil {
		return err
	}
	results := sso.TestConnection(c.UserContext(), p, h.registry.Options())
	return h.pages.Render(c, fiber.StatusOK, "provider_test", web.Page{Title: "Test " + p.Label, Data: providerTestData{P: p, Results: results}})
}

type providerDeleteData struct {
	P        *models.SSOProvider
	Stranded []models.User
}

func (h *Handler) adminConfirmDeleteProvider(c *fiber.Ctx) error {
	p, err := h.providerToChange(c)
	if err != nil {
		return err
	}
	stranded, err := h.store.UsersOnlyThrough(c.UserContext(), p.ID, h.site.MayUsePassword)
	if err != nil {
		return err
	}
	return h.pages.Render(c, fiber.StatusOK, "provider_delete", web.Page{Title: "Delete " + p.Label, Data: providerDeleteData{P: p, Stranded: stranded}})
}

func (h *Handler) adminDeleteProvider(c *fiber.Ctx) error {
	if err := h.writable(); err != nil {
		return err
	}
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	if err := h.store.DeleteSSOProvider(c.UserContext(), id, h.providerChange(c, nil)); err != nil {
		return err
	}
	return h.providersChanged(c, "The provider was deleted.")
}

// providersChanged tells every web instance to reload providers and
// redirects to the list with the flash message msg, which says so when it
// could not: the change is committed, and the others pick it up within a
// minute anyway.
func (h *Handler) providersChanged(c *fiber.Ctx, msg string) error {
	if err := h.registry.Changed(c.UserContext()); err != nil {
		h.log.Error("sso: provider change not announced", "err", err)
		msg += " Other web processes apply it within a minute (Redis is unreachable)."
	}
	return h.site.Redirect(c, "/admin/sso_providers", msg)
}

// changedFields names the settings that differ, never their values.
func changedFields(a, b *models.SSOProvider) []string {
	s := models.Str
	pairs := []struct {
		name string
		same bool
	}{
		{"label", a.Label == b.Label}, {"enabled", a.Enabled == b.Enabled},
		{"issuer", s(a.Issuer) == s(b.Issuer)}, {"client_id", s(a.ClientID) == s(b.ClientID)},
		{"client_secret", s(a.ClientSecretEnc) == s(b.ClientSecretEnc)}, {"scopes", s(a.Scopes) == s(b.Scopes)},
		{"prompt", s(a.Prompt) == s(b.Prompt)}, {"authorization_url", s(a.AuthorizationURL) == s(b.AuthorizationURL)},
		{"token_url", s(a.TokenURL) == s(b.TokenURL)}, {"userinfo_url", s(a.UserinfoURL) == s(b.UserinfoURL)},
		{"token_auth_method", s(a.TokenAuthMethod) == s(b.TokenAuthMethod)},
		{"idp_metadata_url", s(a.IdPMetadataURL) == s(b.IdPMetadataURL)}, {"idp_entity_id", s(a.IdPEntityID) == s(b.IdPEntityID)},
		{"idp_sso_url", s(a.IdPSSOURL) == s(b.IdPSSOURL)}, {"idp_slo_url", s(a.IdPSLOURL) == s(b.IdPSLOURL)},
		{"idp_certificates", s(a.IdPCertificates) == s(b.IdPCertificates)}, {"name_id_format", s(a.NameIDFormat) == s(b.NameIDFormat)},
		{"subject_source", s(a.SubjectSource) == s(b.SubjectSource)}, {"email_attribute", s(a.EmailAttribute) == s(b.EmailAttribute)},
		{"group_attribute", s(a.GroupAttribute) == s(b.GroupAttribute)}, {"sign_requests", a.SignRequests == b.SignRequests},
		{"sp_private_key", s(a.SPPrivateKeyEnc) == s(b.SPPrivateKeyEnc)}, {"sp_certificate", s(a.SPCertificate) == s(b.SPCertificate)},
		{"allow_idp_initiated", a.AllowIdPInitiated == b.AllowIdPInitiated}, {"default_role", a.DefaultRole == b.DefaultRole},
		{"group_mappings", slices.Equal(a.GroupMappings, b.GroupMappings)}, {"rules", s(a.Rules) == s(b.Rules)},
	}
	changed := []string{}
	for _, p := range pairs {
		if !p.same {
			changed = append(changed, p.name)
		}
	}
	return changed
}

// providerField is the form value of an optional text column.
func providerField(p *models.SSOProvider, name string) string {
	fields := map[string]*string{
		"issuer": p.Issuer, "client_id": p.ClientID, "scopes": p.Scopes, "prompt": p.Prompt,
		"authorization_url": p.AuthorizationURL, "token_url": p.TokenURL, "userinfo_url": p.UserinfoURL,
		"token_auth_method": p.TokenAuthMethod, "idp_metadata_url": p.IdPMetadataURL, "idp_entity_id": p.IdPEntityID,
		"idp_sso_url": p.IdPSSOURL, "idp_slo_url": p.IdPSLOURL, "idp_certificates": p.IdPCertificates,
		"name_id_format": p.NameIDFormat, "subject_source": p.SubjectSource, "email_attribute": p.EmailAttribute,
		"group_attribute": p.GroupAttribute, "sp_certificate": p.SPCertificate,
	}
	return models.Str(fields[name])
}
