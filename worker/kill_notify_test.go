package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"coffer/jobs"
	"coffer/jobs/mail"
	"coffer/jobs/mail/mailtest"
	"coffer/models"
	"coffer/models/modelstest"
)

// runAgain moves the tasks with ids that wait (a retry's delay, a
// scheduled next attempt) to run now; gone or pending ones are left.
func (r *killRig) runAgain(t *testing.T, queue string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		info, err := r.insp.GetTaskInfo(queue, id)
		if err != nil {
			continue
		}
		if info.State == asynq.TaskStateRetry || info.State == asynq.TaskStateScheduled {
			if err := r.insp.RunTask(queue, id); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
				t.Fatal(err)
			}
		}
	}
}

// TestNotifySendSurvivesWorkerKill kills the worker in the middle of an
// email's DATA: the SMTP server discards the torn message, the row stays
// claimed, and once its lease has run out (a killed worker never comes
// back to release it) a fresh worker sends it: one email in all, and a
// retried task sends nothing more.
func TestNotifySendSurvivesWorkerKill(t *testing.T) {
	r := newKillRig(t)
	srv := mailtest.Start(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, r.store, "notify-kill")
	n, err := models.NewNotification(f.Family.ID, f.User.ID, models.NotifyBudgetExceeded, "line-kill:2026-11-01",
		map[string]any{"category": "Food", "spent": "510", "budgeted": "500", "currency": "USD", "month": "2026-11-01"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.QueueNotifications(ctx, []models.Notification{n}); err != nil {
		t.Fatal(err)
	}
	h := r.handlers(nil, nil)
	h.Mail = mail.New(mail.Options{SMTPURL: srv.URL(), From: "no-reply@coffer.test"}, r.log)
	h.AppURL = "https://coffer.test"
	task, err := jobs.NewNotifySendTask(f.Family.ID, n.ID)
	if err != nil {
		t.Fatal(err)
	}

	held := srv.HoldNext()
	stop := runWorker(t, r.options(h, nil))
	id := r.enqueue(t, task)
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("the send never reached DATA")
	}
	stop()
	waitFor(t, "the killed send to return", func() (bool, string) { return r.ends.has(id), "still running" })
	srv.WaitTorn(t, 1)
	if ms := srv.Mails(); len(ms) != 0 {
		t.Fatalf("killed mid-DATA, the server kept %d mails", len(ms))
	}
	if row, _ := r.store.Notification(ctx, f.Family.ID, n.ID); row.Status != models.NotificationSending {
		t.Fatalf("killed mid-send, the row is %s", row.Status)
	}

	later := time.Now().Add(11 * time.Minute)
	r.store.Now = func() time.Time { return later }
	runWorker(t, r.options(h, nil))
	r.runAgain(t, jobs.QueueDefault, id)
	r.waitGone(t, jobs.QueueDefault, id)
	ms := srv.Wait(t, 1)
	if row, _ := r.store.Notification(ctx, f.Family.ID, n.ID); row.Status != models.NotificationSent || row.Attempts != 2 {
		t.Fatalf("row after the fresh worker: %+v", row)
	}
	// A retried task, or the sweep's requeue, finds it sent.
	if err := h.NotifySend(ctx, asynq.NewTask(task.Type(), task.Payload())); err != nil {
		t.Fatal(err)
	}
	if ms = srv.Mails(); len(ms) != 1 || ms[0].Header("Subject") != "Over budget: Food" {
		t.Fatalf("mails: %+v", ms)
	}
}

// holdingReceiver is a webhook endpoint that verifies each request with
// the Standard Webhooks library and holds the first one until its sender
// goes away: like a receiver whose work is rolled back when the
// connection drops, it keeps only the requests it answered.
type holdingReceiver struct {
	secret string
	held   chan struct{}

	mu   sync.Mutex
	once bool
	got  []string // webhook-id of each delivery kept
	bad  int
}

func (rc *holdingReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	wh, err := standardwebhooks.NewWebhook(rc.secret)
	if err == nil {
		err = wh.Verify(body, req.Header)
	}
	rc.mu.Lock()
	if err != nil {
		rc.bad++
		rc.mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	first := !rc.once
	rc.once = true
	rc.mu.Unlock()
	if first {
		close(rc.held)
		<-req.Context().Done() // the worker was killed: nothing kept
		return
	}
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	rc.mu.Lock()
	rc.got = append(rc.got, req.Header.Get("webhook-id"))
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// TestWebhookDeliverySurvivesWorkerKill kills the worker while a delivery
// waits for the receiver's answer: the delivery stays pending, and a
// fresh worker delivers it, once, with the same webhook-id, signed.
func TestWebhookDeliverySurvivesWorkerKill(t *testing.T) {
	r := newKillRig(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, r.store, "webhook-kill")
	secret, err := jobs.NewWebhookSecret(strings.NewReader(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	rc := &holdingReceiver{secret: secret, held: make(chan struct{})}
	ts := httptest.NewServer(rc)
	t.Cleanup(ts.Close)
	if _, err := r.store.CreateWebhook(ctx, f.Family.ID, nil, models.WebhookInput{URL: &ts.URL,
		Events: []string{models.EventTransactionCreated}}, secret); err != nil {
		t.Fatal(err)
	}
	ev, err := jobs.WebhookEventOf(models.EventTransactionCreated, "kill-1", time.Now(), map[string]any{"name": "Rent"})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := r.store.QueueWebhookEvents(ctx, f.Family.ID, []models.WebhookEvent{ev})
	if err != nil || len(ds) != 1 {
		t.Fatal(ds, err)
	}
	h := r.handlers(nil, nil)
	h.WebhookClient = jobs.NewWebhookClient(jobs.WebhookOptions{AllowPrivateHosts: true})
	task, err := jobs.NewWebhookDeliverTask(f.Family.ID, ds[0].ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	stop := runWorker(t, r.options(h, nil))
	id := r.enqueue(t, task)
	select {
	case <-rc.held:
	case <-time.After(20 * time.Second):
		t.Fatal("the delivery never reached the receiver")
	}
	stop()
	waitFor(t, "the killed delivery to return", func() (bool, string) { return r.ends.has(id), "still running" })
	if d, _ := r.store.WebhookDelivery(ctx, f.Family.ID, ds[0].ID); d.Status != models.DeliveryPending {
		t.Fatalf("killed mid-delivery: %+v", d)
	}

	runWorker(t, r.options(h, nil))
	next := "webhooks:deliver:" + ds[0].ID.String() + ":1" // queued when the cut attempt was recorded
	waitFor(t, "the delivery to succeed", func() (bool, string) {
		r.runAgain(t, jobs.QueueDefault, id, next)
		d, err := r.store.WebhookDelivery(ctx, f.Family.ID, ds[0].ID)
		if err != nil {
			return false, err.Error()
		}
		return d.Status == models.DeliverySucceeded, d.Status
	})
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.got) != 1 || rc.got[0] != "msg_"+ds[0].ID.String() || rc.bad != 0 {
		t.Fatalf("receiver kept %v (%d bad signatures)", rc.got, rc.bad)
	}
}
