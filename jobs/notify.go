package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// Email notifications (issue 29, item 4). What to send is decided in two
// places, each writing outbox rows whose (user, kind, subject key) is
// unique, in the same run that decides:
//   - the webhook scan, from the same events it delivers (transactions
//     after the rules, budget.exceeded, sync.failed, bill.missed once its
//     source feeds the scan), before it moves its cursor: a scan killed
//     after the rows and before the cursor decides them again, a no-op;
//   - an hourly plan per family, for bills due within each person's N
//     days and the weekly digest.
// A send task per row then mails it (notify_send.go).

const (
	TypeNotifySweep = "notifications:sweep"
	TypeNotifyPlan  = "notifications:plan"
	TypeNotifySend  = "notifications:send"
)

// NotifySweepCron is when the notifications sweep runs: hourly.
const NotifySweepCron = "7 * * * *"

// digestHour is the hour (UTC) of Monday from which last week's digest is
// sent.
const digestHour = 6

// NotifyPayload names a family.
type NotifyPayload struct {
	FamilyID uuid.UUID `json:"family_id"`
}

// NotifySendPayload names one outbox row.
type NotifySendPayload struct {
	FamilyID       uuid.UUID `json:"family_id"`
	NotificationID uuid.UUID `json:"notification_id"`
}

// NewNotifySweepTask is the hourly sweep: it plans each family's bills
// and digests, and queues again the sends left unsent.
func NewNotifySweepTask() *asynq.Task {
	return asynq.NewTask(TypeNotifySweep, nil, asynq.Queue(QueueLow), asynq.MaxRetry(0), asynq.Timeout(5*time.Minute),
		asynq.Unique(50*time.Minute))
}

// NewNotifyPlanTask decides a family's periodic notifications.
func NewNotifyPlanTask(familyID uuid.UUID) (*asynq.Task, error) {
	return NewTask(TypeNotifyPlan, NotifyPayload{FamilyID: familyID}, asynq.Queue(QueueLow),
		asynq.TaskID("notifications:plan:"+familyID.String()), asynq.MaxRetry(3), asynq.Timeout(5*time.Minute))
}

// NewNotifySendTask mails one outbox row; its task id keeps one waiting
// per row.
func NewNotifySendTask(familyID, id uuid.UUID) (*asynq.Task, error) {
	return NewTask(TypeNotifySend, NotifySendPayload{FamilyID: familyID, NotificationID: id}, asynq.Queue(QueueDefault),
		asynq.TaskID("notifications:send:"+id.String()), asynq.MaxRetry(10), asynq.Timeout(notifySendTimeout))
}

// NotifySweep queues every planning family's plan, and the send of each
// row left unsent (its task lost, or its sender dead past its lease).
func (h *Handlers) NotifySweep(ctx context.Context, t *asynq.Task) error {
	families, err := h.Store.NotifyFamilies(ctx, true)
	if err != nil {
		return err
	}
	for _, f := range families {
		task, err := NewNotifyPlanTask(f)
		if err != nil {
			return err
		}
		if err := EnqueueOnce(ctx, h.Queue, task); err != nil {
			return err
		}
	}
	refs, err := h.Store.UnsentNotifications(ctx, h.now().Add(-5*time.Minute), 5000)
	if err != nil {
		return err
	}
	return h.queueSends(ctx, refs)
}

// queueSends queues the send of each row; a send already waiting is kept.
func (h *Handlers) queueSends(ctx context.Context, refs []models.OutboxRef) error {
	for _, r := range refs {
		task, err := NewNotifySendTask(r.FamilyID, r.ID)
		if err != nil {
			return err
		}
		if err := EnqueueOnce(ctx, h.Queue, task); err != nil {
			return fmt.Errorf("jobs: queue notification: %w", err)
		}
	}
	return nil
}

// queueNotifications writes rows to the outbox and queues the sends of
// the new ones.
func (h *Handlers) queueNotifications(ctx context.Context, rows []models.Notification) error {
	if len(rows) == 0 {
		return nil
	}
	queued, err := h.Store.QueueNotifications(ctx, rows)
	if err != nil {
		return err
	}
	refs := make([]models.OutboxRef, len(queued))
	for i, n := range queued {
		refs[i] = models.OutboxRef{FamilyID: n.FamilyID, ID: n.ID}
	}
	return h.queueSends(ctx, refs)
}

// eventEnvelope is an event's payload read back.
type eventEnvelope struct {
	Type      string         `json:"type"`
	Timestamp time.Time      `json:"timestamp"`
	Data      map[string]any `json:"data"`
}

// NotifyEvents decides the emails that events call for, for the people of
// the family who asked (prefs): a transaction created over a person's
// amount, a budget category over its amount, a bank connection whose
// sync failed, a bill missed. Each is keyed by its event's key (a failed
// connection's by when it last synced, so one failing streak is one
// email).
func (h *Handlers) NotifyEvents(ctx context.Context, familyID uuid.UUID, prefs []models.NotificationPreference, events []models.WebhookEvent) error {
	if len(prefs) == 0 || len(events) == 0 {
		return nil
	}
	var rows []models.Notification
	for _, ev := range events {
		if ev.Type == models.NotifyBillDue {
			continue // each person's own N days: the plan decides those (NotifyPlan), not the webhooks' bill.due
		}
		var wanting []models.NotificationPreference
		for _, p := range prefs {
			if p.Wants(ev.Type) {
				wanting = append(wanting, p)
			}
		}
		if len(wanting) == 0 {
			continue
		}
		var env eventEnvelope
		if err := json.Unmarshal([]byte(ev.Payload), &env); err != nil {
			return fmt.Errorf("jobs: notify: event %s: %w", ev.Key, err)
		}
		key, data := ev.Key, env.Data
		if ev.Type == models.EventSyncFailed {
			var err error
			if key, data, err = h.connectionNotice(ctx, familyID, env.Data); err != nil || key == "" {
				if err != nil {
					return err
				}
				continue
			}
		}
		for _, p := range wanting {
			if ev.Type == models.NotifyLargeTransaction && !overAmount(env.Data, p.LargeAmount) {
				continue
			}
			n, err := models.NewNotification(familyID, p.UserID, ev.Type, key, data)
			if err != nil {
				return err
			}
			rows = append(rows, n)
		}
	}
	return h.queueNotifications(ctx, rows)
}

// overAmount reports whether a transaction's amount, either way, is at
// least limit.
func overAmount(data map[string]any, limit money.Amount) bool {
	s, _ := data["amount"].(string)
	a, err := money.ParseAmount(s)
	if err != nil {
		return false
	}
	if a < 0 {
		a = -a
	}
	return a >= limit
}

// connectionNotice is the key and facts of a failed sync's email: the
// connection and when it last synced, so each failing streak tells once.
// An empty key: nothing to tell (the connection is gone, or synced since).
func (h *Handlers) connectionNotice(ctx context.Context, familyID uuid.UUID, data map[string]any) (string, map[string]any, error) {
	s, _ := data["connection_id"].(string)
	id, err := uuid.Parse(s)
	if err != nil {
		return "", nil, nil
	}
	c, err := h.Store.Connection(ctx, familyID, id)
	if errors.Is(err, models.ErrNotFound) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	// A failure the connection has since recovered from (a scan reads
	// back over its overlap) tells nothing: it would be a second email
	// about an old streak.
	if at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(data["finished_at"])); err == nil && c.LastSyncedAt != nil && c.LastSyncedAt.After(at) {
		return "", nil, nil
	}
	since := "never"
	if c.LastSyncedAt != nil {
		since = c.LastSyncedAt.UTC().Format(time.RFC3339Nano)
	}
	out := map[string]any{"connection_id": c.ID, "name": c.Name, "status": c.Status, "status_message": c.StatusMessage,
		"error": data["error"], "last_synced_at": c.LastSyncedAt}
	return "connection:" + c.ID.String() + ":" + since, out, nil
}

// NotifyPlan decides a family's periodic emails: each bill (an active
// recurring item going out) due within a person's N days, once per bill
// and date; and, from Monday 06:00 UTC, last week's digest, once per week.
func (h *Handlers) NotifyPlan(ctx context.Context, t *asynq.Task) error {
	var p NotifyPayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	prefs, err := h.Store.NotificationPreferences(ctx, p.FamilyID)
	if err != nil || len(prefs) == 0 {
		return err
	}
	now := h.now().UTC()
	today := civil.DateOf(now)
	bills, err := h.upcomingBills(ctx, p.FamilyID, today, 30)
	if err != nil {
		return err
	}
	var rows []models.Notification
	var digest map[string]any
	for _, pref := range prefs {
		if pref.Wants(models.NotifyBillDue) {
			last := civil.DateOf(today.Time().AddDate(0, 0, pref.BillDueDays))
			for _, b := range bills {
				if b.NextDate > last {
					break
				}
				data := map[string]any{"recurring_id": b.ID, "name": b.Name, "amount": b.Amount.String(), "currency": b.Currency,
					"due_date": string(b.NextDate), "days": pref.BillDueDays}
				n, err := models.NewNotification(p.FamilyID, pref.UserID, models.NotifyBillDue, b.ID.String()+":"+string(b.NextDate), data)
				if err != nil {
					return err
				}
				rows = append(rows, n)
			}
		}
		if pref.Wants(models.NotifyDigest) {
			week, ok := digestWeek(now)
			if !ok {
				continue
			}
			if digest == nil {
				if digest, err = h.digestData(ctx, p.FamilyID, week, today, bills); err != nil {
					return err
				}
			}
			n, err := models.NewNotification(p.FamilyID, pref.UserID, models.NotifyDigest, string(week.From), digest)
			if err != nil {
				return err
			}
			rows = append(rows, n)
		}
	}
	return h.queueNotifications(ctx, rows)
}

// upcomingBills are the family's active recurring items going out (a
// positive amount, as on transactions; income is negative) due from today
// to today+days, soonest first.
func (h *Handlers) upcomingBills(ctx context.Context, familyID uuid.UUID, today civil.Date, days int) ([]models.RecurringTransaction, error) {
	items, _, err := h.Store.RecurringTransactions(ctx, familyID, models.RecurringFilter{Status: models.RecurringActive},
		models.Page{Number: 1, Size: 1000})
	if err != nil {
		return nil, err
	}
	last := civil.DateOf(today.Time().AddDate(0, 0, days))
	var out []models.RecurringTransaction
	for _, r := range items { // ordered by next expected date
		if r.Amount > 0 && r.NextDate >= today && r.NextDate <= last {
			out = append(out, r)
		}
	}
	return out, nil
}

// digestWeek is the week (Monday to Sunday) a digest sent at now tells
// of: the last whole week, once Monday digestHour has passed.
func digestWeek(now time.Time) (models.Period, bool) {
	days := (int(now.Weekday()) + 6) % 7 // since Monday
	monday := time.Date(now.Year(), now.Month(), now.Day()-days, 0, 0, 0, 0, time.UTC)
	if days == 0 && now.Hour() < digestHour {
		return models.Period{}, false
	}
	return models.Period{From: civil.DateOf(monday.AddDate(0, 0, -7)), To: civil.DateOf(monday.AddDate(0, 0, -1))}, true
}
