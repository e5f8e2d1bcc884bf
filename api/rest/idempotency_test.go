package rest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/api/rest"
	"coffer/models"
)

func TestIdempotencyKey(t *testing.T) {
	e := apitest.NewEnv(t)
	e.ForgetKeys(t)
	body := `{"transaction": {"account_id": "` + e.Alpha.Account.ID.String() + `", "date": "2024-04-01", "amount": "9.99", "name": "Book"}}`
	first := e.DoKeyed("POST", "/api/v1/transactions", e.Alpha.Key, "order-1", body)
	if first.Status != 201 || first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %v %s", first.Status, first.Header, first.Body)
	}
	// The same request again: the first answer, nothing written.
	again := e.DoKeyed("POST", "/api/v1/transactions", e.Alpha.Key, "order-1", body)
	if again.Status != 201 || !bytes.Equal(again.Body, first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s, want the first answer %s", again.Status, again.Body, first.Body)
	}
	if n := e.Count(t, e.Alpha); n != 1 {
		t.Fatalf("%d rows after a replay, want 1", n)
	}
	// The same key with another body, or on another route: 422.
	other := strings.Replace(body, "9.99", "10.99", 1)
	m := apitest.WantError(t, e.DoKeyed("POST", "/api/v1/transactions", e.Alpha.Key, "order-1", other), 422, "validation_failed")
	if !strings.Contains(m["errors"].([]any)[0].(string), "Idempotency-Key") {
		t.Errorf("errors %v", m["errors"])
	}
	apitest.WantError(t, e.DoKeyed("POST", "/api/v1/tags", e.Alpha.Key, "order-1", body), 422, "validation_failed")
	// A refusal is an answer too: replayed, not re-run.
	bad := `{"transaction": {"account_id": "` + e.Alpha.Account.ID.String() + `"}}`
	r1 := apitest.WantError(t, e.DoKeyed("POST", "/api/v1/transactions", e.Alpha.Key, "bad-1", bad), 422, "validation_failed")
	r2 := e.DoKeyed("POST", "/api/v1/transactions", e.Alpha.Key, "bad-1", bad)
	if r2.Status != 422 || r2.Header.Get("Idempotent-Replayed") != "true" || r2.JSON(t)["errors"] == nil || len(r1["errors"].([]any)) != 3 {
		t.Errorf("refusal replay: %d %s", r2.Status, r2.Body)
	}
	// Another family's same key is its own.
	tag := `{"tag": {"name": "gift"}}`
	a := e.DoKeyed("POST", "/api/v1/tags", e.Alpha.Key, "tag-1", tag).WantJSON(t, 201)
	b := e.DoKeyed("POST", "/api/v1/tags", e.Beta.Key, "tag-1", tag).WantJSON(t, 201)
	if a["id"] == b["id"] {
		t.Errorf("two families' keys met: %v", a["id"])
	}
	// Bulk creates, and every other POST, honour the key too.
	bulk := `{"transactions": [{"account_id": "` + e.Alpha.Account.ID.String() + `", "date": "2024-04-01", "amount": "1", "name": "x"}]}`
	b1 := e.DoKeyed("POST", "/api/v1/transactions/bulk", e.Alpha.Key, "bulk-1", bulk)
	b2 := e.DoKeyed("POST", "/api/v1/transactions/bulk", e.Alpha.Key, "bulk-1", bulk)
	if b1.Status != 200 || !bytes.Equal(b1.Body, b2.Body) || e.Count(t, e.Alpha) != 2 {
		t.Errorf("bulk replay: %d %s / %s, %d rows", b1.Status, b1.Body, b2.Body, e.Count(t, e.Alpha))
	}
	// Without a key nothing changes; a key that is not printable ASCII or too long is 400.
	apitest.WantError(t, e.DoKeyed("POST", "/api/v1/tags", e.Alpha.Key, strings.Repeat("k", 256), tag), 400, "bad_request")
	apitest.WantError(t, e.DoKeyed("POST", "/api/v1/tags", e.Alpha.Key, "é", tag), 400, "bad_request")
}

// TestIdempotencyKeyConcurrent: requests racing with one key do the work
// once; each of the others gets the first answer or a 409.
func TestIdempotencyKeyConcurrent(t *testing.T) {
	e := apitest.NewEnv(t)
	e.ForgetKeys(t)
	body := `{"transaction": {"account_id": "` + e.Alpha.Account.ID.String() + `", "date": "2024-04-01", "amount": "5", "name": "Race"}}`
	const n = 20
	results := make([]apitest.Response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.DoKeyed("POST", "/api/v1/transactions", e.Alpha.Key, "race", body)
		}()
	}
	wg.Wait()
	var created []byte
	for _, r := range results {
		switch {
		case r.Status == 201 && created == nil:
			created = r.Body
		case r.Status == 201 && !bytes.Equal(r.Body, created):
			t.Errorf("two different 201 answers: %s and %s", created, r.Body)
		case r.Status == 409:
		case r.Status != 201:
			t.Errorf("status %d: %s", r.Status, r.Body)
		}
	}
	if n := e.Count(t, e.Alpha); n != 1 {
		t.Fatalf("%d rows, want 1", n)
	}
}

// TestIdempotencyKeyInProgress: while a request holds a key (here a claim
// left in Redis as a running request leaves it), the same request waits
// and then gets a 409, another request gets a 422, and once the claim is
// gone the work runs.
func TestIdempotencyKeyInProgress(t *testing.T) {
	e := apitest.NewEnv(t)
	e.ForgetKeys(t)
	ctx := context.Background()
	body := `{"tag": {"name": "busy"}}`
	sum := sha256.Sum256([]byte("held"))
	k, err := e.Store.APIKeyBySecret(ctx, e.Alpha.Key)
	if err != nil {
		t.Fatal(err)
	}
	rkey := rest.IdempotencyRedisKey(e.Alpha.Family.ID, k.ID, hex.EncodeToString(sum[:]))
	fp := sha256.Sum256([]byte("POST /api/v1/tags\n" + body))
	claim, _ := json.Marshal(map[string]any{"request": hex.EncodeToString(fp[:]), "done": false})
	if err := e.RDB.Set(ctx, rkey, claim, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.RDB.Del(context.Background(), rkey) })
	apitest.WantError(t, e.DoKeyed("POST", "/api/v1/tags", e.Alpha.Key, "held", body), 409, "conflict")
	apitest.WantError(t, e.DoKeyed("POST", "/api/v1/tags", e.Alpha.Key, "held", `{"tag": {"name": "other"}}`), 422, "validation_failed")
	if err := e.RDB.Del(ctx, rkey).Err(); err != nil {
		t.Fatal(err)
	}
	e.DoKeyed("POST", "/api/v1/tags", e.Alpha.Key, "held", body).WantJSON(t, http.StatusCreated)
}

// TestIdempotencyKeyPerCredential: a key is its credential's own; another
// member of the same family sending the same key and body does the work
// and gets their own answer, never the first member's.
func TestIdempotencyKeyPerCredential(t *testing.T) {
	e := apitest.NewEnv(t)
	e.ForgetKeys(t)
	ctx := context.Background()
	member := &models.User{FamilyID: e.Alpha.Family.ID, Email: "member-" + e.Alpha.User.Email}
	if err := e.Store.CreateUser(ctx, member); err != nil {
		t.Fatal(err)
	}
	other, err := e.Store.CreateAPIKey(ctx, e.Alpha.Family.ID, &models.APIKey{UserID: member.ID, Name: "m", Scope: models.ScopeReadWrite})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"transaction": {"account_id": "` + e.Alpha.Account.ID.String() + `", "date": "2024-04-01", "amount": "12", "name": "Mine"}}`
	first := e.DoKeyed("POST", "/api/v1/transactions", e.Alpha.Key, "shared-1", body)
	second := e.DoKeyed("POST", "/api/v1/transactions", other, "shared-1", body)
	if first.Status != 201 || second.Status != 201 || second.Header.Get("Idempotent-Replayed") != "" || bytes.Equal(first.Body, second.Body) {
		t.Fatalf("member's request replayed another's answer: %d %s / %d %v %s", first.Status, first.Body, second.Status, second.Header, second.Body)
	}
	if n := e.Count(t, e.Alpha); n != 2 {
		t.Fatalf("%d rows, want 2", n)
	}
	// Each still replays its own.
	if r := e.DoKeyed("POST", "/api/v1/transactions", other, "shared-1", body); !bytes.Equal(r.Body, second.Body) || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("own replay: %d %s", r.Status, r.Body)
	}
}

// TestIdempotencyKeyCap: a family keeps at most its cap of answers; past
// it the oldest is dropped (its key runs the work again) and new keys are
// never refused.
func TestIdempotencyKeyCap(t *testing.T) {
	e := apitest.NewEnv(t, func(o *api.Options) { o.IdempotencyKeysPerFamily = 3 })
	e.ForgetKeys(t)
	ctx := context.Background()
	tag := func(i int) string { return `{"tag": {"name": "t` + string(rune('a'+i)) + `"}}` }
	answers := make([]apitest.Response, 5)
	for i := range answers {
		answers[i] = e.DoKeyed("POST", "/api/v1/tags", e.Alpha.Key, "cap-"+string(rune('a'+i)), tag(i))
		if answers[i].Status != 201 || answers[i].Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("key %d: %d %s", i, answers[i].Status, answers[i].Body)
		}
	}
	keys, err := e.RDB.Keys(ctx, "coffer:idempotency:"+e.Alpha.Family.ID.String()+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 {
		t.Errorf("%d answers kept, want 3: %v", len(keys), keys)
	}
	// The newest three replay.
	for i := 2; i < 5; i++ {
		r := e.DoKeyed("POST", "/api/v1/tags", e.Alpha.Key, "cap-"+string(rune('a'+i)), tag(i))
		if r.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r.Body, answers[i].Body) {
			t.Errorf("key %d not replayed: %d %s", i, r.Status, r.Body)
		}
	}
	// The oldest was dropped: it runs again (a duplicate name is its own answer).
	r := e.DoKeyed("POST", "/api/v1/tags", e.Alpha.Key, "cap-a", tag(0))
	if r.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("dropped key replayed: %d %s", r.Status, r.Body)
	}
	// Another family's keys do not count against this one.
	e.DoKeyed("POST", "/api/v1/tags", e.Beta.Key, "cap-a", tag(0)).WantJSON(t, 201)
	if r := e.DoKeyed("POST", "/api/v1/tags", e.Alpha.Key, "cap-e", tag(4)); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("beta's key dropped alpha's: %d %s", r.Status, r.Body)
	}
}
