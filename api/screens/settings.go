package screens

import (
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
)

type apiKeysData struct {
	Keys   []models.APIKey
	NewKey string
	Name   string
}

func (h *Handler) listAPIKeys(c *fiber.Ctx) error {
	return h.apiKeysPage(c, fiber.StatusOK, apiKeysData{}, "")
}

func (h *Handler) apiKeysPage(c *fiber.Ctx, status int, d apiKeysData, msg string) error {
	u := web.SessionOf(c).User
	keys, err := h.store.APIKeys(c.UserContext(), u.FamilyID, u.ID)
	if err != nil {
		return err
	}
	d.Keys = keys
	return h.pages.Render(c, status, "api_keys", web.Page{Title: "API keys", Error: msg, Data: d})
}

// createAPIKey makes a key for the signed-in user and shows it once.
func (h *Handler) createAPIKey(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	name := strings.TrimSpace(c.FormValue("name"))
	scope := c.FormValue("scope")
	days := strings.TrimSpace(c.FormValue("expires_in_days"))
	var problems []string
	if name == "" || len(name) > maxName || strings.ContainsRune(name, 0) {
		problems = append(problems, "Name must be 1 to 255 characters.")
	}
	if !models.ValidScope(scope) {
		problems = append(problems, "Scope must be read or read_write.")
	}
	k := &models.APIKey{UserID: u.ID, Name: strings.Clone(name), Scope: strings.Clone(scope)}
	if days != "" {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 || n > 3650 {
			problems = append(problems, "Expiry must be a number of days from 1 to 3650, or empty.")
		} else {
			at := h.now().UTC().Add(time.Duration(n) * 24 * time.Hour)
			k.ExpiresAt = &at
		}
	}
	if len(problems) > 0 {
		return h.apiKeysPage(c, fiber.StatusUnprocessableEntity, apiKeysData{Name: k.Name}, strings.Join(problems, " "))
	}
	key, err := h.store.CreateAPIKey(c.UserContext(), u.FamilyID, k)
	if err != nil {
		return err
	}
	// Rendered directly, not after a redirect: the key must not pass
	// through a cookie or a URL.
	return h.apiKeysPage(c, fiber.StatusCreated, apiKeysData{NewKey: key}, "")
}

func (h *Handler) revokeAPIKey(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	if err := h.store.RevokeUserAPIKey(c.UserContext(), u.FamilyID, u.ID, id); err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/api_keys", "The key was revoked.")
}
