package signin

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
)

// connectProvider starts a link of the signed-in user to a provider
// (POST /settings/security/connect/:name).
func (h *Handler) connectProvider(c *fiber.Ctx) error {
	e, err := h.enabledProvider(c)
	if err != nil {
		return err
	}
	s := web.SessionOf(c)
	uid := s.UserID
	idents, err := h.store.UserIdentities(c.UserContext(), s.FamilyID, uid)
	if err != nil {
		return err
	}
	for _, i := range idents {
		if i.ProviderID == e.Provider.ID {
			return h.site.Redirect(c, "/settings/security", "Already connected.")
		}
	}
	return h.beginSSO(c, e, flow{ReturnTo: "/settings/security", Intent: intentLink, LinkUser: &uid})
}

// unlinkIdentity removes one of the user's identities, unless it is their
// last way to sign in.
func (h *Handler) unlinkIdentity(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	s := web.SessionOf(c)
	err = h.store.UnlinkIdentity(c.UserContext(), s.FamilyID, s.UserID, id, h.site.MayUsePassword, h.auditRecord(c, models.EventUnlink, &s.UserID, nil))
	var inv *models.InvalidError
	if errors.As(err, &inv) {
		return h.securityPage(c, fiber.StatusUnprocessableEntity, inv.Problems[0])
	}
	if err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/security", "Disconnected.")
}
