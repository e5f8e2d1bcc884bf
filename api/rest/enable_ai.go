package rest

import (
	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/api/web"
)

// enableAI is PATCH /api/v1/auth/enable_ai, the reference app's switch
// that unlocks its chat tab: the user's ai_enabled turns on, on a server
// whose assistant has a model.
func (h *Handler) enableAI(c *fiber.Ctx) error {
	if h.assistantOff {
		return httperr.New(fiber.StatusForbidden, "forbidden", "AI is not available for your account")
	}
	ctx, k := c.UserContext(), KeyOf(c)
	if err := h.store.EnableAI(ctx, k.FamilyID, k.UserID); err != nil {
		return err
	}
	u, err := h.store.User(ctx, k.FamilyID, k.UserID)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"user": web.AppUserOf(u)})
}
