package rest

import (
	"context"
	"crypto/rand"
	"encoding/json"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/jobs"
	"coffer/models"
)

// Outgoing webhooks, for a family's admins: endpoints (the signing secret
// answered once, at creation), their deliveries, and sending one again.

type webhookJSON struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	Description    string   `json:"description"`
	Events         []string `json:"events"`
	Enabled        bool     `json:"enabled"`
	DisabledReason *string  `json:"disabled_reason"`
	FailingSince   *string  `json:"failing_since"`
	Secret         string   `json:"secret,omitempty"` // at creation only
	CreatedAt      string   `json:"created_at"`
	UpdatedAt      string   `json:"updated_at"`
}

type webhookDeliveryJSON struct {
	ID            string          `json:"id"`
	WebhookID     string          `json:"webhook_id"`
	EventType     string          `json:"event_type"`
	Status        string          `json:"status"`
	Attempts      int             `json:"attempts"`
	ResponseCode  *int            `json:"response_code"`
	LastError     *string         `json:"last_error"`
	DurationMS    *int            `json:"duration_ms"`
	NextAttemptAt *string         `json:"next_attempt_at"`
	DeliveredAt   *string         `json:"delivered_at"`
	Payload       json.RawMessage `json:"payload"`
	CreatedAt     string          `json:"created_at"`
	UpdatedAt     string          `json:"updated_at"`
}

func renderWebhook(e *models.WebhookEndpoint) webhookJSON {
	return webhookJSON{ID: e.ID.String(), URL: e.URL, Description: e.Description, Events: e.Events, Enabled: e.Enabled,
		DisabledReason: e.DisabledReason, FailingSince: optTimestamp(e.FailingSince),
		CreatedAt: timestamp(e.CreatedAt), UpdatedAt: timestamp(e.UpdatedAt)}
}

func renderWebhookDelivery(d *models.WebhookDelivery) webhookDeliveryJSON {
	return webhookDeliveryJSON{ID: "msg_" + d.ID.String(), WebhookID: d.EndpointID.String(), EventType: d.EventType, Status: d.Status,
		Attempts: d.Attempts, ResponseCode: d.ResponseCode, LastError: d.LastError, DurationMS: d.DurationMS,
		NextAttemptAt: optTimestamp(d.NextAttemptAt), DeliveredAt: optTimestamp(d.DeliveredAt),
		Payload: json.RawMessage(d.Payload), CreatedAt: timestamp(d.CreatedAt), UpdatedAt: timestamp(d.UpdatedAt)}
}

// familyAdmin refuses a credential whose person is not an admin of its
// family.
func (h *Handler) familyAdmin(c *fiber.Ctx, what string) error {
	k := KeyOf(c)
	u, err := h.store.User(c.UserContext(), k.FamilyID, k.UserID)
	if err != nil {
		return err
	}
	if u.Role != models.RoleAdmin && u.Role != models.RoleSuperAdmin {
		return httperr.Forbidden("Only a family admin can " + what)
	}
	return nil
}

// webhookInput reads an endpoint's fields from the "webhook" object.
func webhookInput(f *fields) models.WebhookInput {
	var in models.WebhookInput
	if s, ok := f.str("url", 2048, true); ok {
		in.URL = &s
	}
	if s, ok := f.str("description", maxName, true); ok {
		in.Description = &s
	}
	if f.has("events") {
		if err := json.Unmarshal(f.raw["events"], &in.Events); err != nil || in.Events == nil {
			f.add("events must be an array of event names")
		}
	}
	if v, ok := f.boolean("enabled"); ok {
		in.Enabled = &v
	}
	return in
}

func (h *Handler) listWebhooks(c *fiber.Ctx) error {
	if err := h.familyAdmin(c, "see webhooks"); err != nil {
		return err
	}
	es, err := h.store.Webhooks(c.UserContext(), KeyOf(c).FamilyID)
	if err != nil {
		return err
	}
	out := make([]webhookJSON, 0, len(es))
	for i := range es {
		out = append(out, renderWebhook(&es[i]))
	}
	return c.JSON(fiber.Map{"webhooks": out})
}

func (h *Handler) showWebhook(c *fiber.Ctx) error {
	if err := h.familyAdmin(c, "see webhooks"); err != nil {
		return err
	}
	return showOne(c, h.store.Webhook, renderWebhook)
}

// createWebhook registers an endpoint and answers its signing secret,
// this once.
func (h *Handler) createWebhook(c *fiber.Ctx) error {
	if err := h.familyAdmin(c, "add webhooks"); err != nil {
		return err
	}
	f, err := decodeObject(c, "webhook")
	if err != nil {
		return err
	}
	in := webhookInput(f)
	if in.URL == nil && !f.bad("url") {
		f.add("url is required")
	}
	if err := f.err(); err != nil {
		return err
	}
	secret, err := jobs.NewWebhookSecret(rand.Reader)
	if err != nil {
		return err
	}
	k := KeyOf(c)
	e, err := h.store.CreateWebhook(c.UserContext(), k.FamilyID, &k.UserID, in, secret)
	if err != nil {
		return err
	}
	out := renderWebhook(e)
	out.Secret = secret
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(fiber.StatusCreated).JSON(out)
}

func (h *Handler) updateWebhook(c *fiber.Ctx) error {
	if err := h.familyAdmin(c, "change webhooks"); err != nil {
		return err
	}
	e, err := byPathID(c, h.store.Webhook)
	if err != nil {
		return err
	}
	f, err := decodeObject(c, "webhook")
	if err != nil {
		return err
	}
	in := webhookInput(f)
	if err := f.err(); err != nil {
		return err
	}
	e, err = h.store.UpdateWebhook(c.UserContext(), e.FamilyID, e.ID, in)
	if err != nil {
		return err
	}
	return c.JSON(renderWebhook(e))
}

func (h *Handler) deleteWebhook(c *fiber.Ctx) error {
	if err := h.familyAdmin(c, "remove webhooks"); err != nil {
		return err
	}
	e, err := byPathID(c, h.store.Webhook)
	if err != nil {
		return err
	}
	if err := h.store.DeleteWebhook(c.UserContext(), e.FamilyID, e.ID); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"message": "Webhook deleted successfully"})
}

func (h *Handler) listWebhookDeliveries(c *fiber.Ctx) error {
	if err := h.familyAdmin(c, "see webhooks"); err != nil {
		return err
	}
	e, err := byPathID(c, h.store.Webhook)
	if err != nil {
		return err
	}
	list := func(ctx context.Context, familyID uuid.UUID, p models.Page) ([]models.WebhookDelivery, int, error) {
		return h.store.WebhookDeliveries(ctx, familyID, e.ID, p)
	}
	ds, page, err := listPage(c, list, renderWebhookDelivery)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"deliveries": ds, "pagination": page})
}

// redeliverWebhook sends a delivery of the endpoint again, now.
func (h *Handler) redeliverWebhook(c *fiber.Ctx) error {
	if err := h.familyAdmin(c, "send webhooks again"); err != nil {
		return err
	}
	e, err := byPathID(c, h.store.Webhook)
	if err != nil {
		return err
	}
	raw := c.Params("delivery_id")
	if len(raw) > 4 && raw[:4] == "msg_" {
		raw = raw[4:]
	}
	did, err := uuid.Parse(raw)
	if err != nil {
		return httperr.NotFoundOf("Delivery")
	}
	ctx := c.UserContext()
	d, err := h.store.WebhookDelivery(ctx, e.FamilyID, did)
	if err != nil {
		return err
	}
	if d.EndpointID != e.ID {
		return httperr.NotFoundOf("Delivery")
	}
	if d, err = jobs.RedeliverWebhook(ctx, h.store, h.queue, e.FamilyID, d.ID); err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(renderWebhookDelivery(d))
}
