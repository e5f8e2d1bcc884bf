package rest_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"coffer/api/apitest"
	"coffer/models"
)

func bulkBody(items ...any) map[string]any { return map[string]any{"transactions": items} }

// bulkResults reads the results of a 200 answer.
func bulkResults(t *testing.T, r apitest.Response) []map[string]any {
	t.Helper()
	m := r.WantJSON(t, http.StatusOK)
	raw, _ := m["results"].([]any)
	out := make([]map[string]any, len(raw))
	for i, x := range raw {
		out[i] = x.(map[string]any)
		if out[i]["index"] != float64(i) {
			t.Fatalf("result %d has index %v", i, out[i]["index"])
		}
	}
	return out
}

func TestBulkCreateTransactions(t *testing.T) {
	e := apitest.NewEnv(t)
	acct := e.Alpha.Account.ID.String()
	item := func(name string, extra ...any) map[string]any {
		m := map[string]any{"account_id": acct, "date": "2024-04-01", "amount": "12.50", "name": name, "nature": "expense"}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	// One stored before, by a single create.
	stored := e.Do("POST", "/api/v1/transactions", e.Alpha.Key, txBody(item("Stored", "external_id", "s-1"))).WantJSON(t, 201)

	r := e.Do("POST", "/api/v1/transactions/bulk", e.Alpha.Key, bulkBody(
		item("One"),
		item("Two", "external_id", "b-1"),
		item("Two again", "external_id", "b-1"),                                 // a duplicate inside the batch
		item("Foreign", "account_id", e.Beta.Account.ID.String()),               // another family's account
		item("Replay", "external_id", "s-1", "amount", "1e3"),                   // a stored key: existing, before validation
		map[string]any{"account_id": acct, "date": "2024-02-30", "amount": "x"}, // every problem listed
		"not an object",
		item("Income", "nature", "income", "currency", "eur", "external_id", 77),
	))
	res := bulkResults(t, r)
	want := []struct {
		status string
		name   string
		errs   []string
	}{
		{"created", "One", nil},
		{"created", "Two", nil},
		{"existing", "Two", nil},
		{"error", "", []string{"Account not found"}},
		{"existing", "Stored", nil},
		{"error", "", []string{
			"date must be a real calendar date (YYYY-MM-DD) between 1900-01-01 and 2199-12-31",
			"amount must be a decimal number with at most 12 digits before the point and 4 after it",
			"name can't be blank"}},
		{"error", "", []string{"transaction must be a JSON object"}},
		{"created", "Income", nil},
	}
	if len(res) != len(want) {
		t.Fatalf("%d results, want %d: %s", len(res), len(want), r.Body)
	}
	for i, w := range want {
		got := res[i]
		var errs []string
		for _, x := range got["errors"].([]any) {
			errs = append(errs, x.(string))
		}
		if got["status"] != w.status || !slices.Equal(errs, w.errs) {
			t.Errorf("item %d: %v %q, want %s %q", i, got["status"], errs, w.status, w.errs)
			continue
		}
		tx, _ := got["transaction"].(map[string]any)
		if (w.status == "error") != (tx == nil) || (tx != nil && tx["name"] != w.name) {
			t.Errorf("item %d: transaction %v, want name %q", i, tx, w.name)
		}
	}
	if res[2]["transaction"].(map[string]any)["id"] != res[1]["transaction"].(map[string]any)["id"] {
		t.Errorf("the duplicate is not the first item's row")
	}
	if res[4]["transaction"].(map[string]any)["id"] != stored["id"] {
		t.Errorf("the replay is not the stored row")
	}
	if inc := res[7]["transaction"].(map[string]any); inc["amount"] != "-€12.50" || inc["external_id"] != "77" {
		t.Errorf("income item: %v", inc)
	}
	// Written: the stored row and the three created ones; beta has nothing.
	for fam, n := range map[*models.Family]int{e.Alpha.Family: 4, e.Beta.Family: 0} {
		_, total, err := e.Store.Transactions(t.Context(), fam.ID, models.TransactionFilter{}, models.Page{Number: 1, Size: 10})
		if err != nil || total != n {
			t.Errorf("%s: %d rows (%v), want %d", fam.Name, total, err, n)
		}
	}
	insp := asynq.NewInspector(e.Redis)
	defer insp.Close()
	if _, err := insp.GetTaskInfo("default", "account:balance:"+acct); err != nil {
		t.Errorf("balance task not queued: %v", err)
	}

	// The same batch again: every keyed item is existing, the rest new.
	again := bulkResults(t, e.Do("POST", "/api/v1/transactions/bulk", e.Alpha.Key, bulkBody(item("Two", "external_id", "b-1"),
		item("Income", "external_id", "77"), item("One"))))
	if again[0]["status"] != "existing" || again[1]["status"] != "existing" || again[2]["status"] != "created" {
		t.Errorf("again: %v %v %v", again[0]["status"], again[1]["status"], again[2]["status"])
	}
}

func TestBulkCreateTransactionsRefused(t *testing.T) {
	e := apitest.NewEnv(t)
	acct := e.Alpha.Account.ID.String()
	items := make([]any, 1001)
	for i := range items {
		items[i] = map[string]any{"account_id": acct, "date": "2024-04-01", "amount": "1", "name": "x"}
	}
	m := apitest.WantError(t, e.Do("POST", "/api/v1/transactions/bulk", e.Alpha.Key, bulkBody(items...)), 422, "validation_failed")
	if errs := fmt.Sprint(m["errors"]); !strings.Contains(errs, "maximum is 1000") {
		t.Errorf("errors %s", errs)
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/transactions/bulk", e.Alpha.Key, `{"transactions": []}`), 422, "validation_failed")
	for _, body := range []string{`[]`, `{"transactions": {}}`, `{"transaction": []}`, `nope`, `{"transactions": null}`} {
		apitest.WantError(t, e.Do("POST", "/api/v1/transactions/bulk", e.Alpha.Key, body), 400, "bad_request")
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/transactions/bulk", e.Alpha.ReadKey, bulkBody(items[0])), 403, "insufficient_scope")
	apitest.WantError(t, e.Do("POST", "/api/v1/transactions/bulk", "", bulkBody(items[0])), 401, "unauthorized")
	_, total, err := e.Store.Transactions(t.Context(), e.Alpha.Family.ID, models.TransactionFilter{}, models.Page{Number: 1, Size: 1})
	if err != nil || total != 0 {
		t.Errorf("%d rows written by refused requests (%v)", total, err)
	}
	// Exactly 1,000 is allowed.
	res := bulkResults(t, e.Do("POST", "/api/v1/transactions/bulk", e.Alpha.Key, bulkBody(items[:1000]...)))
	if len(res) != 1000 || res[999]["status"] != "created" {
		t.Fatalf("1,000 items: %d results, last %v", len(res), res[len(res)-1])
	}
}
