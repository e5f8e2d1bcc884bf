package rest_test

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

	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/models"
	"coffer/models/civil"
)

// receiver is a webhook endpoint on loopback that checks every request's
// signature with the Standard Webhooks library, and answers fail's codes
// first.
type receiver struct {
	mu     sync.Mutex
	secret string
	fail   []int
	got    []map[string]any // verified bodies
	ids    []string         // webhook-id of each request, verified or not
	bad    int              // requests whose signature did not verify
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, req.Header.Get("webhook-id"))
	wh, err := standardwebhooks.NewWebhook(r.secret)
	if err == nil {
		err = wh.Verify(body, req.Header)
	}
	if err != nil {
		r.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if len(r.fail) > 0 {
		code := r.fail[0]
		r.fail = r.fail[1:]
		w.WriteHeader(code)
		return
	}
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	r.got = append(r.got, m)
	w.WriteHeader(http.StatusNoContent)
}

// runWebhookTasks runs the webhook tasks this test queued, scheduled ones
// too (a retry's wait is not waited), until none is left.
func runWebhookTasks(t *testing.T, e *apitest.Env, h *jobs.Handlers) int {
	t.Helper()
	insp := asynq.NewInspector(e.Redis)
	defer insp.Close()
	n := 0
	for round := 0; round < 20; round++ {
		ran := 0
		for _, list := range []func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){insp.ListPendingTasks, insp.ListScheduledTasks} {
			tasks, err := list(jobs.QueueDefault, asynq.PageSize(1000))
			if errors.Is(err, asynq.ErrQueueNotFound) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, ti := range tasks {
				if !strings.HasPrefix(ti.Type, "webhooks:") || !strings.Contains(string(ti.Payload), e.Alpha.Family.ID.String()) {
					continue
				}
				if err := insp.DeleteTask(jobs.QueueDefault, ti.ID); err != nil {
					t.Fatal(err)
				}
				task := asynq.NewTask(ti.Type, ti.Payload)
				var err error
				switch ti.Type {
				case jobs.TypeWebhookScan:
					err = h.WebhookScan(context.Background(), task)
				case jobs.TypeWebhookDeliver:
					err = h.WebhookDeliver(context.Background(), task)
				}
				if err != nil {
					t.Fatal(err)
				}
				ran++
			}
		}
		n += ran
		if ran == 0 {
			return n
		}
	}
	t.Fatalf("webhook tasks keep coming")
	return n
}

// Webhooks end to end: an admin registers an endpoint (the secret answered
// once); a transaction created through the API, after the rules filed it,
// reaches the endpoint as transaction.created with its category, signed
// so that the Standard Webhooks library verifies it; an edit and a delete
// follow; a receiver answering 500 gets the delivery again (same
// webhook-id) and the attempts are listed; a scan run twice sends nothing
// twice; redeliver by hand. Bad URLs are 422, another family's endpoint
// 404, a member 403.
func TestWebhooks(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := t.Context()
	key := e.Alpha.Key
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()

	for _, bad := range []map[string]any{
		{"url": "ftp://example.com/x", "events": []string{"transaction.created"}},
		{"url": "https://user:pw@example.com/x", "events": []string{"transaction.created"}},
		{"url": "https://example.com/x", "events": []string{"transaction.eaten"}},
		{"url": "https://example.com/x", "events": []string{}},
		{"events": []string{"transaction.created"}},
	} {
		apitest.WantError(t, e.Do("POST", "/api/v1/webhooks", key, map[string]any{"webhook": bad}), 422, "validation_failed")
	}
	member := apitest.Member(t, e, e.Alpha.Family, "member@alpha.test", models.RoleMember)
	memberKey, err := e.Store.CreateAPIKey(ctx, e.Alpha.Family.ID, &models.APIKey{UserID: member.ID, Name: "m", Scope: models.ScopeReadWrite})
	if err != nil {
		t.Fatal(err)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/webhooks", memberKey, nil), 403, "forbidden")

	m := e.Do("POST", "/api/v1/webhooks", key, map[string]any{"webhook": map[string]any{"url": srv.URL + "/hook", "description": "Home",
		"events": []string{"transaction.created", "transaction.updated", "transaction.deleted"}}}).WantJSON(t, 201)
	secret, _ := m["secret"].(string)
	id, _ := m["id"].(string)
	if !strings.HasPrefix(secret, "whsec_") || id == "" {
		t.Fatalf("created: %v", m)
	}
	rcv.secret = secret
	if got := e.Do("GET", "/api/v1/webhooks/"+id, key, nil).WantJSON(t, 200); got["secret"] != nil || got["enabled"] != true {
		t.Fatalf("show: %v", got)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/webhooks/"+id, e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("DELETE", "/api/v1/webhooks/"+id, e.Beta.Key, nil), 404, "not_found")

	cat := e.Do("POST", "/api/v1/categories", key, map[string]any{"category": map[string]any{"name": "Groceries"}}).WantJSON(t, 201)
	tx := e.Do("POST", "/api/v1/transactions", key, map[string]any{"transaction": map[string]any{
		"account_id": e.Alpha.Account.ID, "date": "2026-11-20", "amount": "42.50", "name": "Corner shop",
		"nature": "expense", "category_id": cat["id"]}}).WantJSON(t, 201)
	txID, _ := tx["id"].(string)

	// The receiver is on loopback, which deliveries refuse unless allowed.
	h := &jobs.Handlers{Store: e.Store, Queue: asynq.NewClientFromRedisClient(e.RDB), Log: e.Logger(),
		WebhookClient: jobs.NewWebhookClient(jobs.WebhookOptions{AllowPrivateHosts: true})}
	if err := h.WebhookSweep(ctx, jobs.NewWebhookSweepTask()); err != nil {
		t.Fatal(err)
	}
	rcv.fail = []int{500}
	runWebhookTasks(t, e, h)
	if rcv.bad != 0 || len(rcv.got) != 1 || len(rcv.ids) != 2 || rcv.ids[0] != rcv.ids[1] {
		t.Fatalf("deliveries: bad %d, got %v, ids %v", rcv.bad, rcv.got, rcv.ids)
	}
	ev := rcv.got[0]
	data, _ := ev["data"].(map[string]any)
	category, _ := data["category"].(map[string]any)
	if ev["type"] != "transaction.created" || data["id"] != txID || category["name"] != "Groceries" || data["amount"] == nil {
		t.Fatalf("event: %v", ev)
	}
	list := e.Do("GET", "/api/v1/webhooks/"+id+"/deliveries", key, nil).WantJSON(t, 200)
	ds, _ := list["deliveries"].([]any)
	if len(ds) != 1 {
		t.Fatalf("deliveries listed: %v", list)
	}
	d0, _ := ds[0].(map[string]any)
	if d0["status"] != "succeeded" || d0["attempts"] != float64(2) || d0["response_code"] != float64(204) || d0["id"] != rcv.ids[0] {
		t.Fatalf("delivery: %v", d0)
	}

	// Again: nothing new. An edit and a delete: one event each.
	if err := h.WebhookScan(ctx, mustTask(jobs.NewWebhookScanTask(e.Alpha.Family.ID))); err != nil {
		t.Fatal(err)
	}
	if n := runWebhookTasks(t, e, h); n != 0 || len(rcv.got) != 1 {
		t.Fatalf("a second scan sent %d (%d received)", n, len(rcv.got))
	}
	e.Do("PATCH", "/api/v1/transactions/"+txID, key, map[string]any{"transaction": map[string]any{"name": "Corner shop (milk)"}}).WantJSON(t, 200)
	e.Do("DELETE", "/api/v1/transactions/"+txID, key, nil).WantJSON(t, 200)
	if err := h.WebhookScan(ctx, mustTask(jobs.NewWebhookScanTask(e.Alpha.Family.ID))); err != nil {
		t.Fatal(err)
	}
	runWebhookTasks(t, e, h)
	var types []string
	for _, g := range rcv.got {
		types = append(types, g["type"].(string))
	}
	if strings.Join(types, " ") != "transaction.created transaction.deleted" &&
		strings.Join(types, " ") != "transaction.created transaction.updated transaction.deleted" {
		t.Fatalf("events: %v", types)
	}

	// Redeliver by hand: the same webhook-id once more.
	r := e.Do("POST", "/api/v1/webhooks/"+id+"/deliveries/"+rcv.ids[0]+"/redeliver", key, nil).WantJSON(t, 202)
	if r["status"] != "pending" {
		t.Fatalf("redeliver: %v", r)
	}
	runWebhookTasks(t, e, h)
	if last := rcv.ids[len(rcv.ids)-1]; last != rcv.ids[0] {
		t.Fatalf("redelivered id %s, first %s", last, rcv.ids[0])
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/webhooks/"+id+"/deliveries/msg_nope/redeliver", key, nil), 404, "not_found")

	// A file import's end: import.completed, once.
	e.Do("PATCH", "/api/v1/webhooks/"+id, key, map[string]any{"webhook": map[string]any{"events": []string{"import.completed"}}}).WantJSON(t, 200)
	im := e.Do("POST", "/api/v1/imports", key, map[string]any{"account_id": e.Alpha.Account.ID, "publish": true,
		"raw_file_content": "date,amount,name\n01/02/2026,12.50,Bakery\n"}).WantJSON(t, 201)["data"].(map[string]any)
	e.FinishImport(t, e.Alpha.Family.ID.String(), im["id"].(string))
	for range 2 {
		if err := h.WebhookScan(ctx, mustTask(jobs.NewWebhookScanTask(e.Alpha.Family.ID))); err != nil {
			t.Fatal(err)
		}
		runWebhookTasks(t, e, h)
	}
	last := rcv.got[len(rcv.got)-1]
	ldata, _ := last["data"].(map[string]any)
	if last["type"] != "import.completed" || ldata["id"] != im["id"] || ldata["imported_rows_count"] != float64(1) ||
		rcv.got[len(rcv.got)-2]["type"] == "import.completed" {
		t.Fatalf("import event: %v", rcv.got)
	}

	// A category of this month's budget going over: budget.exceeded, once.
	e.Do("PATCH", "/api/v1/webhooks/"+id, key, map[string]any{"webhook": map[string]any{"events": []string{"budget.exceeded"}}}).WantJSON(t, 200)
	today := time.Now().UTC().Format("2006-01-02")
	budget, err := e.Store.EnsureBudget(ctx, e.Alpha.Family.ID, civil.Date(today))
	if err != nil {
		t.Fatal(err)
	}
	lines, _, err := e.Store.BudgetLines(ctx, e.Alpha.Family.ID, models.BudgetLineFilter{BudgetID: &budget.ID}, models.Page{Number: 1, Size: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if l.CategoryName == "Groceries" {
			if err := e.Store.UpdateBudgetCategory(ctx, e.Alpha.Family.ID, l.ID, 10_0000, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, amount := range []string{"8.00", "7.00"} {
		e.Do("POST", "/api/v1/transactions", key, map[string]any{"transaction": map[string]any{
			"account_id": e.Alpha.Account.ID, "date": today, "amount": amount, "name": "Market",
			"nature": "expense", "category_id": cat["id"]}}).WantJSON(t, 201)
		if err := h.WebhookScan(ctx, mustTask(jobs.NewWebhookScanTask(e.Alpha.Family.ID))); err != nil {
			t.Fatal(err)
		}
		runWebhookTasks(t, e, h)
	}
	over := rcv.got[len(rcv.got)-1]
	odata, _ := over["data"].(map[string]any)
	if over["type"] != "budget.exceeded" || odata["category"] != "Groceries" || odata["spent"] != "15.0000" ||
		rcv.got[len(rcv.got)-2]["type"] == "budget.exceeded" {
		t.Fatalf("budget event: %v", rcv.got)
	}

	e.Do("PATCH", "/api/v1/webhooks/"+id, key, map[string]any{"webhook": map[string]any{"enabled": false}}).WantJSON(t, 200)
	e.Do("DELETE", "/api/v1/webhooks/"+id, key, nil).WantJSON(t, 200)
	apitest.WantError(t, e.Do("GET", "/api/v1/webhooks/"+id, key, nil), 404, "not_found")
}

func mustTask(task *asynq.Task, err error) *asynq.Task {
	if err != nil {
		panic(err)
	}
	return task
}
