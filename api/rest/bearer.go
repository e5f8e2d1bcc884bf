package rest

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/models"
)

// bearerToken is the token of an Authorization: Bearer header (RFC 6750
// §2.1; the scheme in any letter case).
func bearerToken(c *fiber.Ctx) (string, bool) {
	auth := c.Get(fiber.HeaderAuthorization)
	if len(auth) < 7 || !strings.EqualFold(auth[:7], "bearer ") {
		return "", false
	}
	return strings.TrimSpace(auth[7:]), true
}

// bearerAuth is APIKey for an OAuth access token: the same principal, the
// same limit, scopes and bodies, and the WWW-Authenticate challenge of
// RFC 6750 §3 when the token is refused.
func (h *Handler) bearerAuth(c *fiber.Ctx, token, scope string) error {
	refuse := func(msg string) error {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer error="invalid_token", error_description="`+msg+`"`)
		return &httperr.Error{Status: fiber.StatusUnauthorized, Code: "unauthorized", Message: msg}
	}
	if h.bearer == nil || token == "" {
		return refuse(msgInvalidKey)
	}
	ctx := c.UserContext()
	k, err := h.bearer(ctx, token)
	if errors.Is(err, models.ErrNotFound) {
		return refuse(msgInvalidKey)
	}
	if err != nil {
		return err
	}
	if k.User == nil || k.Family == nil || k.User.Status != models.UserActive {
		return refuse("Account has been deactivated")
	}
	c.Locals(localKey, k)
	count, err := h.count(ctx, k.ID, h.now())
	if err != nil {
		return err
	}
	if err := h.applyLimit(c, count); err != nil {
		return err
	}
	if scope == models.ScopeReadWrite && !k.Writable() {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer error="insufficient_scope", scope="read_write"`)
		return &httperr.Error{Status: fiber.StatusForbidden, Code: "insufficient_scope", Message: "This action requires the 'write' scope"}
	}
	return h.authorized(c)
}
