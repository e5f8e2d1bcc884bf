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
	token, err := h.store.LoginWithSSO(ctx, h.ssoSignIn(c, e, id), u, known)
	if err != nil {
		return err
	}
	return h.beginSession(c, token, returnTo)
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
// and the identity, then signs the user in.
func (h *Handler) createJITAccount(c *fiber.Ctx, e *sso.Entry, id *sso.Identity, returnTo string) error {
	name := id.FirstName
	if name == "" {
		name, _, _ = strings.Cut(id.Email, "@")
	}
	role := models.RoleAdmin
	if e.Provider.DefaultRole == models.RoleSuperAdmin {
		role = models.RoleSuperAdmin
	}
	f := &models.Family{Name: web.CleanText(name, 100), Currency: "USD"}
	u := &models.User{Email: id.Email, Role: role, FirstName: web.NonEmpty(id.FirstName), LastName: web.NonEmpty(id.LastName)}
	token, err := h.store.CreateSSOAccount(c.UserContext(), h.ssoSignIn(c, e, id), f, u)
	if err != nil {
		return err
	}
	return h.beginSession(c, token, returnTo)
}

// ssoSignIn is what the store records of a sign-in through e.
func (h *Handler) ssoSignIn(c *fiber.Ctx, e *sso.Entry, id *sso.Identity) models.SSOSignIn {
	return models.SSOSignIn{SignIn: h.signIn(c), Provider: e.Provider, Identity: id}
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
