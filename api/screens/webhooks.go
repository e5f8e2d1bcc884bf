package screens

import (
	"crypto/rand"
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/web"
	"coffer/jobs"
	"coffer/models"
)

// The webhook screens, for a family's admins: the endpoints with a form to
// add one (its secret shown once), each endpoint's deliveries with a
// button to send one again.

type webhooksData struct {
	Form      *form
	Endpoints []models.WebhookEndpoint
	Events    []string
	Chosen    map[string]bool
	Secret    string // the new endpoint's, shown once
}

type webhookData struct {
	Endpoint   *models.WebhookEndpoint
	Deliveries []models.WebhookDelivery
	Total      int
}

func (h *Handler) webhooks(c *fiber.Ctx) error {
	return h.webhooksPage(c, fiber.StatusOK, newForm(c), "")
}

func (h *Handler) webhooksPage(c *fiber.Ctx, status int, f *form, secret string) error {
	es, err := h.store.Webhooks(c.UserContext(), web.SessionOf(c).User.FamilyID)
	if err != nil {
		return err
	}
	d := webhooksData{Form: f, Endpoints: es, Events: models.WebhookEvents, Chosen: map[string]bool{}, Secret: secret}
	for _, ev := range f.c.Request().PostArgs().PeekMulti("events") {
		d.Chosen[string(ev)] = true
	}
	if status == fiber.StatusOK && secret == "" {
		d.Chosen[models.EventTransactionCreated] = true
	}
	if secret != "" {
		c.Set(fiber.HeaderCacheControl, "no-store")
	}
	return h.pages.Render(c, status, "webhooks", web.Page{Title: "Webhooks", Data: d})
}

// createWebhook registers an endpoint and shows its secret, this once.
func (h *Handler) createWebhook(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	f := newForm(c)
	url := f.text("url", "URL", 2048, true)
	desc := f.text("description", "Description", 255, false)
	var events []string
	for _, ev := range c.Request().PostArgs().PeekMulti("events") {
		events = append(events, string(ev))
	}
	if !f.ok() {
		return h.webhooksPage(c, fiber.StatusUnprocessableEntity, f, "")
	}
	secret, err := jobs.NewWebhookSecret(rand.Reader)
	if err != nil {
		return err
	}
	_, err = h.store.CreateWebhook(c.UserContext(), u.FamilyID, &u.ID, models.WebhookInput{URL: &url, Description: &desc, Events: events}, secret)
	var inv *models.InvalidError
	if errors.As(err, &inv) {
		for _, p := range inv.Problems {
			field := "url"
			if len(p) >= 6 && p[:6] == "Events" {
				field = "events"
			}
			f.fail(field, p+".")
		}
		return h.webhooksPage(c, fiber.StatusUnprocessableEntity, f, "")
	}
	if err != nil {
		return err
	}
	return h.webhooksPage(c, fiber.StatusOK, newForm(c), secret)
}

// webhookOf reads the path's endpoint of the family.
func (h *Handler) webhookOf(c *fiber.Ctx) (*models.WebhookEndpoint, error) {
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return nil, models.ErrNotFound
	}
	return h.store.Webhook(c.UserContext(), web.SessionOf(c).User.FamilyID, id)
}

// webhook lists an endpoint's latest deliveries.
func (h *Handler) webhook(c *fiber.Ctx) error {
	e, err := h.webhookOf(c)
	if err != nil {
		return err
	}
	ds, n, err := h.store.WebhookDeliveries(c.UserContext(), e.FamilyID, e.ID, models.Page{Number: 1, Size: 50})
	if err != nil {
		return err
	}
	return h.pages.Render(c, fiber.StatusOK, "webhook", web.Page{Title: "Webhook deliveries", Data: webhookData{Endpoint: e, Deliveries: ds, Total: n}})
}

// toggleWebhook switches an endpoint on or off.
func (h *Handler) toggleWebhook(c *fiber.Ctx) error {
	e, err := h.webhookOf(c)
	if err != nil {
		return err
	}
	on := !e.Enabled
	if _, err := h.store.UpdateWebhook(c.UserContext(), e.FamilyID, e.ID, models.WebhookInput{Enabled: &on}); err != nil {
		return err
	}
	msg := "The endpoint is off: nothing is sent to it."
	if on {
		msg = "The endpoint is on again."
	}
	return h.site.Redirect(c, "/settings/webhooks", msg)
}

func (h *Handler) deleteWebhook(c *fiber.Ctx) error {
	e, err := h.webhookOf(c)
	if err != nil {
		return err
	}
	if err := h.store.DeleteWebhook(c.UserContext(), e.FamilyID, e.ID); err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/webhooks", "The endpoint and its deliveries were removed.")
}

// redeliverWebhook sends one delivery of the endpoint again, now.
func (h *Handler) redeliverWebhook(c *fiber.Ctx) error {
	e, err := h.webhookOf(c)
	if err != nil {
		return err
	}
	did, err := uuid.Parse(c.Params("delivery"))
	if err != nil {
		return models.ErrNotFound
	}
	d, err := h.store.WebhookDelivery(c.UserContext(), e.FamilyID, did)
	if err != nil {
		return err
	}
	if d.EndpointID != e.ID {
		return models.ErrNotFound
	}
	if _, err := jobs.RedeliverWebhook(c.UserContext(), h.store, h.queue, e.FamilyID, d.ID); err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/webhooks/"+e.ID.String(), "The delivery is queued to be sent again.")
}
