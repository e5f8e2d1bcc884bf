package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"coffer/models"
	"coffer/models/modelstest"
)

// doKeyed is e.do with an Idempotency-Key header and a body sent as is.
func (e *env) doKeyed(method, path, key, idem, body string) response {
	e.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Idempotency-Key", idem)
	resp, err := e.app.Test(req, -1)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, body: out}
	e.validate(req, r)
	return r
}

// forgetKeys removes the idempotency records of the test's families when
// it ends (they would otherwise stay 24 hours).
func (e *env) forgetKeys(t *testing.T) {
	t.Cleanup(func() {
		ctx := context.Background()
		for _, f := range []*modelstest.FamilyFixture{e.alpha, e.beta} {
			keys, _ := e.rdb.Keys(ctx, "coffer:idempotency:"+f.Family.ID.String()+":*").Result()
			if len(keys) > 0 {
				e.rdb.Del(ctx, keys...)
			}
		}
	})
}

func (e *env) count(t *testing.T, f *modelstest.FamilyFixture) int {
	t.Helper()
	_, total, err := e.store.Transactions(t.Context(), f.Family.ID, models.TransactionFilter{}, models.Page{Number: 1, Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

func TestIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	e.forgetKeys(t)
	body := `{"transaction": {"account_id": "` + e.alpha.Account.ID.String() + `", "date": "2024-04-01", "amount": "9.99", "name": "Book"}}`
	first := e.doKeyed("POST", "/api/v1/transactions", e.alpha.Key, "order-1", body)
	if first.status != 201 || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %v %s", first.status, first.header, first.body)
	}
	// The same request again: the first answer, nothing written.
	again := e.doKeyed("POST", "/api/v1/transactions", e.alpha.Key, "order-1", body)
	if again.status != 201 || !bytes.Equal(again.body, first.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s, want the first answer %s", again.status, again.body, first.body)
	}
	if n := e.count(t, e.alpha); n != 1 {
		t.Fatalf("%d rows after a replay, want 1", n)
	}
	// The same key with another body, or on another route: 422.
	other := strings.Replace(body, "9.99", "10.99", 1)
	m := wantError(t, e.doKeyed("POST", "/api/v1/transactions", e.alpha.Key, "order-1", other), 422, "validation_failed")
	if !strings.Contains(m["errors"].([]any)[0].(string), "Idempotency-Key") {
		t.Errorf("errors %v", m["errors"])
	}
	wantError(t, e.doKeyed("POST", "/api/v1/tags", e.alpha.Key, "order-1", body), 422, "validation_failed")
	// A refusal is an answer too: replayed, not re-run.
	bad := `{"transaction": {"account_id": "` + e.alpha.Account.ID.String() + `"}}`
	r1 := wantError(t, e.doKeyed("POST", "/api/v1/transactions", e.alpha.Key, "bad-1", bad), 422, "validation_failed")
	r2 := e.doKeyed("POST", "/api/v1/transactions", e.alpha.Key, "bad-1", bad)
	if r2.status != 422 || r2.header.Get("Idempotent-Replayed") != "true" || r2.json(t)["errors"] == nil || len(r1["errors"].([]any)) != 3 {
		t.Errorf("refusal replay: %d %s", r2.status, r2.body)
	}
	// Another family's same key is its own.
	tag := `{"tag": {"name": "gift"}}`
	a := e.doKeyed("POST", "/api/v1/tags", e.alpha.Key, "tag-1", tag).wantJSON(t, 201)
	b := e.doKeyed("POST", "/api/v1/tags", e.beta.Key, "tag-1", tag).wantJSON(t, 201)
	if a["id"] == b["id"] {
		t.Errorf("two families' keys met: %v", a["id"])
	}
	// Bulk creates, and every other POST, honour the key too.
	bulk := `{"transactions": [{"account_id": "` + e.alpha.Account.ID.String() + `", "date": "2024-04-01", "amount": "1", "name": "x"}]}`
	b1 := e.doKeyed("POST", "/api/v1/transactions/bulk", e.alpha.Key, "bulk-1", bulk)
	b2 := e.doKeyed("POST", "/api/v1/transactions/bulk", e.alpha.Key, "bulk-1", bulk)
	if b1.status != 200 || !bytes.Equal(b1.body, b2.body) || e.count(t, e.alpha) != 2 {
		t.Errorf("bulk replay: %d %s / %s, %d rows", b1.status, b1.body, b2.body, e.count(t, e.alpha))
	}
	// Without a key nothing changes; a key that is not printable ASCII or too long is 400.
	wantError(t, e.doKeyed("POST", "/api/v1/tags", e.alpha.Key, strings.Repeat("k", 256), tag), 400, "bad_request")
	wantError(t, e.doKeyed("POST", "/api/v1/tags", e.alpha.Key, "é", tag), 400, "bad_request")
}

// TestIdempotencyKeyConcurrent: requests racing with one key do the work
// once; each of the others gets the first answer or a 409.
func TestIdempotencyKeyConcurrent(t *testing.T) {
	e := newEnv(t)
	e.forgetKeys(t)
	body := `{"transaction": {"account_id": "` + e.alpha.Account.ID.String() + `", "date": "2024-04-01", "amount": "5", "name": "Race"}}`
	const n = 20
	results := make([]response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.doKeyed("POST", "/api/v1/transactions", e.alpha.Key, "race", body)
		}()
	}
	wg.Wait()
	var created []byte
	for _, r := range results {
		switch {
		case r.status == 201 && created == nil:
			created = r.body
		case r.status == 201 && !bytes.Equal(r.body, created):
			t.Errorf("two different 201 answers: %s and %s", created, r.body)
		case r.status == 409:
		case r.status != 201:
			t.Errorf("status %d: %s", r.status, r.body)
		}
	}
	if n := e.count(t, e.alpha); n != 1 {
		t.Fatalf("%d rows, want 1", n)
	}
}

// TestIdempotencyKeyInProgress: while a request holds a key (here a claim
// left in Redis as a running request leaves it), the same request waits
// and then gets a 409, another request gets a 422, and once the claim is
// gone the work runs.
func TestIdempotencyKeyInProgress(t *testing.T) {
	e := newEnv(t)
	e.forgetKeys(t)
	ctx := context.Background()
	body := `{"tag": {"name": "busy"}}`
	sum := sha256.Sum256([]byte("held"))
	rkey := "coffer:idempotency:" + e.alpha.Family.ID.String() + ":" + hex.EncodeToString(sum[:])
	fp := sha256.Sum256([]byte("POST /api/v1/tags\n" + body))
	claim, _ := json.Marshal(map[string]any{"request": hex.EncodeToString(fp[:]), "done": false})
	if err := e.rdb.Set(ctx, rkey, claim, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.rdb.Del(context.Background(), rkey) })
	wantError(t, e.doKeyed("POST", "/api/v1/tags", e.alpha.Key, "held", body), 409, "conflict")
	wantError(t, e.doKeyed("POST", "/api/v1/tags", e.alpha.Key, "held", `{"tag": {"name": "other"}}`), 422, "validation_failed")
	if err := e.rdb.Del(ctx, rkey).Err(); err != nil {
		t.Fatal(err)
	}
	e.doKeyed("POST", "/api/v1/tags", e.alpha.Key, "held", body).wantJSON(t, http.StatusCreated)
}
