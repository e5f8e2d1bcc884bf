package signin

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"coffer/api/web"
	"coffer/models"
	"coffer/models/secret"
	"coffer/sso"
)

// pendingLink is an identity waiting for its owner to prove the account is
// theirs (spec/sso.md §6.4 steps 2 and 3b). It lives in Redis for ten
// minutes under a random id that only this browser's cookie holds.
type pendingLink struct {
	ProviderID uuid.UUID    `json:"provider_id"`
	Identity   sso.Identity `json:"identity"`
	Intent     string       `json:"intent"`
	User       uuid.UUID    `json:"user"` // link: the signed-in user who pressed Connect; login: the owner of the email
	ReturnTo   string       `json:"return_to"`
}

const msgPendingExpired = "This sign-in has expired. Please start again."

func pendingKey(id string) string { return "sso:pending:" + id }

// startPending keeps what the link needs for ten minutes: the identity
// with only the claims a login stores, and the ID token sealed.
func (h *Handler) startPending(c *fiber.Ctx, prov *models.SSOProvider, ident *sso.Identity, p pendingLink) error {
	id, err := randomToken()
	if err != nil {
		return err
	}
	p.ProviderID, p.Identity = prov.ID, *ident
	rules, _ := models.ParseRoleMapping(models.Str(prov.Rules), prov.Strategy)
	p.Identity.Claims = ident.StoredClaims(rules)
	if p.Identity.IDToken != "" {
		if p.Identity.IDToken, err = h.store.Secrets.Seal(ident.IDToken, "sso_pending", "id_token", id); err != nil {
			return err
		}
	}
	b, err := json.Marshal(&p)
	if err != nil {
		return err
	}
	if err := h.redis.Set(c.UserContext(), pendingKey(id), b, ssoStateLife).Err(); err != nil {
		return signInUnavailable(err)
	}
	h.setShortCookie(c, cookieSSOPending, id, "/auth")
	return c.Redirect("/auth/link", fiber.StatusSeeOther)
}

// pendingFailure counts a wrong password on a pending link, atomically,
// in a key that ends with the link.
func (h *Handler) pendingFailure(c *fiber.Ctx, id string) (int64, error) {
	n, err := web.CountWindow(c.UserContext(), h.redis, pendingKey(id)+":failures", ssoStateLife)
	if err != nil {
		return 0, signInUnavailable(err)
	}
	return n, nil
}

// loadPending returns the pending link this browser holds, or nil when it
// has none or it expired.
func (h *Handler) loadPending(c *fiber.Ctx) (string, *pendingLink, error) {
	id := c.Cookies(cookieSSOPending)
	if id == "" || len(id) > 64 {
		return "", nil, nil
	}
	b, err := h.redis.Get(c.UserContext(), pendingKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, signInUnavailable(err)
	}
	p := new(pendingLink)
	if err := json.Unmarshal(b, p); err != nil {
		return "", nil, nil
	}
	return id, p, nil
}

type linkData struct {
	Label      string
	Intent     string
	Account    string // the IdP account: email or subject
	UserEmail  string
	CanConnect bool // signed in as the user
	CanPass    bool // may prove ownership with a password
}

// linkPage asks the owner to confirm a link (GET /auth/link).
func (h *Handler) linkPage(c *fiber.Ctx) error {
	_, p, err := h.loadPending(c)
	if err != nil {
		return err
	}
	if p == nil {
		return h.loginPage(c, fiber.StatusGone, msgPendingExpired, loginData{ReturnTo: "/"})
	}
	return h.renderLink(c, fiber.StatusOK, p, "")
}

func (h *Handler) renderLink(c *fiber.Ctx, status int, p *pendingLink, msg string) error {
	ctx := c.UserContext()
	e, err := h.sso.Registry.ByID(ctx, p.ProviderID)
	if err != nil {
		return h.loginPage(c, fiber.StatusGone, msgPendingExpired, loginData{ReturnTo: "/"})
	}
	u, err := h.store.UserByID(ctx, p.User)
	if err != nil {
		return h.loginPage(c, fiber.StatusGone, msgPendingExpired, loginData{ReturnTo: "/"})
	}
	d := linkData{Label: e.Provider.Label, Intent: p.Intent, Account: p.Identity.Email, UserEmail: u.Email}
	if d.Account == "" {
		d.Account = p.Identity.Subject
	}
	if s := web.SessionOf(c); s != nil && s.UserID == u.ID {
		d.CanConnect = true
	} else if p.Intent == intentLogin {
		d.CanPass = h.site.MayUsePassword(u)
	}
	return h.pages.Render(c, status, "link", web.Page{Title: "Connect " + e.Provider.Label, Error: msg, Data: d})
}

// confirmLink creates the pending identity once ownership is proved: by
// the signed-in session of the same user, or by that user's password.
func (h *Handler) confirmLink(c *fiber.Ctx) error {
	ctx := c.UserContext()
	pid, p, err := h.loadPending(c)
	if err != nil {
		return err
	}
	if p == nil {
		return h.loginPage(c, fiber.StatusGone, msgPendingExpired, loginData{ReturnTo: "/"})
	}
	e, err := h.sso.Registry.ByID(ctx, p.ProviderID)
	if err != nil || !e.Provider.Enabled {
		return h.loginPage(c, fiber.StatusGone, msgMethodDisabled, loginData{ReturnTo: "/"})
	}
	u, err := h.store.UserByID(ctx, p.User)
	if errors.Is(err, models.ErrNotFound) {
		return h.loginPage(c, fiber.StatusGone, msgPendingExpired, loginData{ReturnTo: "/"})
	}
	if err != nil {
		return err
	}
	if u.Status != models.UserActive {
		h.dropPending(c, pid)
		return h.suspended(c, e, u)
	}
	if s := web.SessionOf(c); s != nil && s.UserID == u.ID {
		return h.linkBySession(c, pid, p, e, u)
	}
	if p.Intent != intentLogin || !h.site.MayUsePassword(u) {
		return h.renderLink(c, fiber.StatusForbidden, p, "Sign in with a method already connected to this account, then use Connect on the Security page.")
	}
	return h.linkByPassword(c, pid, p, e, u)
}

func (h *Handler) dropPending(c *fiber.Ctx, id string) {
	if err := h.redis.Del(c.UserContext(), pendingKey(id), pendingKey(id)+":failures").Err(); err != nil {
		h.log.Warn("sso: pending link not deleted", "err", err)
	}
	h.clearCookie(c, cookieSSOPending, "/auth")
}

func (h *Handler) linkBySession(c *fiber.Ctx, pid string, p *pendingLink, e *sso.Entry, u *models.User) error {
	err := h.store.LinkIdentity(c.UserContext(), h.ssoSignIn(c, e, &p.Identity), u)
	if errors.Is(err, models.ErrConflict) {
		h.dropPending(c, pid)
		return h.site.Redirect(c, "/settings/security", fmt.Sprintf("This %s account is already linked to another user.", e.Provider.Label))
	}
	if err != nil {
		return err
	}
	h.dropPending(c, pid)
	return h.site.Redirect(c, web.SafeReturnTo(p.ReturnTo), fmt.Sprintf("%s is connected to your account.", e.Provider.Label))
}

// linkByPassword checks the password of the email's owner (no email is
// typed); each attempt is counted toward the lockout before the password
// is checked, as at the sign-in form, and five failures drop the link.
func (h *Handler) linkByPassword(c *fiber.Ctx, pid string, p *pendingLink, e *sso.Entry, u *models.User) error {
	ctx := c.UserContext()
	wait, err := h.claimAttempt(ctx, u.Email, web.ClientIP(c))
	if err != nil {
		return err
	}
	if wait > 0 {
		return h.ssoRefused(c, e, fiber.StatusTooManyRequests, "locked",
			fmt.Sprintf("Too many failed sign-in attempts. Try again in %d minutes.", int(wait.Minutes()+0.999)), "", &u.ID)
	}
	password := c.FormValue("password")
	ok := false
	if len(password) <= secret.MaxPasswordLen {
		var herr error
		ok, _, herr = h.hash.Check(ctx, *u.PasswordHash, password)
		if herr != nil && !errors.Is(herr, secret.ErrBadHash) {
			return herr
		}
	}
	if !ok {
		rec := h.ssoAudit(c, e, models.EventLoginFailed, &u.ID, map[string]any{"reason": sso.ReasonLinkPasswordFailed, "method": "sso"})
		if err := h.writeFailure(c, rec); err != nil {
			return err
		}
		n, err := h.pendingFailure(c, pid)
		if err != nil {
			return err
		}
		if n >= 5 {
			h.dropPending(c, pid)
			return h.loginPage(c, fiber.StatusUnprocessableEntity, msgPendingExpired, loginData{ReturnTo: "/"})
		}
		return h.renderLink(c, fiber.StatusUnprocessableEntity, p, "The password is not correct.")
	}
	if err := h.releaseAttempt(ctx, u.Email, web.ClientIP(c)); err != nil {
		return err
	}
	h.dropPending(c, pid)
	if p.Identity.IDToken != "" {
		// Unreadable (a rotated key): the session just has no logout hint.
		p.Identity.IDToken, _ = h.store.Secrets.Open(p.Identity.IDToken, "sso_pending", "id_token", pid)
	}
	token, err := h.store.LoginWithSSO(ctx, h.ssoSignIn(c, e, &p.Identity), u, nil)
	if errors.Is(err, models.ErrConflict) {
		return h.loginPage(c, fiber.StatusConflict, fmt.Sprintf("This %s account is already linked to another user.", e.Provider.Label), loginData{ReturnTo: "/"})
	}
	if err != nil {
		return err
	}
	return h.beginSession(c, token, p.ReturnTo)
}
