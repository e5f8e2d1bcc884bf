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
// new account (spec/sso.md §6.4), or, for a sign-in started from an
// invitation, a join of the invited family. Identities are found by
// provider and subject only, never by email.
func (h *Handler) resolveIdentity(c *fiber.Ctx, e *sso.Entry, id *sso.Identity, f flow) error {
	p := e.Provider
	if problem := cleanIdentity(id); problem != "" {
		reason := sso.ReasonUserinfoInvalid
		if p.Strategy == models.StrategySAML {
			reason = sso.ReasonSAMLInvalid
		}
		return h.ssoRefused(c, e, fiber.StatusBadRequest, reason,
			fmt.Sprintf("The sign-in response from %s could not be accepted.", p.Label), problem, nil)
	}
	if f.Invitation != nil {
		// Refused before any account is looked at; the join's transaction
		// checks both again.
		inv, err := h.store.Invitation(c.UserContext(), f.Invitation.FamilyID, f.Invitation.ID)
		switch {
		case err != nil:
			return h.invitationRefused(c, e, err, nil)
		case id.Email == "" || !id.EmailVerified:
			return h.emailUnverified(c, e)
		case !strings.EqualFold(id.Email, inv.Email):
			return h.invitationRefused(c, e, models.ErrInvitationEmail, nil)
		}
	}
	return h.resolveOnce(c, e, id, f, true)
}

func (h *Handler) resolveOnce(c *fiber.Ctx, e *sso.Entry, id *sso.Identity, f flow, retry bool) error {
	ctx := c.UserContext()
	p := e.Provider
	known, err := h.store.IdentityBySubject(ctx, p.ID, id.Subject)
	if err == nil {
		return h.knownIdentity(c, e, known, id, f)
	}
	if !errors.Is(err, models.ErrNotFound) {
		return err
	}
	if f.Intent == intentLink && f.LinkUser != nil {
		return h.startPending(c, p, id, pendingLink{Intent: intentLink, User: *f.LinkUser, ReturnTo: "/settings/security"})
	}
	if f.Mobile != nil {
		// Linking proves the account with a password in a browser
		// session, which the app does not keep: it links on the web.
		return h.ssoRefused(c, e, fiber.StatusForbidden, reasonAccountNotLinked,
			fmt.Sprintf("This %s account is not linked to an account here yet. Sign in once on the web to link it, then try again.", p.Label), "", nil)
	}
	if id.Email == "" || !id.EmailVerified {
		return h.emailUnverified(c, e)
	}
	owner, err := h.store.UserByEmail(ctx, id.Email)
	if err == nil {
		if f.Invitation != nil {
			// The address has an account already; the invitation has
			// nothing left to admit, and the account is linked only once
			// its owner proves it theirs, as on every sign-in.
			err := h.store.CloseInvitationForMember(ctx, f.Invitation.FamilyID, f.Invitation.ID, id, owner)
			if err != nil {
				return h.invitationRefused(c, e, err, nil)
			}
		}
		return h.startPending(c, p, id, pendingLink{Intent: intentLogin, User: owner.ID, ReturnTo: f.ReturnTo})
	}
	if !errors.Is(err, models.ErrNotFound) {
		return err
	}
	if f.Invitation != nil {
		// An invitation is an explicit admission by the family's admin:
		// neither AUTH_JIT_MODE nor ALLOWED_OIDC_DOMAINS apply to it.
		u := &models.User{FirstName: web.NonEmpty(id.FirstName), LastName: web.NonEmpty(id.LastName)}
		err = h.acceptBySSO(c, e, id, f.Invitation, u, nil)
	} else {
		err = h.createJITAccount(c, e, id, f.ReturnTo)
	}
	if errors.Is(err, models.ErrConflict) && retry {
		// Another tab created the account or identity first: resolve again,
		// which now ends at the known identity or the link page.
		return h.resolveOnce(c, e, id, f, false)
	}
	return err
}

// createJITAccount applies AUTH_JIT_MODE, AUTH_SIGNUP_ENABLED and
// ALLOWED_OIDC_DOMAINS, then makes a family, its first user (who
// administers it) and the identity, and signs the user in. Every account
// it makes is a new family, so closed sign-up closes it too: people then
// join by invitation (acceptBySSO) or the CLI, as the README says.
func (h *Handler) createJITAccount(c *fiber.Ctx, e *sso.Entry, id *sso.Identity, returnTo string) error {
	if h.sso.JITMode == JITLinkOnly {
		return h.ssoRefused(c, e, fiber.StatusForbidden, sso.ReasonJITDisabled, fmt.Sprintf(
			"No account exists for %s, and accounts cannot be created through single sign-on here. Contact an administrator.", id.Email), "", nil)
	}
	if !h.web.SignupEnabled {
		return h.ssoRefused(c, e, fiber.StatusForbidden, sso.ReasonJITDisabled, fmt.Sprintf(
			"No account exists for %s, and sign-up is closed here. Ask a member of your household for an invitation.", id.Email), "sign-up closed", nil)
	}
	if !h.domainAllowed(id.Email) {
		return h.ssoRefused(c, e, fiber.StatusForbidden, sso.ReasonDomainNotAllowed,
			"New accounts can only be created for approved email domains.", "", nil)
	}
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

// emailUnverified refuses to create or link an account by an address the
// provider has not confirmed.
func (h *Handler) emailUnverified(c *fiber.Ctx, e *sso.Entry) error {
	return h.ssoRefused(c, e, fiber.StatusForbidden, sso.ReasonEmailUnverified,
		fmt.Sprintf("%s has not confirmed your email address, so it cannot be used to create or link an account.", e.Provider.Label), "", nil)
}

func (h *Handler) knownIdentity(c *fiber.Ctx, e *sso.Entry, known *models.SSOIdentity, id *sso.Identity, f flow) error {
	ctx := c.UserContext()
	p := e.Provider
	if p.Strategy == models.StrategyOIDC && models.Str(known.Issuer) != "" && models.Str(known.Issuer) != id.Issuer {
		return h.ssoRefused(c, e, fiber.StatusForbidden, sso.ReasonIssuerMismatch,
			"This account's identity provider has changed. Contact an administrator.", "issuer differs from the stored one", &known.UserID)
	}
	if f.Intent == intentLink && f.LinkUser != nil {
		if known.UserID != *f.LinkUser {
			return h.ssoRefused(c, e, fiber.StatusConflict, sso.ReasonLinkedElsewhere,
				fmt.Sprintf("This %s account is already linked to another user.", p.Label), "", f.LinkUser)
		}
		return h.site.Redirect(c, "/settings/security", "Already connected.")
	}
	u, err := h.store.UserByID(ctx, known.UserID)
	if err != nil {
		return err
	}
	if u.Status != models.UserActive {
		return h.suspended(c, e, u)
	}
	if f.Invitation != nil {
		return h.acceptBySSO(c, e, id, f.Invitation, u, known)
	}
	if f.Mobile != nil {
		return h.finishMobileSSO(c, e, id, u, known, f.Mobile)
	}
	token, err := h.store.LoginWithSSO(ctx, h.ssoSignIn(c, e, id), u, known)
	if err != nil {
		return err
	}
	return h.beginSession(c, token, f.ReturnTo)
}

// suspended refuses a sign-in of a suspended user.
func (h *Handler) suspended(c *fiber.Ctx, e *sso.Entry, u *models.User) error {
	return h.ssoRefused(c, e, fiber.StatusForbidden, sso.ReasonSuspended, "Your account has been suspended. Contact an administrator.", "", &u.ID)
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
