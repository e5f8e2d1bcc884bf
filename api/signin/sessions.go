package signin

import (
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
	"coffer/models/secret"
)

type loginData struct {
	LocalLogin bool
	Signup     bool
	Override   bool
	ReturnTo   string
	Email      string
	Providers  []*models.SSOProvider
}

func (h *Handler) newSession(c *fiber.Ctx) error {
	returnTo := web.SafeReturnTo(c.Query("return_to"))
	if web.SessionOf(c) != nil {
		return c.Redirect(returnTo, fiber.StatusFound)
	}
	return h.loginPage(c, fiber.StatusOK, "", loginData{ReturnTo: returnTo})
}

func (h *Handler) loginPage(c *fiber.Ctx, status int, msg string, d loginData) error {
	d.LocalLogin, d.Override, d.Signup = h.web.LocalLogin, !h.web.LocalLogin && h.web.AdminOverride, h.web.SignupEnabled
	var err error
	if d.Providers, err = h.enabledProviders(c); err != nil {
		return err
	}
	return h.pages.Render(c, status, "login", web.Page{Title: "Sign in", Error: msg, Data: d})
}

// enabledProviders are the providers a page offers a button for.
func (h *Handler) enabledProviders(c *fiber.Ctx) ([]*models.SSOProvider, error) {
	enabled, err := h.sso.Registry.Enabled(c.UserContext())
	if err != nil {
		return nil, err
	}
	out := make([]*models.SSOProvider, 0, len(enabled))
	for _, e := range enabled {
		out = append(out, e.Provider)
	}
	return out, nil
}

// createSession is the password sign-in of spec/sso.md §6.5. Every refusal
// is audited; the answers reveal neither who exists nor who is a super
// admin.
func (h *Handler) createSession(c *fiber.Ctx) error {
	email := strings.TrimSpace(c.FormValue("email"))
	password := c.FormValue("password")
	d := loginData{ReturnTo: web.SafeReturnTo(c.FormValue("return_to")), Email: strings.Clone(email)}
	login, no, err := h.checkPassword(c, email, password, fiber.StatusUnprocessableEntity, "Invalid email or password.")
	if err != nil {
		return err
	}
	if no != nil {
		if err := h.auditFailure(c, no.reason, no.userID); err != nil {
			return err
		}
		return h.loginPage(c, no.status, no.msg, d)
	}
	if next, err := h.askSecondFactor(c, login, d.ReturnTo); err != nil || next != "" {
		if err != nil {
			return err
		}
		return c.Redirect(next, fiber.StatusSeeOther)
	}
	token, err := h.store.LoginWithPassword(c.UserContext(), login.user, login.override, login.newHash, h.signIn(c))
	if err != nil {
		return err
	}
	return h.beginSession(c, token, d.ReturnTo)
}

// deleteSession signs out (spec/sso.md §6.7): the session ends here first,
// whatever happens next; a federated session then goes on to the
// identity provider's logout when it offers one.
func (h *Handler) deleteSession(c *fiber.Ctx) error {
	s := web.SessionOf(c)
	h.site.ClearSessionCookie(c)
	if s == nil {
		return h.site.Redirect(c, "/sessions/new", "You have signed out.")
	}
	ctx := c.UserContext()
	if err := h.store.DeleteSession(ctx, s.FamilyID, s.ID); err != nil {
		return err
	}
	target, protocol, provider := h.federatedLogout(c, s)
	if target != "" {
		rec := h.auditRecord(c, models.EventLogoutIdP, &s.UserID, map[string]any{"protocol": protocol})
		rec.Provider = provider
		if err := h.store.CreateAuditLog(ctx, rec); err != nil {
			return err
		}
		return c.Redirect(target, fiber.StatusFound)
	}
	rec := h.auditRecord(c, models.EventLogout, &s.UserID, map[string]any{"session_method": s.Method})
	rec.Provider = provider
	if err := h.store.CreateAuditLog(ctx, rec); err != nil {
		return err
	}
	return h.site.Redirect(c, "/sessions/new", "You have signed out.")
}

// federatedLogout returns where an SSO session's logout continues: the
// OIDC end-session endpoint or the SAML IdP's single logout; "" when the
// provider offers none (or is gone, disabled or unusable). provider is
// the session's provider name for the audit record, when there is one.
func (h *Handler) federatedLogout(c *fiber.Ctx, s *models.Session) (target, protocol string, provider *string) {
	if s.Method != models.MethodSSO || s.ProviderID == nil {
		return "", "", nil
	}
	ctx := c.UserContext()
	e, err := h.sso.Registry.ByID(ctx, *s.ProviderID)
	if err != nil {
		return "", "", nil
	}
	name := e.Provider.Name
	if !e.Provider.Enabled {
		return "", "", &name
	}
	if e.Provider.Strategy == models.StrategySAML {
		return h.samlLogoutTarget(c, e, s), "saml", &name
	}
	if e.Provider.Strategy != models.StrategyOIDC {
		return "", "", &name
	}
	rp, err := h.sso.Registry.OAuth(ctx, e)
	if err != nil {
		return "", "", &name
	}
	state, err := randomToken()
	if err != nil {
		return "", "", &name
	}
	return rp.EndSessionURL(h.store.SessionIDToken(s), state, h.sso.Registry.Options().BaseURL+"/sessions/new"), "oidc", &name
}

// signIn is what the store records of this request's browser when it
// signs in.
func (h *Handler) signIn(c *fiber.Ctx) models.SignIn {
	return models.SignIn{IP: web.NonEmpty(web.ClientIP(c)), UserAgent: web.Clip(c.Get(fiber.HeaderUserAgent), 512), MaxAge: h.web.SessionMaxAge}
}

// beginSession hands the browser its session and sends it on to returnTo.
func (h *Handler) beginSession(c *fiber.Ctx, token, returnTo string) error {
	h.site.SetSessionCookie(c, token)
	return c.Redirect(web.SafeReturnTo(returnTo), fiber.StatusSeeOther)
}

// auditRecord fills the request's client details into a new record.
func (h *Handler) auditRecord(c *fiber.Ctx, event string, userID *uuid.UUID, meta map[string]any) *models.AuditLog {
	return &models.AuditLog{EventType: event, UserID: userID, IP: web.NonEmpty(web.ClientIP(c)),
		UserAgent: web.Clip(c.Get(fiber.HeaderUserAgent), 512), Metadata: meta}
}

// auditFailure writes login_failed for a password sign-in.
func (h *Handler) auditFailure(c *fiber.Ctx, reason string, userID *uuid.UUID) error {
	return h.writeFailure(c, h.auditRecord(c, models.EventLoginFailed, userID, map[string]any{"reason": reason, "method": "password"}))
}

// writeFailure writes a login_failed record. Records without a known user
// are capped per IP, so a flood of guesses cannot flood the table.
func (h *Handler) writeFailure(c *fiber.Ctx, rec *models.AuditLog) error {
	ctx := c.UserContext()
	if rec.UserID == nil {
		key := fmt.Sprintf("rl:failrec:%s:%d", web.ClientIP(c), h.now().Unix()/60)
		n, err := web.CountWindow(ctx, h.redis, key, time.Minute)
		if err != nil {
			return signInUnavailable(err)
		}
		if n > 20 {
			h.log.Warn("login_failed record not written: over 20 a minute from this IP", "ip", web.ClientIP(c), "reason", rec.Metadata["reason"])
			return nil
		}
	}
	return h.store.CreateAuditLog(ctx, rec)
}

func signInUnavailable(err error) error {
	return fmt.Errorf("%w: %w", &httperr.Error{Status: fiber.StatusServiceUnavailable, Code: "service_unavailable",
		Message: "Sign-in temporarily unavailable."}, err)
}

// dummy returns a hash no password matches, made with the live parameters
// on first use rather than at start: an argon2id hash borrows 64 MiB, which
// an idle process should not hold.
func (h *Handler) dummy() string {
	h.dummyOnce.Do(func() {
		var err error
		if h.dummyHash, err = secret.HashPassword("not a real password, never matches", h.web.Argon2); err != nil {
			h.dummyHash = "$argon2id$v=19$m=65536,t=3,p=2$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		}
	})
	return h.dummyHash
}
