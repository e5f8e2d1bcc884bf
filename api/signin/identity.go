package signin

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/web"
	"coffer/models"
	"coffer/sso"
)

// JIT modes.
const (
	JITCreateAndLink = "create_and_link"
	JITLinkOnly      = "link_only"
)

// resolveIdentity turns a verified identity into a session, a link or a
// new account (spec/sso.md §6.4). Identities are found by provider and
// subject only, never by email.
func (h *Handler) resolveIdentity(c *fiber.Ctx, e *sso.Entry, id *sso.Identity, intent string, linkUser *uuid.UUID, returnTo string) error {
	return h.resolveOnce(c, e, id, intent, linkUser, returnTo, true)
}

func (h *Handler) resolveOnce(c *fiber.Ctx, e *sso.Entry, id *sso.Identity, intent string, linkUser *uuid.UUID, returnTo string, retry bool) error {
	ctx := c.UserContext()
	p := e.Provider
	if problem := cleanIdentity(id); problem != "" {
		reason := sso.ReasonUserinfoInvalid
		if p.Strategy == models.StrategySAML {
			reason = sso.ReasonSAMLInvalid
		}
		return h.ssoRefused(c, e, fiber.StatusBadRequest, reason,
			fmt.Sprintf("The sign-in response from %s could not be accepted.", p.Label), problem, nil)
	}
	known, err := h.store.IdentityBySubject(ctx, p.ID, id.Subject)
	if err == nil {
		return h.knownIdentity(c, e, known, id, intent, linkUser, returnTo)
	}
	if !errors.Is(err, models.ErrNotFound) {
		return err
	}
	if intent == intentLink && linkUser != nil {
		return h.startPending(c, p, id, pendingLink{Intent: intentLink, User: *linkUser, ReturnTo: "/settings/security"})
	}
	if id.Email == "" || !id.EmailVerified {
		return h.ssoRefused(c, e, fiber.StatusForbidden, sso.ReasonEmailUnverified,
			fmt.Sprintf("%s has not confirmed your email address, so it cannot be used to create or link an account.", p.Label), "", nil)
	}
	owner, err := h.store.UserByEmail(ctx, id.Email)
	if err == nil {
		return h.startPending(c, p, id, pendingLink{Intent: intentLogin, User: owner.ID, ReturnTo: returnTo})
	}
	if !errors.Is(err, models.ErrNotFound) {
		return err
	}
	if h.sso.JITMode == JITLinkOnly {
		return h.ssoRefused(c, e, fiber.StatusForbidden, sso.ReasonJITDisabled, fmt.Sprintf(
			"No account exists for %s, and accounts cannot be created through single sign-on here. Contact an administrator.", id.Email), "", nil)
	}
	if !h.domainAllowed(id.Email) {
		return h.ssoRefused(c, e, fiber.StatusForbidden, sso.ReasonDomainNotAllowed,
			"New accounts can only be created for approved email domains.", "", nil)
	}
	err = h.createJITAccount(c, e, id, returnTo)
	if errors.Is(err, models.ErrConflict) && retry {
		// Another tab created the account or identity first: resolve again,
		// which now ends at the known identity or the link page.
		return h.resolveOnce(c, e, id, intent, linkUser, returnTo, false)
	}
	return err
}

func (h *Handler) knownIdentity(c *fiber.Ctx, e *sso.Entry, known *models.SSOIdentity, id *sso.Identity, intent string, linkUser *uuid.UUID, returnTo string) error {
	ctx := c.UserContext()
	p := e.Provider
	if p.Strategy == models.StrategyOIDC && models.Str(known.Issuer) != "" && models.Str(known.Issuer) != id.Issuer {
		return h.ssoRefused(c, e, fiber.StatusForbidden, sso.ReasonIssuerMismatch,
			"This account's identity provider has changed. Contact an administrator.", "issuer differs from the stored one", &known.UserID)
	}
	if intent == intentLink && linkUser != nil {
		if known.UserID != *linkUser {
			return h.ssoRefused(c, e, fiber.StatusConflict, sso.ReasonLinkedElsewhere,
				fmt.Sprintf("This %s account is already linked to another user.", p.Label), "", linkUser)
		}
		return h.site.Redirect(c, "/settings/security", "Already connected.")
	}
	u, err := h.store.UserByID(ctx, known.UserID)
	if err != nil {
		return err
	}
	if u.Status != models.UserActive {
		return h.ssoRefused(c, e, fiber.StatusForbidden, sso.ReasonSuspended,
			"Your account has been suspended. Contact an administrator.", "", &u.ID)
	}
	return h.ssoLogin(c, e, u, known, id, returnTo, models.RoleSourceLogin, nil)
}

// domainAllowed applies ALLOWED_OIDC_DOMAINS to account creation: the text
// after the last @, exact and case-insensitive; an empty list allows all.
func (h *Handler) domainAllowed(email string) bool {
	if len(h.sso.AllowedDomains) == 0 {
		return true
	}
	domain := strings.ToLower(email[strings.LastIndex(email, "@")+1:])
	for _, d := range h.sso.AllowedDomains {
		if d == domain {
			return true
		}
	}
	return false
}

// createJITAccount makes a family, its first user (who administers it)
// and the identity in one transaction, then signs the user in.
func (h *Handler) createJITAccount(c *fiber.Ctx, e *sso.Entry, id *sso.Identity, returnTo string) error {
	p := e.Provider
	name := id.FirstName
	if name == "" {
		name, _, _ = strings.Cut(id.Email, "@")
	}
	role := models.RoleAdmin
	if p.DefaultRole == models.RoleSuperAdmin {
		role = models.RoleSuperAdmin
	}
	u := &models.User{Email: id.Email, Role: role, FirstName: web.NonEmpty(id.FirstName), LastName: web.NonEmpty(id.LastName)}
	ident := &models.SSOIdentity{}
	return h.ssoLoginTx(c, e, u, ident, id, returnTo, models.RoleSourceJIT, func(tx *models.Store) error {
		f := &models.Family{Name: web.CleanText(name, 100), Currency: "USD"}
		if err := tx.CreateFamily(c.UserContext(), f); err != nil {
			return err
		}
		u.FamilyID = f.ID
		if err := tx.CreateUser(c.UserContext(), u); err != nil {
			return err
		}
		ident.UserID = u.ID
		return nil
	}, func(tx *models.Store, login map[string]any) error {
		return tx.CreateAuditLog(c.UserContext(), h.ssoAudit(c, e, models.EventJITCreated, &u.ID, map[string]any{
			"identity_id": ident.ID.String(), "family_id": u.FamilyID.String(), "role": login["role"],
		}))
	})
}

// ssoLogin signs u in through identity ident (nil ID: a new link).
func (h *Handler) ssoLogin(c *fiber.Ctx, e *sso.Entry, u *models.User, ident *models.SSOIdentity, id *sso.Identity, returnTo, source string, after func(tx *models.Store, login map[string]any) error) error {
	return h.ssoLoginTx(c, e, u, ident, id, returnTo, source, nil, after)
}

// ssoLoginTx does, in one transaction: before (JIT creation), the identity
// insert or update with role mapping, the session, the login record, and
// after (link and JIT records). Then it sets the cookie.
func (h *Handler) ssoLoginTx(c *fiber.Ctx, e *sso.Entry, u *models.User, ident *models.SSOIdentity, id *sso.Identity, returnTo, source string, before func(tx *models.Store) error, after func(tx *models.Store, login map[string]any) error) error {
	ctx := c.UserContext()
	var token string
	err := h.store.RunInTx(ctx, func(tx *models.Store) error {
		// When this login may change a role, the role lock comes first, as
		// on every path that changes roles, so that this transaction and an
		// admin's cannot wait on each other.
		if e.Provider.HasMappings() {
			if err := tx.LockRoles(ctx); err != nil {
				return err
			}
		}
		if before != nil {
			if err := before(tx); err != nil {
				return err
			}
		}
		meta, err := h.applyIdentity(c, tx, e, u, ident, id, source)
		if err != nil {
			return err
		}
		sess := &models.Session{UserID: u.ID, Method: models.MethodSSO, ProviderID: &e.Provider.ID, IP: web.NonEmpty(c.IP()),
			UserAgent: web.Clip(c.Get(fiber.HeaderUserAgent), 512), SAMLNameID: web.NonEmpty(id.NameID), SAMLSessionIndex: web.NonEmpty(id.SessionIndex)}
		if token, err = tx.CreateSSOSession(ctx, sess, id.IDToken, h.web.SessionMaxAge); err != nil {
			return err
		}
		if err := tx.RecordLogin(ctx, u.ID, nil); err != nil {
			return err
		}
		if after != nil {
			if err := after(tx, meta); err != nil {
				return err
			}
		}
		return tx.CreateAuditLog(ctx, h.ssoAudit(c, e, models.EventLogin, &u.ID, meta))
	})
	if err != nil {
		return err
	}
	h.site.SetSessionCookie(c, token)
	return c.Redirect(web.SafeReturnTo(returnTo), fiber.StatusSeeOther)
}

// applyIdentity stores the identity (ident.ID unset: a new link) with what
// the provider said, fills blank names and recomputes the role when the
// provider has mappings. It returns the metadata of the login record.
func (h *Handler) applyIdentity(c *fiber.Ctx, tx *models.Store, e *sso.Entry, u *models.User, ident *models.SSOIdentity, id *sso.Identity, source string) (map[string]any, error) {
	ctx := c.UserContext()
	p := e.Provider
	rules, _ := models.ParseRules(models.Str(p.Rules), p.Strategy) // validated on save; nil reads as none
	fillIdentity(ident, id, p, rules)
	var err error
	if ident.ID == uuid.Nil {
		ident.UserID, ident.ProviderID = u.ID, p.ID
		err = tx.CreateIdentity(ctx, ident)
	} else {
		err = tx.UpdateIdentityLogin(ctx, ident)
	}
	if err != nil {
		return nil, err
	}
	if err := tx.FillUserNames(ctx, u.ID, id.FirstName, id.LastName); err != nil {
		return nil, err
	}
	meta := map[string]any{"method": "sso", "override": false, "identity_id": ident.ID.String(), "role": u.Role}
	if id.GroupsMissing {
		meta["groups_claim_missing"] = true
	}
	decision := models.ComputeRole(p, rules, id.Groups, !id.GroupsMissing, id.Claims)
	if !decision.Mapped {
		return meta, nil
	}
	meta["matched_groups"] = decision.MatchedGroups
	role, guard, err := tx.ApplyMappedRole(ctx, models.MappedRole{UserID: u.ID, Target: decision.Role, Source: source,
		Provider: p.Name, IP: web.NonEmpty(c.IP()), UA: web.Clip(c.Get(fiber.HeaderUserAgent), 512)})
	if err != nil {
		return nil, err
	}
	meta["role"] = role
	if guard != "" {
		meta["role_guard"] = guard
	}
	return meta, nil
}

// fillIdentity copies what the provider said into the identity row.
func fillIdentity(ident *models.SSOIdentity, id *sso.Identity, p *models.SSOProvider, rules *models.Rules) {
	if p.Strategy == models.StrategyOIDC && models.Str(ident.Issuer) == "" {
		ident.Issuer = web.NonEmpty(id.Issuer)
	}
	ident.Subject = id.Subject
	ident.Email = web.NonEmpty(id.Email)
	ident.EmailVerified = id.EmailVerified
	ident.FirstName, ident.LastName = web.NonEmpty(id.FirstName), web.NonEmpty(id.LastName)
	ident.Claims = storedClaims(rules, id)
}

// storedClaims keeps what a later role sync reads: the groups and the
// claims that rule conditions name.
func storedClaims(rules *models.Rules, id *sso.Identity) map[string]any {
	out := map[string]any{}
	if !id.GroupsMissing {
		out["groups"] = id.Groups
	}
	for _, name := range rules.ConditionAttributes() {
		if v, ok := id.Claims[name]; ok {
			out[name] = v
		}
	}
	return out
}

// ssoAudit is a record of an event at provider e.
func (h *Handler) ssoAudit(c *fiber.Ctx, e *sso.Entry, event string, userID *uuid.UUID, meta map[string]any) *models.AuditLog {
	rec := h.auditRecord(c, event, userID, meta)
	name := e.Provider.Name
	rec.Provider = &name
	return rec
}

// cleanIdentity makes what the provider said storable, or names why it
// cannot be used: a subject or an email no column could hold unchanged.
func cleanIdentity(id *sso.Identity) string {
	if id.Subject == "" || len(id.Subject) > 1024 || web.CleanText(id.Subject, 1024) != id.Subject {
		return "subject is empty, too long or not plain text"
	}
	if len(id.Email) > 320 || web.CleanText(id.Email, 320) != id.Email {
		return "email is too long or not plain text"
	}
	id.FirstName, id.LastName = web.CleanText(id.FirstName, 255), web.CleanText(id.LastName, 255)
	for i, g := range id.Groups {
		id.Groups[i] = web.CleanText(g, 256)
	}
	if id.Claims == nil {
		id.Claims = map[string]any{}
	}
	id.Claims = cleanClaims(id.Claims).(map[string]any)
	return ""
}

// cleanClaims cleans every string in a decoded JSON value.
func cleanClaims(v any) any {
	switch v := v.(type) {
	case string:
		return web.CleanText(v, 1024)
	case []any:
		for i := range v {
			v[i] = cleanClaims(v[i])
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[web.CleanText(k, 256)] = cleanClaims(x)
		}
		return out
	}
	return v
}
