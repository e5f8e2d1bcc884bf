package jobs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/mail"
	"coffer/jobs/mail/mailtest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// notifyRig is handlers that mail to a real SMTP server on loopback.
func notifyRig(t *testing.T) (*jobs.Handlers, *models.Store, *mailtest.Server) {
	t.Helper()
	h, store, _ := newHandlers(t)
	srv := mailtest.Start(t)
	h.Mail = mail.New(mail.Options{SMTPURL: srv.URL(), From: "coffer <no-reply@coffer.test>"}, h.Log)
	h.AppURL = "https://coffer.test"
	return h, store, srv
}

// sendAll runs the send task of every outbox row of the family, twice
// (a retried task), as the worker would.
func sendAll(t *testing.T, h *jobs.Handlers, store *models.Store, f *modelstest.FamilyFixture) {
	t.Helper()
	ns, err := store.Notifications(context.Background(), f.Family.ID)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for _, n := range ns {
			task, err := jobs.NewNotifySendTask(n.FamilyID, n.ID)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.NotifySend(context.Background(), asynq.NewTask(task.Type(), task.Payload())); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func scan(t *testing.T, h *jobs.Handlers, f *modelstest.FamilyFixture) {
	t.Helper()
	task, err := jobs.NewWebhookScanTask(f.Family.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.WebhookScan(context.Background(), asynq.NewTask(task.Type(), task.Payload())); err != nil {
		t.Fatal(err)
	}
}

// TestNotifyFromEvents: the webhook scan decides the emails of the events
// it reads, for the people who asked: a transaction over a person's
// amount (not one under it), and a bill missed (a synthetic event, as
// the bills' source will feed the scan). Scanned and sent twice, each is
// one email, with absolute links.
func TestNotifyFromEvents(t *testing.T) {
	h, store, srv := notifyRig(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "notify-events")
	if err := store.SaveNotificationPreference(ctx, &models.NotificationPreference{FamilyID: f.Family.ID, UserID: f.User.ID,
		BillDue: true, BillDueDays: 3, LargeTransaction: true, LargeAmount: 1000000, BillMissed: true}); err != nil {
		t.Fatal(err)
	}
	for _, tx := range []struct {
		name   string
		amount int64
	}{{"Television", 1500000}, {"Coffee", 40000}, {"Refund", -2500000}} {
		if _, _, err := store.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
			Date: civil.DateOf(time.Now()), Amount: money.Amount(tx.amount), Currency: "USD", Name: tx.name}, nil); err != nil {
			t.Fatal(err)
		}
	}
	scan(t, h, f)
	scan(t, h, f)
	missed, err := jobs.WebhookEventOf(models.EventBillMissed, "rt-1:2026-11-20", time.Now(),
		map[string]any{"name": "Electricity", "amount": "80.00", "currency": "USD", "expected_date": "2026-11-20"})
	if err != nil {
		t.Fatal(err)
	}
	prefs, err := store.NotificationPreferences(ctx, f.Family.ID)
	if err != nil {
		t.Fatal(err)
	}
	// bill.due events (the webhooks') are not the person's own N days:
	// the plan tells of due bills, so they mail nothing here.
	due, err := jobs.WebhookEventOf(models.EventBillDue, "rt-1:2026-12-20", time.Now(), map[string]any{"name": "Electricity"})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := h.NotifyEvents(ctx, f.Family.ID, prefs, []models.WebhookEvent{missed, due}); err != nil {
			t.Fatal(err)
		}
	}
	sendAll(t, h, store, f)
	scan(t, h, f)
	sendAll(t, h, store, f)
	ms := srv.Wait(t, 3)
	subjects := map[string]string{}
	for _, m := range ms {
		subjects[m.Header("Subject")] = m.Body()
		if m.To[0] != f.User.Email {
			t.Errorf("to %v", m.To)
		}
	}
	if len(ms) != 3 {
		t.Fatalf("%d mails: %v", len(ms), subjects)
	}
	tv, ok := subjects["Large transaction: $150.00, Television"]
	if !ok || !strings.Contains(tv, "https://coffer.test/transactions/") || !strings.Contains(tv, "https://coffer.test/settings/notifications") {
		t.Errorf("subjects %v", subjects)
	}
	if _, ok := subjects["Large transaction: -$250.00, Refund"]; !ok {
		t.Errorf("a refund over the amount: %v", subjects)
	}
	if b, ok := subjects["Bill missed: Electricity"]; !ok || !strings.Contains(b, "2026-11-20") || !strings.Contains(b, "https://coffer.test/recurring") {
		t.Errorf("bill missed: %v", subjects)
	}
}

// TestNotifyPlan: a bill due within the person's days is one email, a
// bill after them none; from Monday morning last week's digest goes out,
// once, with its spending, the coming bills and absolute links.
func TestNotifyPlan(t *testing.T) {
	h, store, srv := notifyRig(t)
	ctx := context.Background()
	monday := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	h.Now = func() time.Time { return monday }
	f := modelstest.NewFamily(t, store, "notify-plan")
	if err := store.SaveNotificationPreference(ctx, &models.NotificationPreference{FamilyID: f.Family.ID, UserID: f.User.ID,
		BillDue: true, BillDueDays: 3, WeeklyDigest: true}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct {
		name string
		in   int
	}{{"Rent", 2}, {"Insurance", 10}} {
		next := civil.DateOf(monday.AddDate(0, 0, b.in))
		if err := store.CreateRecurringTransaction(ctx, &models.RecurringTransaction{FamilyID: f.Family.ID, Name: b.name,
			Amount: 12000000, Currency: "USD", Cadence: "monthly", ExpectedDay: next.Time().Day(), NextDate: next, Manual: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := store.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
		Date: "2026-11-25", Amount: 420000, Currency: "USD", Name: "Groceries"}, nil); err != nil {
		t.Fatal(err)
	}
	task, err := jobs.NewNotifyPlanTask(f.Family.ID)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := h.NotifyPlan(ctx, asynq.NewTask(task.Type(), task.Payload())); err != nil {
			t.Fatal(err)
		}
	}
	sendAll(t, h, store, f)
	ms := srv.Wait(t, 2)
	if len(ms) != 2 {
		t.Fatalf("%d mails", len(ms))
	}
	got := map[string]string{}
	for _, m := range ms {
		got[m.Header("Subject")] = m.Body()
	}
	if _, ok := got["Bill due 2026-12-02: Rent"]; !ok {
		t.Errorf("bill due: %v", got)
	}
	d, ok := got["Your week, 2026-11-23 to 2026-11-29"]
	if !ok || !strings.Contains(d, "Spending from 2026-11-23 to 2026-11-29: $42.00") || !strings.Contains(d, "Rent: $1,200.00") ||
		!strings.Contains(d, "https://coffer.test/budgets?month=2026-11") || strings.Contains(d, "Insurance") {
		t.Errorf("digest: %v", got)
	}
	// Sunday evening: no digest for a week not over.
	h.Now = func() time.Time { return monday.Add(-10 * time.Hour) }
	if err := h.NotifyPlan(ctx, asynq.NewTask(task.Type(), task.Payload())); err != nil {
		t.Fatal(err)
	}
	if ns, _ := store.Notifications(ctx, f.Family.ID); len(ns) != 3 { // Rent was already decided for its date
		t.Errorf("outbox after Sunday: %d rows", len(ns))
	}
}

// TestNotifySendLease: a row claimed by a sender that died is not sent
// while its lease holds (the task is deferred to the lease's end), then
// sent once; sent, it is never sent again.
func TestNotifySendLease(t *testing.T) {
	h, store, srv := notifyRig(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "notify-lease")
	n, err := models.NewNotification(f.Family.ID, f.User.ID, models.NotifyBudgetExceeded, "line-1:2026-11-01",
		map[string]any{"category": "Food", "spent": "510.00", "budgeted": "500.00", "currency": "USD", "month": "2026-11-01"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.QueueNotifications(ctx, []models.Notification{n, n}); err != nil {
		t.Fatal(err)
	}
	if c, _, err := store.ClaimNotification(ctx, f.Family.ID, n.ID, 10*time.Minute); err != nil || c == nil {
		t.Fatalf("claim: %v %v", c, err)
	}
	task, _ := jobs.NewNotifySendTask(f.Family.ID, n.ID)
	var de *jobs.DeferError
	if err := h.NotifySend(ctx, asynq.NewTask(task.Type(), task.Payload())); !errors.As(err, &de) {
		t.Fatalf("while the lease holds: %v", err)
	}
	later := time.Now().Add(11 * time.Minute)
	store.Now = func() time.Time { return later }
	for range 2 {
		if err := h.NotifySend(ctx, asynq.NewTask(task.Type(), task.Payload())); err != nil {
			t.Fatal(err)
		}
	}
	ms := srv.Wait(t, 1)
	if len(ms) != 1 || ms[0].Header("Subject") != "Over budget: Food" || !strings.Contains(ms[0].Body(), "https://coffer.test/budgets?month=2026-11-01") {
		t.Fatalf("mails: %+v", ms)
	}
	if got, _ := store.Notification(ctx, f.Family.ID, n.ID); got.Status != models.NotificationSent || got.Attempts != 2 {
		t.Errorf("row: %+v", got)
	}
}

// TestWebhookDisabledTellsAdmins: the attempt that switches an endpoint
// off after three days of failures writes an email to each admin of the
// family, once; a member is not told.
func TestWebhookDisabledTellsAdmins(t *testing.T) {
	h, store, srv := notifyRig(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "notify-webhook")
	member := &models.User{FamilyID: f.Family.ID, Email: "member-" + f.Family.ID.String()[:8] + "@example.com", Role: models.RoleMember}
	if err := store.CreateUser(ctx, member); err != nil {
		t.Fatal(err)
	}
	e, err := store.CreateWebhook(ctx, f.Family.ID, nil, models.WebhookInput{URL: models.Ptr("https://hooks.example.com/x"),
		Events: []string{models.EventTransactionCreated}}, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := jobs.WebhookEventOf(models.EventTransactionCreated, "t1", time.Now(), map[string]any{})
	ds, err := store.QueueWebhookEvents(ctx, f.Family.ID, []models.WebhookEvent{ev})
	if err != nil || len(ds) != 1 {
		t.Fatal(ds, err)
	}
	start := time.Now()
	for i, at := range []time.Time{start, start.Add(73 * time.Hour), start.Add(74 * time.Hour)} {
		store.Now = func() time.Time { return at }
		next := at.Add(time.Hour)
		disabled, err := store.RecordWebhookAttempt(ctx, &ds[0], models.WebhookAttempt{Code: 500, Next: &next}, 72*time.Hour)
		if err != nil || disabled != (i == 1) {
			t.Fatalf("attempt %d: %v %v", i, disabled, err)
		}
	}
	sendAll(t, h, store, f)
	ms := srv.Wait(t, 1)
	if len(ms) != 1 || ms[0].To[0] != f.User.Email || ms[0].Header("Subject") != "Webhook switched off: https://hooks.example.com/x" ||
		!strings.Contains(ms[0].Body(), "https://coffer.test/settings/webhooks/"+e.ID.String()) {
		t.Fatalf("mails: %+v", ms)
	}
}

// TestNotifyConnectionAttention: failed syncs of one connection are one
// email while it has not synced since (a streak); after it synced again,
// a new failure is a new email.
func TestNotifyConnectionAttention(t *testing.T) {
	h, store, srv := notifyRig(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "notify-conn")
	c := &models.Connection{FamilyID: f.Family.ID, Name: "My bank"}
	if err := store.CreateConnection(ctx, c, "setup-token"); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveNotificationPreference(ctx, &models.NotificationPreference{FamilyID: f.Family.ID, UserID: f.User.ID,
		BillDueDays: 3, ConnectionAttention: true}); err != nil {
		t.Fatal(err)
	}
	prefs, err := store.NotificationPreferences(ctx, f.Family.ID)
	if err != nil {
		t.Fatal(err)
	}
	fail := func(syncID string) models.WebhookEvent {
		t.Helper()
		ev, err := jobs.WebhookEventOf(models.EventSyncFailed, syncID, time.Now(),
			map[string]any{"id": syncID, "connection_id": c.ID, "error": "The bank asks you to sign in again", "finished_at": time.Now().UTC()})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.NotifyEvents(ctx, f.Family.ID, prefs, []models.WebhookEvent{ev}); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	fail("s1")
	s2 := fail("s2")
	synced := time.Now().UTC().Truncate(time.Microsecond)
	c.LastSyncedAt = &synced
	if err := store.UpdateConnection(ctx, c, "last_synced_at"); err != nil {
		t.Fatal(err)
	}
	// The scan reads s2 again (its overlap) after the connection synced:
	// an old failure, no email.
	if err := h.NotifyEvents(ctx, f.Family.ID, prefs, []models.WebhookEvent{s2}); err != nil {
		t.Fatal(err)
	}
	fail("s3")
	sendAll(t, h, store, f)
	ms := srv.Wait(t, 2)
	if len(ms) != 2 || ms[0].Header("Subject") != "Bank connection needs attention: My bank" ||
		!strings.Contains(ms[0].Body(), "https://coffer.test/settings/connections") {
		t.Fatalf("mails: %+v", ms)
	}
}

// TestNotifySweep queues the send of a row left unsent and the plan of
// each family where someone chose a periodic email, once however often
// it runs.
func TestNotifySweep(t *testing.T) {
	h, store, insp := newHandlers(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "notify-sweep")
	if err := store.SaveNotificationPreference(ctx, &models.NotificationPreference{FamilyID: f.Family.ID, UserID: f.User.ID,
		BillDueDays: 3, WeeklyDigest: true}); err != nil {
		t.Fatal(err)
	}
	n, _ := models.NewNotification(f.Family.ID, f.User.ID, models.NotifyDigest, "2026-11-23", map[string]any{})
	store.Now = func() time.Time { return time.Now().Add(-time.Hour) }
	if _, err := store.QueueNotifications(ctx, []models.Notification{n}); err != nil {
		t.Fatal(err)
	}
	store.Now = func() time.Time { return time.Now().UTC() }
	send, plan := "notifications:send:"+n.ID.String(), "notifications:plan:"+f.Family.ID.String()
	t.Cleanup(func() {
		_ = insp.DeleteTask(jobs.QueueDefault, send)
		_ = insp.DeleteTask(jobs.QueueLow, plan)
	})
	for range 2 {
		if err := h.NotifySweep(ctx, asynq.NewTask(jobs.TypeNotifySweep, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if info, err := insp.GetTaskInfo(jobs.QueueDefault, send); err != nil || info.Type != jobs.TypeNotifySend {
		t.Errorf("send: %+v %v", info, err)
	}
	if info, err := insp.GetTaskInfo(jobs.QueueLow, plan); err != nil || info.Type != jobs.TypeNotifyPlan {
		t.Errorf("plan: %+v %v", info, err)
	}
}

// TestNotifySendFailureReleases: a send the server never took (nothing
// listens) gives its claim back at once, to be tried again, with the
// reason kept.
func TestNotifySendFailureReleases(t *testing.T) {
	h, store, _ := newHandlers(t)
	ctx := context.Background()
	h.Mail = mail.New(mail.Options{SMTPURL: "smtp://127.0.0.1:1", From: "no-reply@coffer.test"}, h.Log)
	f := modelstest.NewFamily(t, store, "notify-release")
	n, _ := models.NewNotification(f.Family.ID, f.User.ID, models.NotifyBillDue, "r1:2026-12-01",
		map[string]any{"name": "Rent", "amount": "1200", "currency": "USD", "due_date": "2026-12-01"})
	if _, err := store.QueueNotifications(ctx, []models.Notification{n}); err != nil {
		t.Fatal(err)
	}
	task, _ := jobs.NewNotifySendTask(f.Family.ID, n.ID)
	if err := h.NotifySend(ctx, asynq.NewTask(task.Type(), task.Payload())); err == nil {
		t.Fatal("a send to nowhere succeeded")
	}
	got, err := store.Notification(ctx, f.Family.ID, n.ID)
	if err != nil || got.Status != models.NotificationPending || got.LeaseUntil != nil || got.LastError == nil || got.Attempts != 1 {
		t.Fatalf("row: %+v %v", got, err)
	}
}
