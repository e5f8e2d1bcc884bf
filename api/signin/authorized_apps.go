package signin

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
)

type authorizedAppsData struct {
	Mine   []models.AuthorizedApp
	Family []models.AuthorizedApp // admins only: everyone's
	Admin  bool
}

// authorizedApps lists the apps the signed-in user let in, and to an
// admin those of everyone in the family.
func (h *Handler) authorizedApps(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	ctx := c.UserContext()
	d := authorizedAppsData{Admin: isAdmin(u)}
	var err error
	if d.Mine, err = h.store.AuthorizedApps(ctx, u.FamilyID, u.ID); err != nil {
		return err
	}
	if d.Admin {
		if d.Family, err = h.store.AuthorizedApps(ctx, u.FamilyID, uuid.Nil); err != nil {
			return err
		}
	}
	return h.pages.Render(c, fiber.StatusOK, "authorized_apps", web.Page{Nav: "settings", Title: "Authorized apps", Data: d})
}

// revokeAuthorizedApp ends every grant of an app for the signed-in user,
// or, for an admin, for any user of the family.
func (h *Handler) revokeAuthorizedApp(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	clientID := strings.Clone(c.FormValue("client_id"))
	userID := u.ID
	if raw := c.FormValue("user_id"); raw != "" {
		id, err := uuid.Parse(raw)
		if err != nil {
			return httperr.NotFound()
		}
		if id != u.ID && !isAdmin(u) {
			return httperr.NotFound()
		}
		userID = id
	}
	if clientID == "" || len(clientID) > 64 {
		return httperr.NotFound()
	}
	if err := h.store.RevokeAuthorizedApp(c.UserContext(), u.FamilyID, userID, clientID); err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/authorized_apps", "The app's access was revoked.")
}

func isAdmin(u *models.User) bool {
	return u != nil && (u.Role == models.RoleAdmin || u.Role == models.RoleSuperAdmin)
}
