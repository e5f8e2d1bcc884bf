package jobs

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
)

// billDueDays is how far ahead bill.due tells of a recurring transaction:
// a bill due within the next three days, today included.
const billDueDays = 3

// billEvents are the family's bill events, for a family that listens for
// them: bill.due for each active recurring transaction due within
// billDueDays (keyed by item and due date, so sent once however many
// scans see it), and bill.missed for each occurrence the recurring:missed
// job recorded since the read began (since), which moves the cursor as the
// transactions do.
func (h *Handlers) billEvents(ctx context.Context, familyID uuid.UUID, since time.Time, cur *models.WebhookCursor,
	prefs []models.NotificationPreference) ([]models.WebhookEvent, error) {
	es, err := h.Store.Webhooks(ctx, familyID)
	if err != nil {
		return nil, err
	}
	wants := func(ev string) bool {
		return slices.ContainsFunc(es, func(e models.WebhookEndpoint) bool { return e.Wants(ev) })
	}
	var out []models.WebhookEvent
	if wants(models.EventBillDue) {
		now := h.now()
		to := civil.DateOf(now.AddDate(0, 0, billDueDays))
		up, err := h.Store.UpcomingRecurring(ctx, familyID, to, 1000)
		if err != nil {
			return nil, err
		}
		for _, u := range up {
			if u.Overdue {
				continue
			}
			ev, err := WebhookEventOf(models.EventBillDue, u.Item.ID.String()+":"+string(u.Date), now, billData(u.Item, u.Date))
			if err != nil {
				return nil, err
			}
			out = append(out, ev)
		}
	}
	// A missed bill is also an email for whoever asked for one (a due bill
	// is not: each person's own days ahead are planned hourly).
	if wants(models.EventBillMissed) ||
		slices.ContainsFunc(prefs, func(p models.NotificationPreference) bool { return p.Wants(models.NotifyBillMissed) }) {
		missed, err := h.Store.RecurringOccurrences(ctx, familyID, models.OccurrenceFilter{Status: models.OccurrenceMissed,
			CreatedAfter: since, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, o := range missed {
			if o.Recurring == nil {
				continue
			}
			data := billData(o.Recurring, o.DueDate)
			data["occurrence_id"], data["amount"] = o.ID, o.Amount.String()
			ev, err := WebhookEventOf(models.EventBillMissed, o.ID.String(), o.CreatedAt, data)
			if err != nil {
				return nil, err
			}
			out = append(out, ev)
			if o.CreatedAt.After(cur.ReadTo) {
				cur.ReadTo = o.CreatedAt
			}
		}
	}
	return out, nil
}

// billData is a recurring transaction as bill events carry it: the
// fields of the API's recurring transaction that say what is due, when
// and from which account, the amount as a decimal string.
func billData(r *models.RecurringTransaction, due civil.Date) map[string]any {
	m := map[string]any{
		"id": r.ID, "name": r.Name, "amount": r.Amount.String(), "currency": r.Currency, "due_date": string(due),
		"cadence": r.Cadence, "account_id": r.AccountID, "account": nil, "merchant_id": r.MerchantID, "autopay": r.Autopay,
	}
	if r.Account != nil {
		m["account"] = map[string]any{"id": r.Account.ID, "name": r.Account.Name, "currency": r.Account.Currency}
	}
	return m
}
