package signin

import (
	"errors"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"coffer/api/web"
	"coffer/models"
)

type invitationData struct {
	Invitation *models.Invitation
	Token      string
	LocalLogin bool
	Providers  []*models.SSOProvider // each a "Continue with" button
}

// invitationRefusal is the sentence for a link that cannot be used.
func invitationRefusal(err error) (int, string, bool) {
	switch {
	case errors.Is(err, models.ErrNotFound):
		return fiber.StatusNotFound, "This invitation link is not valid. Ask for a new one.", true
	case errors.Is(err, models.ErrInvitationUsed):
		return fiber.StatusGone, "This invitation has already been used. Sign in instead.", true
	case errors.Is(err, models.ErrInvitationExpired):
		return fiber.StatusGone, "This invitation has expired. Ask for a new one.", true
	case errors.Is(err, models.ErrInvitationRevoked):
		return fiber.StatusGone, "This invitation was withdrawn. Ask for a new one.", true
	case errors.Is(err, models.ErrInvitationEmail):
		return fiber.StatusForbidden, "This invitation was sent to another email address. Continue with the account of the invited address, or ask for an invitation to yours.", true
	case errors.Is(err, models.ErrEmailTaken):
		return fiber.StatusConflict, "This email already has an account, in another household. Ask to be invited with another address.", true
	}
	return 0, "", false
}

func (h *Handler) invitationPage(c *fiber.Ctx, status int, msg string) error {
	token := c.Params("token")
	inv, err := h.store.InvitationByToken(c.UserContext(), token)
	if st, refusal, ok := invitationRefusal(err); ok {
		return h.invitationGone(c, st, refusal)
	}
	if err != nil {
		return err
	}
	providers, err := h.enabledProviders(c)
	if err != nil {
		return err
	}
	return h.pages.Render(c, status, "invitation", web.Page{Title: "Join " + deref(inv.FamilyName), Error: msg,
		Data: invitationData{Invitation: inv, Token: strings.Clone(token), LocalLogin: h.web.LocalLogin, Providers: providers}})
}

// invitationGone is the page of a link that cannot be used.
func (h *Handler) invitationGone(c *fiber.Ctx, status int, msg string) error {
	return h.pages.Render(c, status, "invitation", web.Page{Title: "Invitation", Error: msg, Data: invitationData{}})
}

// showInvitation is where an invitation link lands: who invites whom to
// which household, a password to choose and a button per provider.
func (h *Handler) showInvitation(c *fiber.Ctx) error {
	return h.invitationPage(c, fiber.StatusOK, "")
}

// acceptInvitation creates the invited person's account in the family,
// with the invited role, and signs them in.
func (h *Handler) acceptInvitation(c *fiber.Ctx) error {
	ctx := c.UserContext()
	if !h.web.LocalLogin {
		return h.invitationPage(c, fiber.StatusForbidden, "Password sign-in is disabled here. Use single sign-on.")
	}
	if err := h.limitIP(c, "invitation", invitationLimitPerHour, time.Hour); err != nil {
		return err
	}
	// The link is looked up before the password is hashed: a made-up
	// token costs a lookup, not 64 MiB.
	_, err := h.store.InvitationByToken(ctx, c.Params("token"))
	if st, refusal, ok := invitationRefusal(err); ok {
		return h.invitationGone(c, st, refusal)
	}
	if err != nil {
		return err
	}
	password := c.FormValue("password")
	if p := passwordProblem(password); p != "" {
		return h.invitationPage(c, fiber.StatusUnprocessableEntity, p)
	}
	if password != c.FormValue("password_confirmation") {
		return h.invitationPage(c, fiber.StatusUnprocessableEntity, "The two passwords differ.")
	}
	hash, err := h.hash.Hash(ctx, password)
	if err != nil {
		return err
	}
	u := &models.User{PasswordHash: &hash}
	err = h.store.AcceptInvitation(ctx, c.Params("token"), u)
	if st, refusal, ok := invitationRefusal(err); ok {
		return h.invitationGone(c, st, refusal)
	}
	if err != nil {
		return err
	}
	// A family that requires a second factor has the newcomer set one up
	// before the first session, as at a password sign-in.
	if next, err := h.askSecondFactor(c, &passwordLogin{user: u}, "/"); err != nil || next != "" {
		if err != nil {
			return err
		}
		return c.Redirect(next, fiber.StatusSeeOther)
	}
	sess := &models.Session{FamilyID: u.FamilyID, UserID: u.ID, Method: models.MethodPassword, IP: web.NonEmpty(web.ClientIP(c)), UserAgent: web.Clip(c.Get(fiber.HeaderUserAgent), 512)}
	token, err := h.store.CreateSession(ctx, sess, h.web.SessionMaxAge)
	if err != nil {
		return err
	}
	if err := h.store.CreateAuditLog(ctx, h.auditRecord(c, models.EventLogin, &u.ID, map[string]any{"method": "password", "invitation": true})); err != nil {
		h.log.Warn("login record not written", "error", err)
	}
	return h.welcome(c, token)
}

// welcome hands a person who just joined the household their session.
func (h *Handler) welcome(c *fiber.Ctx, token string) error {
	h.site.SetSessionCookie(c, token)
	return h.site.Redirect(c, "/", "Welcome! You have joined the household.")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
