package rest_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/models"
	"coffer/models/civil"
)

// TestWebhookBillEvents: an endpoint subscribed to bill.due and
// bill.missed gets, signed and verified by the Standard Webhooks library,
// one bill.due for a bill due tomorrow and one bill.missed for an
// occurrence the missed job recorded, each with the bill's name, amount,
// currency, due date and account; scans again send neither twice; another
// family's bills send nothing.
func TestWebhookBillEvents(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := t.Context()
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	m := e.Do("POST", "/api/v1/webhooks", e.Alpha.Key, map[string]any{"webhook": map[string]any{"url": srv.URL + "/hook",
		"events": []string{"bill.due", "bill.missed"}}}).WantJSON(t, 201)
	rcv.secret, _ = m["secret"].(string)

	today := time.Now().UTC()
	tomorrow := civil.DateOf(today.AddDate(0, 0, 1))
	lastWeek := civil.DateOf(today.AddDate(0, 0, -7))
	due := &models.RecurringTransaction{FamilyID: e.Alpha.Family.ID, AccountID: &e.Alpha.Account.ID, Name: "Rent",
		Amount: 15000000, Currency: "USD", Cadence: "monthly", ExpectedDay: tomorrow.Time().Day(), NextDate: tomorrow}
	gone := &models.RecurringTransaction{FamilyID: e.Alpha.Family.ID, Name: "Gym", Amount: 300000, Currency: "USD",
		Cadence: "monthly", ExpectedDay: lastWeek.Time().Day(), NextDate: lastWeek}
	theirs := &models.RecurringTransaction{FamilyID: e.Beta.Family.ID, Name: "Theirs", Amount: 100000, Currency: "USD",
		Cadence: "weekly", ExpectedDay: 1, NextDate: tomorrow}
	for _, r := range []*models.RecurringTransaction{due, gone, theirs} {
		if err := e.Store.CreateRecurringTransaction(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := e.Store.MarkMissedRecurring(ctx, e.Alpha.Family.ID); err != nil || n != 1 {
		t.Fatalf("missed %d %v", n, err)
	}

	h := &jobs.Handlers{Store: e.Store, Queue: asynq.NewClientFromRedisClient(e.RDB), Log: e.Logger(),
		WebhookClient: jobs.NewWebhookClient(jobs.WebhookOptions{AllowPrivateHosts: true})}
	if err := h.WebhookSweep(ctx, jobs.NewWebhookSweepTask()); err != nil {
		t.Fatal(err)
	}
	runWebhookTasks(t, e, h)
	if rcv.bad != 0 || len(rcv.got) != 2 {
		t.Fatalf("deliveries: bad %d, got %v", rcv.bad, rcv.got)
	}
	byType := map[string]map[string]any{}
	for _, ev := range rcv.got {
		data, _ := ev["data"].(map[string]any)
		byType[ev["type"].(string)] = data
	}
	d := byType["bill.due"]
	account, _ := d["account"].(map[string]any)
	if d["id"] != due.ID.String() || d["name"] != "Rent" || d["amount"] != "1500.0000" || d["currency"] != "USD" ||
		d["due_date"] != string(tomorrow) || account["name"] != "Checking" {
		t.Errorf("bill.due: %v", d)
	}
	x := byType["bill.missed"]
	if x["id"] != gone.ID.String() || x["name"] != "Gym" || x["amount"] != "30.0000" || x["due_date"] != string(lastWeek) ||
		x["occurrence_id"] == nil || x["account"] != nil {
		t.Errorf("bill.missed: %v", x)
	}

	for range 2 {
		if err := h.WebhookScan(ctx, mustTask(jobs.NewWebhookScanTask(e.Alpha.Family.ID))); err != nil {
			t.Fatal(err)
		}
	}
	if n := runWebhookTasks(t, e, h); n != 0 || len(rcv.got) != 2 {
		t.Fatalf("scans again sent %d (%d received)", n, len(rcv.got))
	}
}
