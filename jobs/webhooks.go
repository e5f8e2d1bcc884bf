package jobs

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/publicaddr"
)

// Outgoing webhooks (issue 29). Every 15 seconds the sweep queues a scan
// of each family with an endpoint; the scan reads the family's ledger
// changed since its cursor (after the writes committed and the rules
// filed them) and queues a delivery per event and endpoint; a delivery
// task signs the event by the Standard Webhooks specification and posts
// it. Nothing of this runs in a request: a write costs nothing more for
// having listeners.

const (
	TypeWebhookSweep   = "webhooks:sweep"
	TypeWebhookScan    = "webhooks:scan"
	TypeWebhookDeliver = "webhooks:deliver"
)

// WebhookOptions configure deliveries.
type WebhookOptions struct {
	// AllowPrivateHosts lets endpoints be on private and loopback
	// addresses (WEBHOOKS_ALLOW_PRIVATE_HOSTS): tests, a home server.
	AllowPrivateHosts bool
	// Client, when set, replaces the client made from the above (tests).
	Client *http.Client
}

// webhookTimeout bounds one attempt: a slow receiver is a failed attempt,
// never a stuck worker.
const webhookTimeout = 10 * time.Second

// webhookGiveUp is how long deliveries are retried, and how long an
// endpoint may fail every delivery before it is switched off.
const webhookGiveUp = 72 * time.Hour

// webhookBackoff is the wait before each retry: the first within 15
// seconds of a failure, then growing; past the last, every 12 hours until
// webhookGiveUp.
var webhookBackoff = []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute,
	2 * time.Hour, 5 * time.Hour, 10 * time.Hour}

// NewWebhookClient is the client deliveries post with: no redirects
// followed (a redirect is a failed attempt, recorded), private addresses
// refused unless allowed.
func NewWebhookClient(o WebhookOptions) *http.Client {
	if o.Client != nil {
		return o.Client
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = publicaddr.Dialer(o.AllowPrivateHosts).DialContext
	tr.Proxy = nil
	return &http.Client{Transport: tr, Timeout: webhookTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// NewWebhookSweepTask is the periodic sweep.
func NewWebhookSweepTask() *asynq.Task {
	return asynq.NewTask(TypeWebhookSweep, nil, asynq.Queue(QueueDefault), asynq.MaxRetry(0), asynq.Timeout(time.Minute),
		asynq.Unique(14*time.Second))
}

// WebhookScanPayload names the family whose ledger to read.
type WebhookScanPayload struct {
	FamilyID uuid.UUID `json:"family_id"`
}

// WebhookDeliverPayload names one delivery.
type WebhookDeliverPayload struct {
	FamilyID   uuid.UUID `json:"family_id"`
	DeliveryID uuid.UUID `json:"delivery_id"`
}

// NewWebhookScanTask reads one family's ledger for events; its task id
// keeps one waiting per family.
func NewWebhookScanTask(familyID uuid.UUID) (*asynq.Task, error) {
	return NewTask(TypeWebhookScan, WebhookScanPayload{FamilyID: familyID}, asynq.Queue(QueueDefault),
		asynq.TaskID("webhooks:scan:"+familyID.String()), asynq.MaxRetry(3), asynq.Timeout(5*time.Minute))
}

// NewWebhookDeliverTask is attempt n+1 of a delivery, after wait; its task
// id keeps one task per attempt.
func NewWebhookDeliverTask(familyID, deliveryID uuid.UUID, n int, wait time.Duration) (*asynq.Task, error) {
	return NewTask(TypeWebhookDeliver, WebhookDeliverPayload{FamilyID: familyID, DeliveryID: deliveryID},
		asynq.Queue(QueueDefault), asynq.TaskID(fmt.Sprintf("webhooks:deliver:%s:%d", deliveryID, n)),
		asynq.MaxRetry(2), asynq.Timeout(webhookTimeout+20*time.Second), asynq.ProcessIn(wait))
}

// WebhookSweep queues a scan of every family with an enabled endpoint or
// someone who asked for email about events; one scan waits per family at
// a time.
func (h *Handlers) WebhookSweep(ctx context.Context, t *asynq.Task) error {
	families, err := h.Store.WebhookFamilies(ctx)
	if err != nil {
		return err
	}
	// The same scan decides the emails that follow events.
	notify, err := h.Store.NotifyFamilies(ctx, false)
	if err != nil {
		return err
	}
	for _, f := range notify {
		if !slices.Contains(families, f) {
			families = append(families, f)
		}
	}
	for _, f := range families {
		task, err := NewWebhookScanTask(f)
		if err != nil {
			return err
		}
		if err := EnqueueOnce(ctx, h.Queue, task); err != nil {
			return err
		}
	}
	return nil
}

// WebhookScan turns the family's ledger changes since its cursor into
// deliveries, then moves the cursor. Run twice, it queues nothing twice:
// each event's key is unique per endpoint.
func (h *Handlers) WebhookScan(ctx context.Context, t *asynq.Task) error {
	var p WebhookScanPayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	cur, err := h.Store.WebhookCursorOf(ctx, p.FamilyID)
	if err != nil {
		return err
	}
	prefs, err := h.Store.NotificationPreferences(ctx, p.FamilyID)
	if err != nil {
		return err
	}
	// emit hands events to the endpoints and to the people who asked for
	// email about them, both before the cursor moves past them.
	emit := func(events []models.WebhookEvent) error {
		if err := h.QueueWebhooks(ctx, p.FamilyID, events); err != nil {
			return err
		}
		return h.NotifyEvents(ctx, p.FamilyID, prefs, events)
	}
	pos := cur.FeedStart()
	since := pos.At
	changed := false // the ledger moved: budgets may have gone over
	for {
		rows, err := h.Store.TransactionFeed(ctx, p.FamilyID, pos, 500)
		if err != nil {
			return err
		}
		events := make([]models.WebhookEvent, 0, len(rows))
		for i := range rows {
			evs, err := transactionEvents(&rows[i], since)
			if err != nil {
				return err
			}
			events = append(events, evs...)
		}
		if err := emit(events); err != nil {
			return err
		}
		if len(rows) == 0 {
			break
		}
		changed = true
		last := rows[len(rows)-1]
		pos = models.FeedPosition{At: last.UpdatedAt, ID: last.ID}
		if last.UpdatedAt.After(cur.ReadTo) {
			cur.ReadTo = last.UpdatedAt
		}
		if len(rows) < 500 {
			break
		}
	}
	gone, err := h.Store.TransactionDeletions(ctx, p.FamilyID, since)
	if err != nil {
		return err
	}
	events := make([]models.WebhookEvent, 0, len(gone))
	for _, g := range gone {
		ev, err := WebhookEventOf(models.EventTransactionDeleted, g.TransactionID.String(), g.DeletedAt(),
			map[string]any{"id": g.TransactionID, "account_id": g.AccountID})
		if err != nil {
			return err
		}
		events = append(events, ev)
		if at := g.DeletedAt(); at.After(cur.ReadTo) {
			cur.ReadTo = at
		}
	}
	more, err := h.runEvents(ctx, p.FamilyID, since, cur)
	if err != nil {
		return err
	}
	bills, err := h.billEvents(ctx, p.FamilyID, since, cur, prefs)
	if err != nil {
		return err
	}
	more = append(more, bills...)
	if changed {
		over, err := h.budgetEvents(ctx, p.FamilyID, prefs)
		if err != nil {
			return err
		}
		more = append(more, over...)
	}
	if err := emit(append(events, more...)); err != nil {
		return err
	}
	return h.Store.SaveWebhookCursor(ctx, cur)
}

// runEvents are the ends of the family's bank syncs and file imports since
// the read began: sync.completed or sync.failed, import.completed. They
// move the cursor as the transactions do.
func (h *Handlers) runEvents(ctx context.Context, familyID uuid.UUID, since time.Time, cur *models.WebhookCursor) ([]models.WebhookEvent, error) {
	var events []models.WebhookEvent
	add := func(typ, key string, at time.Time, data any) error {
		ev, err := WebhookEventOf(typ, key, at, data)
		events = append(events, ev)
		if at.After(cur.ReadTo) {
			cur.ReadTo = at
		}
		return err
	}
	syncs, err := h.Store.FinishedSyncs(ctx, familyID, since)
	if err != nil {
		return nil, err
	}
	for _, sy := range syncs {
		typ := models.EventSyncCompleted
		if sy.Status == models.SyncFailed {
			typ = models.EventSyncFailed
		}
		data := map[string]any{"id": sy.ID, "connection_id": sy.ConnectionID, "kind": sy.Kind, "trigger": sy.Trigger,
			"status": sy.Status, "error": sy.Error, "warnings": sy.Warnings, "started_at": sy.StartedAt, "finished_at": sy.FinishedAt}
		if err := add(typ, sy.ID.String(), *sy.FinishedAt, data); err != nil {
			return nil, err
		}
	}
	imports, err := h.Store.CompletedImports(ctx, familyID, since)
	if err != nil {
		return nil, err
	}
	for _, im := range imports {
		data := map[string]any{"id": im.ID, "account_id": im.AccountID, "type": im.Type, "status": im.Status,
			"rows_count": im.RowsCount, "imported_rows_count": im.ImportedRowsCount, "duplicate_rows_count": im.DuplicateRowsCount,
			"invalid_rows_count": im.InvalidRowsCount, "completed_at": im.CompletedAt}
		if err := add(models.EventImportCompleted, im.ID.String(), *im.CompletedAt, data); err != nil {
			return nil, err
		}
	}
	return events, nil
}

// budgetEvents are budget.exceeded for each category of this month's
// budget whose spending passed its amount: once per category and month,
// by its key. Read only after the ledger moved, and only for a family
// that listens for it (an endpoint, or a person by email).
func (h *Handlers) budgetEvents(ctx context.Context, familyID uuid.UUID, prefs []models.NotificationPreference) ([]models.WebhookEvent, error) {
	es, err := h.Store.Webhooks(ctx, familyID)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(es, func(e models.WebhookEndpoint) bool { return e.Wants(models.EventBudgetExceeded) }) &&
		!slices.ContainsFunc(prefs, func(p models.NotificationPreference) bool { return p.Wants(models.NotifyBudgetExceeded) }) {
		return nil, nil
	}
	b, err := h.Store.BudgetForMonth(ctx, familyID, civil.DateOf(h.now()))
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	lines, _, err := h.Store.BudgetLines(ctx, familyID, models.BudgetLineFilter{BudgetID: &b.ID}, models.Page{Number: 1, Size: 1000})
	if err != nil {
		return nil, err
	}
	var out []models.WebhookEvent
	for _, l := range lines {
		if l.BudgetedSpending <= 0 || l.ActualSpending <= l.BudgetedSpending {
			continue
		}
		data := map[string]any{"budget_id": b.ID, "budget_category_id": l.ID, "category_id": l.CategoryID, "category": l.CategoryName,
			"month": string(l.StartDate), "budgeted": l.BudgetedSpending.String(), "spent": l.ActualSpending.String(),
			"currency": l.Currency}
		ev, err := WebhookEventOf(models.EventBudgetExceeded, l.ID.String()+":"+string(l.StartDate), h.now(), data)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// QueueWebhooks records deliveries of events to the family's endpoints
// and queues the sending of each new one.
func (h *Handlers) QueueWebhooks(ctx context.Context, familyID uuid.UUID, events []models.WebhookEvent) error {
	queued, err := h.Store.QueueWebhookEvents(ctx, familyID, events)
	if err != nil {
		return err
	}
	for _, d := range queued {
		if err := h.queueDelivery(ctx, &d, 0); err != nil {
			return err
		}
	}
	return nil
}

// queueDelivery queues d's next attempt after wait.
func (h *Handlers) queueDelivery(ctx context.Context, d *models.WebhookDelivery, wait time.Duration) error {
	task, err := NewWebhookDeliverTask(d.FamilyID, d.ID, d.Attempts, wait)
	if err != nil {
		return err
	}
	if err := EnqueueOnce(ctx, h.Queue, task); err != nil {
		return fmt.Errorf("jobs: queue webhook delivery: %w", err)
	}
	return nil
}

// RedeliverWebhook sends a delivery again, by hand: pending once more, and
// queued now.
func RedeliverWebhook(ctx context.Context, s *models.Store, q *asynq.Client, familyID, id uuid.UUID) (*models.WebhookDelivery, error) {
	d, err := s.RetryWebhookDelivery(ctx, familyID, id)
	if err != nil {
		return nil, err
	}
	h := &Handlers{Store: s, Queue: q}
	return d, h.queueDelivery(ctx, d, 0)
}

// WebhookDeliver makes one attempt of a delivery and records it; a
// failure queues the next attempt, until webhookGiveUp after the event.
func (h *Handlers) WebhookDeliver(ctx context.Context, t *asynq.Task) error {
	var p WebhookDeliverPayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	d, err := h.Store.WebhookDelivery(ctx, p.FamilyID, p.DeliveryID)
	if err != nil {
		return IgnoreNotFound(err)
	}
	if d.Status != models.DeliveryPending {
		return nil // sent already, or given up
	}
	e, err := h.Store.Webhook(ctx, d.FamilyID, d.EndpointID)
	if err != nil {
		return IgnoreNotFound(err)
	}
	if !e.Enabled {
		_, err := h.Store.RecordWebhookAttempt(ctx, d, models.WebhookAttempt{Err: "The endpoint is switched off"}, webhookGiveUp)
		return err
	}
	secret, err := h.Store.WebhookSecret(e)
	if err != nil {
		return err
	}
	a := h.post(ctx, e.URL, secret, d)
	if a.Code < 200 || a.Code >= 300 {
		n := min(d.Attempts, len(webhookBackoff)-1)
		wait := webhookBackoff[n]
		if d.Attempts >= len(webhookBackoff) {
			wait = 12 * time.Hour
		}
		if next := h.now().Add(wait); next.Before(d.CreatedAt.Add(webhookGiveUp)) {
			a.Next = &next
		}
	}
	disabled, err := h.Store.RecordWebhookAttempt(ctx, d, a, webhookGiveUp)
	if err != nil {
		return err
	}
	if disabled {
		// The screens and the API show the endpoint off and why; its
		// admins' emails were written with the switch (RecordWebhookAttempt).
		h.logger(ctx, t).Warn("webhook endpoint switched off after three days of failures", "endpoint", e.ID, "family", e.FamilyID)
		refs, err := h.Store.PendingNotifications(ctx, e.FamilyID)
		if err != nil {
			return err
		}
		if err := h.queueSends(ctx, refs); err != nil {
			return err
		}
	}
	if a.Next != nil && d.Status == models.DeliveryPending {
		return h.queueDelivery(ctx, d, a.Next.Sub(h.now()))
	}
	return nil
}

// post sends d to url signed with secret, once.
func (h *Handlers) post(ctx context.Context, url, secret string, d *models.WebhookDelivery) models.WebhookAttempt {
	start := h.now()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return models.WebhookAttempt{Err: "The endpoint's secret cannot sign: " + err.Error()}
	}
	msgID := "msg_" + d.ID.String()
	sig, err := wh.Sign(msgID, start, []byte(d.Payload))
	if err != nil {
		return models.WebhookAttempt{Err: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(d.Payload)))
	if err != nil {
		return models.WebhookAttempt{Err: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Coffer-Webhooks/1")
	req.Header.Set("webhook-id", msgID)
	req.Header.Set("webhook-timestamp", fmt.Sprint(start.Unix()))
	req.Header.Set("webhook-signature", sig)
	client := h.WebhookClient
	if client == nil {
		client = NewWebhookClient(WebhookOptions{})
	}
	res, err := client.Do(req)
	a := models.WebhookAttempt{Duration: h.now().Sub(start)}
	if err != nil {
		a.Err = err.Error()
		if errors.Is(err, publicaddr.ErrPrivate) {
			a.Err = "The endpoint's address is not public (set WEBHOOKS_ALLOW_PRIVATE_HOSTS to allow it)"
		}
		return a
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	a.Code = res.StatusCode
	if res.StatusCode >= 300 && res.StatusCode < 400 {
		a.Err = "The endpoint answered with a redirect, which deliveries do not follow"
	}
	return a
}

// NewWebhookSecret is a new signing secret in the specification's form:
// whsec_ and 32 random bytes in base64.
func NewWebhookSecret(random io.Reader) (string, error) {
	b := make([]byte, 32)
	if _, err := io.ReadFull(random, b); err != nil {
		return "", err
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b), nil
}

// webhookEnvelope is every event's body, as the specification suggests:
// the type, when it happened, and its data.
type webhookEnvelope struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      any       `json:"data"`
}

// WebhookEventOf builds an event of type typ keyed key, with data.
func WebhookEventOf(typ, key string, at time.Time, data any) (models.WebhookEvent, error) {
	b, err := json.Marshal(webhookEnvelope{Type: typ, Timestamp: at.UTC(), Data: data})
	return models.WebhookEvent{Type: typ, Key: typ + ":" + key, Payload: string(b)}, err
}

// transactionEvents are the events of one changed row of the feed: its
// creation when it was made since the read began (since), its deletion,
// or this version of it as an update.
func transactionEvents(t *models.Transaction, since time.Time) ([]models.WebhookEvent, error) {
	data := transactionData(t)
	var out []models.WebhookEvent
	add := func(typ, key string, at time.Time) error {
		ev, err := WebhookEventOf(typ, key, at, data)
		out = append(out, ev)
		return err
	}
	if t.DeletedAt != nil {
		return out, add(models.EventTransactionDeleted, t.ID.String(), *t.DeletedAt)
	}
	if !t.CreatedAt.Before(since) {
		if err := add(models.EventTransactionCreated, t.ID.String(), t.CreatedAt); err != nil {
			return nil, err
		}
	}
	if t.UpdatedAt.After(t.CreatedAt) {
		return out, add(models.EventTransactionUpdated, fmt.Sprintf("%s:%d", t.ID, t.UpdatedAt.UnixMicro()), t.UpdatedAt)
	}
	return out, nil
}

// transactionData is a transaction as events carry it: the fields of the
// API's transaction, amounts as decimal strings in the account's currency.
func transactionData(t *models.Transaction) map[string]any {
	m := map[string]any{
		"id": t.ID, "account_id": t.AccountID, "date": string(t.Date), "amount": t.Amount.String(),
		"currency": t.Currency, "name": t.Name, "notes": t.Notes, "pending": t.Pending, "excluded": t.Excluded,
		"category": nil, "merchant": nil, "split_parent_id": t.SplitParentID,
		"created_at": t.CreatedAt.UTC(), "updated_at": t.UpdatedAt.UTC(),
	}
	if t.Account != nil {
		m["account"] = map[string]any{"id": t.Account.ID, "name": t.Account.Name, "currency": t.Account.Currency}
	}
	if t.Category != nil {
		m["category"] = map[string]any{"id": t.Category.ID, "name": t.Category.Name}
	}
	if t.Merchant != nil {
		m["merchant"] = map[string]any{"id": t.Merchant.ID, "name": t.Merchant.Name}
	}
	return m
}
