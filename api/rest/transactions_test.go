package rest_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/hibiken/asynq"

	"coffer/api/apitest"
	"coffer/models"
)

func txBody(fields map[string]any) map[string]any {
	return map[string]any{"transaction": fields}
}

func TestCreateTransaction(t *testing.T) {
	e := apitest.NewEnv(t)
	acct := e.Alpha.Account.ID.String()

	r := e.Do("POST", "/api/v1/transactions", e.Alpha.Key, txBody(map[string]any{
		"account_id": acct, "date": "2024-03-01", "amount": 1234.56, "name": "Rent", "nature": "EXPENSE",
		"notes": "March",
	}))
	if r.Status != http.StatusCreated {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	m := r.JSON(t)
	for field, want := range map[string]any{
		"amount": "$1,234.56", "amount_cents": 123456.0, "signed_amount_cents": -123456.0, "currency": "USD",
		"classification": "expense", "name": "Rent", "notes": "March", "pending": false, "external_id": nil,
	} {
		if m[field] != want {
			t.Errorf("%s = %#v, want %#v", field, m[field], want)
		}
	}
	if acc := m["account"].(map[string]any); acc["id"] != acct || acc["status"] != "active" {
		t.Errorf("account = %v", acc)
	}

	// The balance job is queued for the account once the write committed.
	insp := asynq.NewInspector(e.Redis)
	defer insp.Close()
	if _, err := insp.GetTaskInfo("default", "account:balance:"+acct); err != nil {
		t.Errorf("balance task not queued: %v", err)
	}
}

func TestCreateTransactionNatureAndCurrency(t *testing.T) {
	e := apitest.NewEnv(t)
	acct := e.Alpha.Account.ID.String()
	for _, tc := range []struct {
		amount any
		nature string
		cur    string
		want   string
		class  string
	}{
		{"25", "income", "", "-$25.00", "income"},
		{-25, "expense", "", "$25.00", "expense"},
		{"-25.5", "", "", "-$25.50", "income"},
		{"1000.12", "outflow", "eur", "€1,000.12", "expense"},
		{"1234.5", "inflow", "JPY", "-¥1,235", "income"},
		{"0.0005", "", "USD", "$0.00", "expense"},
		{"1.2345", "", "KWD", "KWD 1.235", "expense"},
	} {
		body := map[string]any{"account_id": acct, "date": "2024-03-01", "amount": tc.amount, "name": "x"}
		if tc.nature != "" {
			body["nature"] = tc.nature
		}
		if tc.cur != "" {
			body["currency"] = tc.cur
		}
		r := e.Do("POST", "/api/v1/transactions", e.Alpha.Key, txBody(body))
		if r.Status != 201 {
			t.Fatalf("%v: status %d %s", tc, r.Status, r.Body)
		}
		m := r.JSON(t)
		if m["amount"] != tc.want || m["classification"] != tc.class {
			t.Errorf("%v: amount %v class %v, want %s %s", tc, m["amount"], m["classification"], tc.want, tc.class)
		}
	}
}

func TestCreateTransactionIdempotent(t *testing.T) {
	e := apitest.NewEnv(t)
	body := txBody(map[string]any{"account_id": e.Alpha.Account.ID.String(), "date": "2024-03-01",
		"amount": "10", "name": "Coffee", "external_id": 12345})
	first := e.Do("POST", "/api/v1/transactions", e.Alpha.Key, body)
	if first.Status != 201 {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	if m := first.JSON(t); m["external_id"] != "12345" || m["source"] != "api" {
		t.Errorf("external_id %v source %v", m["external_id"], m["source"])
	}
	// Same key as a string, different other fields: the existing row comes
	// back unchanged, before any other validation.
	replay := e.Do("POST", "/api/v1/transactions", e.Alpha.Key, txBody(map[string]any{
		"account_id": e.Alpha.Account.ID.String(), "external_id": "12345", "amount": "1e3"}))
	if replay.Status != 200 {
		t.Fatalf("replay: %d %s", replay.Status, replay.Body)
	}
	if replay.JSON(t)["id"] != first.JSON(t)["id"] || replay.JSON(t)["amount"] != "$10.00" {
		t.Errorf("replay returned %s", replay.Body)
	}
	// Another source is another key.
	other := e.Do("POST", "/api/v1/transactions", e.Alpha.Key, txBody(map[string]any{"account_id": e.Alpha.Account.ID.String(),
		"date": "2024-03-01", "amount": "10", "name": "Coffee", "external_id": "12345", "source": "bank"}))
	if other.Status != 201 {
		t.Errorf("other source: %d %s", other.Status, other.Body)
	}
}

func TestCreateTransactionConcurrentReplays(t *testing.T) {
	e := apitest.NewEnv(t)
	body := txBody(map[string]any{"account_id": e.Alpha.Account.ID.String(), "date": "2024-03-01",
		"amount": "10", "name": "Race", "external_id": "race-1"})
	const n = 50
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- e.Do("POST", "/api/v1/transactions", e.Alpha.Key, body).Status
		}()
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[201] != 1 || count[200] != n-1 {
		t.Fatalf("statuses %v, want one 201 and %d 200", count, n-1)
	}
	txs, total, err := e.Store.Transactions(t.Context(), e.Alpha.Family.ID, models.TransactionFilter{Search: "race"}, models.Page{Number: 1, Size: 100})
	if err != nil || total != 1 || len(txs) != 1 {
		t.Fatalf("rows: %d %v", total, err)
	}
}

func TestCreateTransactionValidation(t *testing.T) {
	e := apitest.NewEnv(t)
	acct := e.Alpha.Account.ID.String()
	valid := func(over map[string]any) map[string]any {
		m := map[string]any{"account_id": acct, "date": "2024-03-01", "amount": "10", "name": "x"}
		for k, v := range over {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return txBody(m)
	}
	tag := &models.Tag{FamilyID: e.Beta.Family.ID, Name: "foreign", Color: "#000000"}
	if err := e.Store.CreateTag(t.Context(), tag); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
		errs   []string
	}{
		{"empty transaction", txBody(map[string]any{}), 422, "validation_failed",
			[]string{"account_id is required", "date is required", "amount is required", "name can't be blank"}},
		{"exponent number", valid(map[string]any{"amount": 1e3}), 201, "", nil},
		{"exponent string", valid(map[string]any{"amount": "1e3"}), 422, "validation_failed", []string{"amount must be"}},
		{"raw exponent", `{"transaction":{"account_id":"` + acct + `","date":"2024-03-01","amount":1e3,"name":"x"}}`, 422, "validation_failed", []string{"amount must be"}},
		{"five decimals", valid(map[string]any{"amount": "1.00000"}), 422, "validation_failed", nil},
		{"comma", valid(map[string]any{"amount": "1,234"}), 422, "validation_failed", nil},
		{"NaN", valid(map[string]any{"amount": "NaN"}), 422, "validation_failed", nil},
		{"16 digits", valid(map[string]any{"amount": "1234567890123456"}), 422, "validation_failed", nil},
		{"900 trillion", valid(map[string]any{"amount": 900000000000000}), 422, "validation_failed", []string{"at most 12 digits before the point"}},
		{"13 digits", valid(map[string]any{"amount": "-1000000000000"}), 422, "validation_failed", []string{"at most 12 digits before the point"}},
		{"the largest amount", valid(map[string]any{"amount": "999999999999.9999"}), 201, "", nil},
		{"boolean amount", valid(map[string]any{"amount": true}), 422, "validation_failed", nil},
		{"bad date", valid(map[string]any{"date": "2024-02-30"}), 422, "validation_failed", []string{"date must be"}},
		{"date out of range", valid(map[string]any{"date": "1899-12-31"}), 422, "validation_failed", nil},
		{"date as number", valid(map[string]any{"date": 20240301}), 422, "validation_failed", []string{"date must be a string"}},
		{"blank name", valid(map[string]any{"name": "   "}), 422, "validation_failed", []string{"name can't be blank"}},
		{"description instead", valid(map[string]any{"name": nil, "description": "Desc"}), 201, "", nil},
		{"long name", valid(map[string]any{"name": strings.Repeat("n", 256)}), 422, "validation_failed", nil},
		{"long notes", valid(map[string]any{"notes": strings.Repeat("n", 10001)}), 422, "validation_failed", nil},
		{"NUL in name", valid(map[string]any{"name": "a\u0000b"}), 422, "validation_failed", nil},
		{"bad nature", valid(map[string]any{"nature": "refund"}), 422, "validation_failed", []string{"nature must be"}},
		{"bad currency", valid(map[string]any{"currency": "XYZ"}), 422, "validation_failed", nil},
		{"account not uuid", valid(map[string]any{"account_id": "abc"}), 422, "validation_failed", []string{"account_id must be a UUID"}},
		{"foreign account", valid(map[string]any{"account_id": e.Beta.Account.ID.String()}), 422, "validation_failed", []string{"Account not found"}},
		{"foreign tag", valid(map[string]any{"tag_ids": []string{tag.ID.String()}}), 422, "validation_failed", []string{"Tag " + tag.ID.String() + " not found"}},
		{"tag ids not array", valid(map[string]any{"tag_ids": "x"}), 422, "validation_failed", nil},
		{"source without external id", valid(map[string]any{"source": "bank"}), 422, "validation_failed", []string{"source requires external_id"}},
		{"external id object", valid(map[string]any{"external_id": map[string]any{}}), 422, "validation_failed", nil},
		{"blank external id", valid(map[string]any{"external_id": "  "}), 201, "", nil},
		{"reserved source", valid(map[string]any{"external_id": "T-1", "source": "simplefin"}), 422, "validation_failed", []string{"source simplefin is reserved"}},
		{"body is array", `[{"transaction":{}}]`, 400, "bad_request", nil},
		{"body is not json", `{"transaction":`, 400, "bad_request", nil},
		{"no wrapper", `{"account_id":"x"}`, 400, "bad_request", nil},
		{"wrapper is string", `{"transaction":"x"}`, 400, "bad_request", nil},
		{"invalid utf-8", []byte("{\"transaction\":{\"name\":\"\xff\xfe\"}}"), 400, "bad_request", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do("POST", "/api/v1/transactions", e.Alpha.Key, tc.body)
			if tc.code == "" {
				if r.Status != tc.status {
					t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
				}
				return
			}
			m := apitest.WantError(t, r, tc.status, tc.code)
			got := fmt.Sprint(m["errors"])
			for _, want := range tc.errs {
				if !strings.Contains(got, want) {
					t.Errorf("errors %s lack %q", got, want)
				}
			}
		})
	}
	// Nothing half-written: only the bodies answered 201 made rows.
	_, total, _ := e.Store.Transactions(t.Context(), e.Alpha.Family.ID, models.TransactionFilter{}, models.Page{Number: 1, Size: 10})
	if total != 4 {
		t.Errorf("%d rows after the table, want 4", total)
	}
}

func TestTransactionShowUpdateDelete(t *testing.T) {
	e := apitest.NewEnv(t)
	cat := &models.Category{FamilyID: e.Alpha.Family.ID, Name: "Food", Color: "#112233", Icon: "utensils", Classification: "expense"}
	tag := &models.Tag{FamilyID: e.Alpha.Family.ID, Name: "trip", Color: "#445566"}
	if err := e.Store.CreateCategory(t.Context(), cat); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.CreateTag(t.Context(), tag); err != nil {
		t.Fatal(err)
	}
	r := e.Do("POST", "/api/v1/transactions", e.Alpha.Key, txBody(map[string]any{"account_id": e.Alpha.Account.ID.String(),
		"date": "2024-03-01", "amount": "42", "name": "Dinner", "category_id": cat.ID.String(), "tag_ids": []string{tag.ID.String()}}))
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	id := r.JSON(t)["id"].(string)
	path := "/api/v1/transactions/" + id

	show := e.Do("GET", strings.ToUpper(path[:0])+path, e.Alpha.Key, nil).JSON(t)
	if show["category"].(map[string]any)["name"] != "Food" || len(show["tags"].([]any)) != 1 {
		t.Errorf("show = %v", show)
	}
	if r := e.Do("GET", "/api/v1/transactions/"+strings.ToUpper(id), e.Alpha.Key, nil); r.Status != 200 {
		t.Errorf("upper-case id: %d", r.Status)
	}
	apitest.WantError(t, e.Do("GET", path, e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("GET", "/api/v1/transactions/not-a-uuid", e.Alpha.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("PATCH", path, e.Beta.Key, txBody(map[string]any{"name": "x"})), 404, "not_found")
	apitest.WantError(t, e.Do("DELETE", path, e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("PATCH", path, e.Alpha.Key, `{}`), 400, "bad_request")

	up := e.Do("PATCH", path, e.Alpha.Key, txBody(map[string]any{"nature": "income", "category_id": nil, "tag_ids": []string{}, "notes": "paid back"}))
	if up.Status != 200 {
		t.Fatalf("update: %d %s", up.Status, up.Body)
	}
	m := up.JSON(t)
	if m["amount"] != "-$42.00" || m["category"] != nil || len(m["tags"].([]any)) != 0 || m["notes"] != "paid back" || m["name"] != "Dinner" {
		t.Errorf("after update: %s", up.Body)
	}
	apitest.WantError(t, e.Do("PUT", path, e.Alpha.Key, txBody(map[string]any{"account_id": e.Beta.Account.ID.String()})), 422, "validation_failed")

	del := e.Do("DELETE", path, e.Alpha.Key, nil)
	if del.Status != 200 || del.JSON(t)["message"] != "Transaction deleted successfully" {
		t.Fatalf("delete: %d %s", del.Status, del.Body)
	}
	apitest.WantError(t, e.Do("GET", path, e.Alpha.Key, nil), 404, "not_found")
}

func TestListTransactions(t *testing.T) {
	e := apitest.NewEnv(t)
	acct := e.Alpha.Account.ID.String()
	for i := 0; i < 7; i++ {
		name := fmt.Sprintf("Item %d", i)
		if i == 3 {
			name = "100% juice_box"
		}
		r := e.Do("POST", "/api/v1/transactions", e.Alpha.Key, txBody(map[string]any{"account_id": acct,
			"date": fmt.Sprintf("2024-01-%02d", i+1), "amount": fmt.Sprint(i*10 - 20), "name": name}))
		if r.Status != 201 {
			t.Fatal(r.Status, string(r.Body))
		}
	}
	e.Do("POST", "/api/v1/transactions", e.Beta.Key, txBody(map[string]any{"account_id": e.Beta.Account.ID.String(),
		"date": "2024-01-01", "amount": "1", "name": "Item beta"}))

	seen := map[string]bool{}
	for page := 1; page <= 3; page++ {
		m := e.Do("GET", fmt.Sprintf("/api/v1/transactions?per_page=3&page=%d", page), e.Alpha.Key, nil).JSON(t)
		p := m["pagination"].(map[string]any)
		if p["total_count"] != 7.0 || p["total_pages"] != 3.0 || p["page"] != float64(page) {
			t.Fatalf("pagination %v", p)
		}
		for _, tx := range m["transactions"].([]any) {
			id := tx.(map[string]any)["id"].(string)
			if seen[id] {
				t.Fatalf("id %s seen twice", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != 7 {
		t.Fatalf("walked %d transactions, want 7", len(seen))
	}
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"search=ITEM", 6},
		{"search=100%25", 1},
		{"search=_", 1},
		{"type=income", 2},
		{"type=expense", 5},
		{"start_date=2024-01-02&end_date=2024-01-04", 3},
		{"min_amount=0&max_amount=20", 3},
		{"account_id=" + acct, 7},
		{"account_ids[]=" + e.Beta.Account.ID.String(), 0},
		{"page=9", 0},
		{"per_page=1000", 7},
	} {
		m := e.Do("GET", "/api/v1/transactions?"+tc.query, e.Alpha.Key, nil).JSON(t)
		if got := len(m["transactions"].([]any)); got != tc.want {
			t.Errorf("%s: %d transactions, want %d", tc.query, got, tc.want)
		}
		if tc.query == "per_page=1000" && m["pagination"].(map[string]any)["per_page"] != 100.0 {
			t.Errorf("per_page not clamped: %v", m["pagination"])
		}
	}
	for _, q := range []string{"page=0", "per_page=abc", "page=-1", "account_id=nope", "start_date=2024-13-01", "min_amount=1e3", "type=other", "search=%FF"} {
		apitest.WantError(t, e.Do("GET", "/api/v1/transactions?"+q, e.Alpha.Key, nil), 400, "bad_request")
	}
}
