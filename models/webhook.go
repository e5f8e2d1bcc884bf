package models

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Webhook events (issue 29): what an endpoint may subscribe to.
const (
	EventTransactionCreated = "transaction.created"
	EventTransactionUpdated = "transaction.updated"
	EventTransactionDeleted = "transaction.deleted"
	EventImportCompleted    = "import.completed"
	EventSyncCompleted      = "sync.completed"
	EventSyncFailed         = "sync.failed"
	EventBillDue            = "bill.due"
	EventBillMissed         = "bill.missed"
	EventBudgetExceeded     = "budget.exceeded"
)

// WebhookEvents is every event, in the order screens list them.
var WebhookEvents = []string{EventTransactionCreated, EventTransactionUpdated, EventTransactionDeleted,
	EventImportCompleted, EventSyncCompleted, EventSyncFailed, EventBillDue, EventBillMissed, EventBudgetExceeded}

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// The column a webhook's signing secret is sealed for.
const (
	webhookTable  = "webhook_endpoints"
	webhookColumn = "secret_enc"
)

// WebhookEndpoint is a URL an admin registered for some events.
type WebhookEndpoint struct {
	bun.BaseModel `bun:"table:webhook_endpoints,alias:we"`

	ID             uuid.UUID  `bun:"id,pk"`
	FamilyID       uuid.UUID  `bun:"family_id"`
	URL            string     `bun:"url"`
	Description    string     `bun:"description"`
	Events         []string   `bun:"events,type:json"`
	SecretEnc      string     `bun:"secret_enc"`
	Enabled        bool       `bun:"enabled"`
	DisabledReason *string    `bun:"disabled_reason"`
	FailingSince   *time.Time `bun:"failing_since"`
	CreatedBy      *uuid.UUID `bun:"created_by"`
	CreatedAt      time.Time  `bun:"created_at"`
	UpdatedAt      time.Time  `bun:"updated_at"`
}

// Wants reports whether the endpoint takes event.
func (e *WebhookEndpoint) Wants(event string) bool {
	return e.Enabled && slices.Contains(e.Events, event)
}

// WebhookDelivery is one event sent (or to be sent) to one endpoint. Its
// ID is the webhook-id every attempt carries.
type WebhookDelivery struct {
	bun.BaseModel `bun:"table:webhook_deliveries,alias:wd"`

	ID            uuid.UUID  `bun:"id,pk"`
	FamilyID      uuid.UUID  `bun:"family_id"`
	EndpointID    uuid.UUID  `bun:"endpoint_id"`
	EventType     string     `bun:"event_type"`
	EventKey      string     `bun:"event_key"`
	Payload       string     `bun:"payload"`
	Status        string     `bun:"status"`
	Attempts      int        `bun:"attempts"`
	ResponseCode  *int       `bun:"response_code"`
	LastError     *string    `bun:"last_error"`
	DurationMS    *int       `bun:"duration_ms"`
	NextAttemptAt *time.Time `bun:"next_attempt_at"`
	DeliveredAt   *time.Time `bun:"delivered_at"`
	CreatedAt     time.Time  `bun:"created_at"`
	UpdatedAt     time.Time  `bun:"updated_at"`
}

// WebhookInput is what an admin sets on an endpoint; nil leaves a field
// as it is on update.
type WebhookInput struct {
	URL         *string
	Description *string
	Events      []string
	Enabled     *bool
}

// checkWebhookURL refuses what cannot be an endpoint: not http(s), no
// host, or credentials in it. Whether its host is a public address is
// checked when a delivery dials it (publicaddr), where a name cannot
// change its answer between check and use.
func checkWebhookURL(raw string) []string {
	u, err := url.Parse(raw)
	switch {
	case raw == "" || err != nil:
		return []string{"URL is not a valid address"}
	case u.Scheme != "http" && u.Scheme != "https":
		return []string{"URL must start with http:// or https://"}
	case u.Host == "" || u.Hostname() == "":
		return []string{"URL must name a host"}
	case u.User != nil:
		return []string{"URL must not carry a user name or password"}
	case len(raw) > 2048:
		return []string{"URL is longer than 2048 characters"}
	}
	return nil
}

func (in *WebhookInput) apply(e *WebhookEndpoint) error {
	var problems []string
	if in.URL != nil {
		e.URL = strings.TrimSpace(*in.URL)
		problems = append(problems, checkWebhookURL(e.URL)...)
	}
	if in.Description != nil {
		e.Description = strings.TrimSpace(*in.Description)
		if len([]rune(e.Description)) > 255 {
			problems = append(problems, "Description is longer than 255 characters")
		}
	}
	if in.Events != nil {
		e.Events = nil
		for _, ev := range in.Events {
			if !slices.Contains(WebhookEvents, ev) {
				problems = append(problems, fmt.Sprintf("Events has an unknown event %q (one of %s)", ev, strings.Join(WebhookEvents, ", ")))
			} else if !slices.Contains(e.Events, ev) {
				e.Events = append(e.Events, ev)
			}
		}
	}
	if len(e.Events) == 0 {
		problems = append(problems, "Events must name at least one event")
	}
	if in.Enabled != nil {
		e.Enabled = *in.Enabled
		if e.Enabled {
			e.DisabledReason, e.FailingSince = nil, nil
		}
	}
	if len(problems) > 0 {
		return Invalid(problems...)
	}
	return nil
}

// CreateWebhook registers an endpoint of familyID signing with secret
// (sealed here).
func (s *Store) CreateWebhook(ctx context.Context, familyID uuid.UUID, by *uuid.UUID, in WebhookInput, secretText string) (*WebhookEndpoint, error) {
	now := s.now()
	e := &WebhookEndpoint{ID: NewID(), FamilyID: familyID, Enabled: true, CreatedBy: by, CreatedAt: now, UpdatedAt: now}
	if in.URL == nil {
		return nil, Invalid("URL is required")
	}
	if err := in.apply(e); err != nil {
		return nil, err
	}
	sealed, err := s.Secrets.Seal(secretText, webhookTable, webhookColumn, e.ID.String())
	if err != nil {
		return nil, err
	}
	e.SecretEnc = sealed
	_, err = s.db.NewInsert().Model(e).Exec(ctx)
	return e, dbErr("create webhook", err)
}

// Webhook returns an endpoint of the family.
func (s *Store) Webhook(ctx context.Context, familyID, id uuid.UUID) (*WebhookEndpoint, error) {
	e := new(WebhookEndpoint)
	err := s.db.NewSelect().Model(e).Where("we.family_id = ? AND we.id = ?", familyID, id).Scan(ctx)
	return e, dbErr("get webhook", err)
}

// Webhooks lists the family's endpoints, oldest first.
func (s *Store) Webhooks(ctx context.Context, familyID uuid.UUID) ([]WebhookEndpoint, error) {
	var es []WebhookEndpoint
	err := s.db.NewSelect().Model(&es).Where("we.family_id = ?", familyID).OrderExpr("we.created_at, we.id").Scan(ctx)
	return es, dbErr("list webhooks", err)
}

// UpdateWebhook changes an endpoint of the family.
func (s *Store) UpdateWebhook(ctx context.Context, familyID, id uuid.UUID, in WebhookInput) (*WebhookEndpoint, error) {
	var e *WebhookEndpoint
	err := s.RunInTx(ctx, func(tx *Store) error {
		var err error
		if e, err = tx.Webhook(ctx, familyID, id); err != nil {
			return err
		}
		if err := in.apply(e); err != nil {
			return err
		}
		e.UpdatedAt = tx.now()
		_, err = tx.db.NewUpdate().Model(e).Column("url", "description", "events", "enabled", "disabled_reason", "failing_since", "updated_at").
			Where("family_id = ? AND id = ?", familyID, id).Exec(ctx)
		return dbErr("update webhook", err)
	})
	return e, err
}

// DeleteWebhook removes an endpoint of the family and its deliveries.
func (s *Store) DeleteWebhook(ctx context.Context, familyID, id uuid.UUID) error {
	res, err := s.db.NewDelete().Model((*WebhookEndpoint)(nil)).Where("family_id = ? AND id = ?", familyID, id).Exec(ctx)
	if err != nil {
		return dbErr("delete webhook", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return ErrNotFound
	}
	return nil
}

// WebhookSecret opens the endpoint's signing secret.
func (s *Store) WebhookSecret(e *WebhookEndpoint) (string, error) {
	return s.Secrets.Open(e.SecretEnc, webhookTable, webhookColumn, e.ID.String())
}

// WebhookEvent is an occurrence to deliver: its type, the key that makes
// queuing it twice a no-op, and its JSON payload.
type WebhookEvent struct {
	Type    string
	Key     string
	Payload string
}

// QueueWebhookEvents records a delivery of each event for every enabled
// endpoint of the family subscribed to it, and returns the new ones (an
// event queued before is skipped). The caller sends them.
func (s *Store) QueueWebhookEvents(ctx context.Context, familyID uuid.UUID, events []WebhookEvent) ([]WebhookDelivery, error) {
	if len(events) == 0 {
		return nil, nil
	}
	endpoints, err := s.Webhooks(ctx, familyID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var rows []WebhookDelivery
	for _, e := range endpoints {
		for _, ev := range events {
			if e.Wants(ev.Type) {
				rows = append(rows, WebhookDelivery{ID: NewID(), FamilyID: familyID, EndpointID: e.ID, EventType: ev.Type,
					EventKey: ev.Key, Payload: ev.Payload, Status: DeliveryPending, CreatedAt: now, UpdatedAt: now})
			}
		}
	}
	var queued []WebhookDelivery
	for len(rows) > 0 {
		batch := rows[:min(len(rows), 500)]
		rows = rows[len(batch):]
		var ids []uuid.UUID
		err := s.db.NewInsert().Model(&batch).On("CONFLICT (endpoint_id, event_key) DO NOTHING").Returning("id").Scan(ctx, &ids)
		if err != nil {
			return nil, dbErr("queue webhook deliveries", err)
		}
		for _, d := range batch {
			if slices.Contains(ids, d.ID) {
				queued = append(queued, d)
			}
		}
	}
	return queued, nil
}

// WebhookDelivery returns a delivery of the family.
func (s *Store) WebhookDelivery(ctx context.Context, familyID, id uuid.UUID) (*WebhookDelivery, error) {
	d := new(WebhookDelivery)
	err := s.db.NewSelect().Model(d).Where("wd.family_id = ? AND wd.id = ?", familyID, id).Scan(ctx)
	return d, dbErr("get webhook delivery", err)
}

// WebhookDeliveries lists a page of an endpoint's deliveries, newest
// first, and how many there are.
func (s *Store) WebhookDeliveries(ctx context.Context, familyID, endpointID uuid.UUID, p Page) ([]WebhookDelivery, int, error) {
	var ds []WebhookDelivery
	n, err := p.scan(ctx, s.db.NewSelect().Model(&ds).Where("wd.family_id = ? AND wd.endpoint_id = ?", familyID, endpointID).
		OrderExpr("wd.created_at DESC, wd.id DESC"))
	return ds, n, dbErr("list webhook deliveries", err)
}

// WebhookAttempt is how one attempt of a delivery went.
type WebhookAttempt struct {
	Code     int // the response's status; 0 when none came
	Err      string
	Duration time.Duration
	Next     *time.Time // when to try again; nil: no more tries
}

// RecordWebhookAttempt stores an attempt of delivery d: succeeded on a
// 2xx, else pending until its next try or failed after the last. An
// endpoint failing since before giveUp is switched off (it reports true
// then), and its family's admins are told by email in the same
// transaction (the outbox; the caller queues the sends). A delivery already succeeded is left as it is.
func (s *Store) RecordWebhookAttempt(ctx context.Context, d *WebhookDelivery, a WebhookAttempt, giveUp time.Duration) (disabled bool, err error) {
	err = s.RunInTx(ctx, func(tx *Store) error {
		now := tx.now()
		ok := a.Code >= 200 && a.Code < 300
		d.Attempts++
		d.UpdatedAt = now
		d.DurationMS = Ptr(int(a.Duration.Milliseconds()))
		d.ResponseCode, d.LastError, d.NextAttemptAt = nil, nil, nil
		if a.Code != 0 {
			d.ResponseCode = Ptr(a.Code)
		}
		if a.Err != "" {
			d.LastError = Ptr(truncate(a.Err, 500))
		}
		switch {
		case ok:
			d.Status, d.DeliveredAt = DeliverySucceeded, &now
		case a.Next != nil:
			d.Status, d.NextAttemptAt = DeliveryPending, a.Next
		default:
			d.Status = DeliveryFailed
		}
		res, err := tx.db.NewUpdate().Model(d).
			Column("status", "attempts", "response_code", "last_error", "duration_ms", "next_attempt_at", "delivered_at", "updated_at").
			Where("family_id = ? AND id = ? AND status <> ?", d.FamilyID, d.ID, DeliverySucceeded).Exec(ctx)
		if err != nil {
			return dbErr("record webhook attempt", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		if ok {
			_, err = tx.db.NewUpdate().Model((*WebhookEndpoint)(nil)).Set("failing_since = NULL").
				Where("family_id = ? AND id = ? AND failing_since IS NOT NULL", d.FamilyID, d.EndpointID).Exec(ctx)
			return dbErr("endpoint recovered", err)
		}
		if _, err := tx.db.NewUpdate().Model((*WebhookEndpoint)(nil)).Set("failing_since = ?", now).
			Where("family_id = ? AND id = ? AND failing_since IS NULL", d.FamilyID, d.EndpointID).Exec(ctx); err != nil {
			return dbErr("endpoint failing", err)
		}
		res, err = tx.db.NewUpdate().Model((*WebhookEndpoint)(nil)).Set("enabled = ?", false).
			Set("disabled_reason = ?", "Every delivery failed for three days").Set("updated_at = ?", now).
			Where("family_id = ? AND id = ? AND enabled AND failing_since <= ?", d.FamilyID, d.EndpointID, now.Add(-giveUp)).Exec(ctx)
		if err != nil {
			return dbErr("disable endpoint", err)
		}
		n, _ := res.RowsAffected()
		if disabled = n == 1; disabled {
			return tx.queueWebhookDisabled(ctx, d.FamilyID, d.EndpointID)
		}
		return nil
	})
	return disabled, err
}

// RetryWebhookDelivery makes a delivery pending again, to be sent once
// more by hand.
func (s *Store) RetryWebhookDelivery(ctx context.Context, familyID, id uuid.UUID) (*WebhookDelivery, error) {
	d, err := s.WebhookDelivery(ctx, familyID, id)
	if err != nil {
		return nil, err
	}
	d.Status, d.NextAttemptAt, d.UpdatedAt = DeliveryPending, nil, s.now()
	_, err = s.db.NewUpdate().Model(d).Column("status", "next_attempt_at", "updated_at").
		Where("family_id = ? AND id = ?", familyID, id).Exec(ctx)
	return d, dbErr("redeliver webhook", err)
}

// truncate cuts s to at most n bytes, never inside a character.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
