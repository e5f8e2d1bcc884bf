package rest_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/modelstest"
)

func TestAPIKeyAuth(t *testing.T) {
	e := apitest.NewEnv(t)
	for _, tc := range []struct {
		name, key string
	}{
		{"missing", ""},
		{"unknown", "cof_" + strings.Repeat("0", 64)},
		{"oversized", strings.Repeat("k", 5000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do("GET", "/api/v1/chats", tc.key, nil)
			m := apitest.WantError(t, r, 401, "unauthorized")
			if m["message"] != "Access token or API key is invalid, expired, or missing" {
				t.Errorf("message %v", m["message"])
			}
			if r.Header.Get("X-RateLimit-Limit") != "" {
				t.Error("a 401 carries rate-limit headers")
			}
		})
	}

	ctx := t.Context()
	// A revoked key and an expired key look like unknown ones.
	revoked := &models.APIKey{UserID: e.Alpha.User.ID, Name: "old", Scope: models.ScopeRead}
	rkey, _ := e.Store.CreateAPIKey(ctx, e.Alpha.Family.ID, revoked)
	if err := e.Store.RevokeAPIKey(ctx, e.Alpha.Family.ID, revoked.ID); err != nil {
		t.Fatal(err)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/chats", rkey, nil), 401, "unauthorized")
	past := time.Now().Add(-time.Hour)
	ekey, _ := e.Store.CreateAPIKey(ctx, e.Alpha.Family.ID, &models.APIKey{UserID: e.Alpha.User.ID, Name: "exp", Scope: models.ScopeRead, ExpiresAt: &past})
	apitest.WantError(t, e.Do("GET", "/api/v1/chats", ekey, nil), 401, "unauthorized")

	// A read key reads but may not write.
	if r := e.Do("GET", "/api/v1/chats", e.Alpha.ReadKey, nil); r.Status != 200 {
		t.Fatalf("read key: %d", r.Status)
	}
	m := apitest.WantError(t, e.Do("POST", "/api/v1/chats", e.Alpha.ReadKey, map[string]any{"title": "x"}), 403, "insufficient_scope")
	if m["message"] != "This action requires the 'write' scope" {
		t.Errorf("message %v", m["message"])
	}

	// A suspended user's keys stop at once on the instance that suspends,
	// and on the others as soon as the announcement reaches them, though
	// each has the key in its cache.
	other := e.Instance(t)
	for _, in := range []*apitest.Env{e, other} {
		if r := in.Do("GET", "/api/v1/chats", e.Alpha.Key, nil); r.Status != 200 {
			t.Fatalf("before suspension: %d", r.Status)
		}
	}
	member := &models.User{FamilyID: e.Alpha.Family.ID, Email: "m-" + e.Alpha.User.Email, Role: models.RoleAdmin}
	if err := e.Store.CreateUser(ctx, member); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.SuspendUser(ctx, models.AdminChange{ActorID: member.ID, ActorRole: models.RoleAdmin,
		ActorFamilyID: e.Alpha.Family.ID, TargetID: e.Alpha.User.ID}); err != nil {
		t.Fatal(err)
	}
	m = apitest.WantError(t, e.Do("GET", "/api/v1/chats", e.Alpha.Key, nil), 401, "unauthorized")
	refusedSoon(t, other, "/api/v1/chats", e.Alpha.Key)
	if m["message"] != "Account has been deactivated" {
		t.Errorf("message %v", m["message"])
	}
}

// TestRevokedKeyEverywhere: a key cached by two web processes stops on
// the one that revokes it at its next request, and on the other as soon
// as the announcement reaches it (its AuthWatch).
func TestRevokedKeyEverywhere(t *testing.T) {
	e := apitest.NewEnv(t)
	other := e.Instance(t)
	ctx := t.Context()
	k := &models.APIKey{UserID: e.Alpha.User.ID, Name: "phone", Scope: models.ScopeReadWrite}
	secret, err := e.Store.CreateAPIKey(ctx, e.Alpha.Family.ID, k)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for _, in := range []*apitest.Env{e, other} {
			if r := in.Do("GET", "/api/v1/accounts", secret, nil); r.Status != 200 {
				t.Fatalf("before: %d", r.Status)
			}
		}
	}
	if err := e.Store.RevokeUserAPIKey(ctx, e.Alpha.Family.ID, e.Alpha.User.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	apitest.WantError(t, e.Do("GET", "/api/v1/accounts", secret, nil), 401, "unauthorized")
	refusedSoon(t, other, "/api/v1/accounts", secret)
	t.Logf("the other process refused the key %v after the revoke", time.Since(revoked))
	// The family's other keys go on working, read again from the database.
	for _, in := range []*apitest.Env{e, other} {
		if r := in.Do("GET", "/api/v1/accounts", e.Alpha.Key, nil); r.Status != 200 {
			t.Errorf("other key: %d", r.Status)
		}
	}
}

func TestRateLimit(t *testing.T) {
	e := apitest.NewEnv(t, func(o *api.Options) { o.APIRateLimitPerHour = 3 })
	for i := 1; i <= 3; i++ {
		r := e.Do("GET", "/api/v1/tags", e.Alpha.Key, nil)
		if r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "3" || r.Header.Get("X-RateLimit-Remaining") != string(rune('3'-i)) {
			t.Fatalf("request %d: %d limit=%q remaining=%q", i, r.Status, r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"))
		}
		if r.Header.Get("X-RateLimit-Reset") == "" {
			t.Fatal("no X-RateLimit-Reset")
		}
	}
	r := e.Do("GET", "/api/v1/tags", e.Alpha.Key, nil)
	apitest.WantError(t, r, 429, "rate_limited")
	if r.Header.Get("Retry-After") == "" || r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("429 headers: %v", r.Header)
	}
	// Another key has its own count.
	if r := e.Do("GET", "/api/v1/tags", e.Beta.Key, nil); r.Status != 200 {
		t.Errorf("other key: %d", r.Status)
	}
}

func TestRequestIDAndErrors(t *testing.T) {
	e := apitest.NewEnv(t)
	req := httptest.NewRequest("GET", "/healthz", nil)
	req.Header.Set("X-Request-Id", "abc-123.x_y")
	resp, err := e.App.Test(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get("X-Request-Id"); got != "abc-123.x_y" {
		t.Errorf("request id %q not echoed", got)
	}
	req = httptest.NewRequest("GET", "/healthz", nil)
	req.Header.Set("X-Request-Id", "bad id with spaces")
	resp, _ = e.App.Test(req)
	if got := resp.Header.Get("X-Request-Id"); got == "" || strings.Contains(got, " ") {
		t.Errorf("request id %q", got)
	}
	r := e.Do("GET", "/api/v1/nothing-here", e.Alpha.Key, nil)
	apitest.WantError(t, r, 404, "route_not_found")
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("error Content-Type %q", ct)
	}
	if ct := e.Do("GET", "/api/v1/tags", e.Alpha.Key, nil).Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	apitest.WantError(t, e.Do("PATCH", "/api/v1/transactions", e.Alpha.Key, "{}"), 405, "method_not_allowed")
	if r := e.Do("GET", "/readyz", "", nil); r.Status != 200 {
		t.Errorf("readyz %d %s", r.Status, r.Body)
	}
	for _, p := range []string{"/api/v1/openapi.json", "/api/v1/openapi.yaml", "/api/docs"} {
		if r := e.Do("GET", p, "", nil); r.Status != 200 {
			t.Errorf("%s: %d", p, r.Status)
		}
	}
}

func TestOversizedRequests(t *testing.T) {
	e := apitest.NewEnv(t)
	base := e.Listen()
	// Only the head is sent: the server must refuse on Content-Length
	// alone, before reading 2 MB it would throw away.
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/transactions HTTP/1.1\r\nHost: x\r\nX-Api-Key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", e.Alpha.Key, 2<<20)
	req, _ := http.NewRequest("POST", base+"/api/v1/transactions", nil)
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	r := apitest.Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
	e.Validate(req, r)
	apitest.WantError(t, r, 413, "payload_too_large")

	req, _ = http.NewRequest("GET", base+"/api/v1/chats", nil)
	req.Header.Set("X-Api-Key", strings.Repeat("k", 20_000))
	r = e.Send(req)
	if r.Status != 431 && r.Status != 400 {
		t.Errorf("20 kB header: %d %s", r.Status, r.Body)
	}
	if r.Status >= 500 {
		t.Errorf("oversized header gave %d", r.Status)
	}
}

func TestRedisDownIs503(t *testing.T) {
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: time.Second})
	defer down.Close()
	e := apitest.NewEnv(t, func(o *api.Options) { o.Redis = down })
	for _, path := range []string{"/api/v1/chats", "/readyz"} {
		r := e.Do("GET", path, e.Alpha.Key, nil)
		apitest.WantError(t, r, 503, "service_unavailable")
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("%s: no Retry-After", path)
		}
	}
}

// TestAuthWatchResubscribes: when the watch's connection is dropped it
// falls back to reading the version from Redis, subscribes again by
// itself, and keeps taking announcements.
func TestAuthWatchResubscribes(t *testing.T) {
	if modelstest.Embedded() {
		t.Skip("the in-process Redis cannot drop a client's connection")
	}
	e := apitest.NewEnv(t)
	other := e.Instance(t)
	ctx := t.Context()
	newKey := func() (*models.APIKey, string) {
		k := &models.APIKey{UserID: e.Alpha.User.ID, Name: "phone", Scope: models.ScopeRead}
		secret, err := e.Store.CreateAPIKey(ctx, e.Alpha.Family.ID, k)
		if err != nil {
			t.Fatal(err)
		}
		if r := other.Do("GET", "/api/v1/accounts", secret, nil); r.Status != 200 {
			t.Fatalf("new key: %d", r.Status)
		}
		return k, secret
	}
	k, secret := newKey()
	if err := e.RDB.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.RevokeUserAPIKey(ctx, e.Alpha.Family.ID, e.Alpha.User.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	// Subscribed again or not, the revoke is seen: from the counter, or
	// from the announcement.
	refusedSoon(t, other, "/api/v1/accounts", secret)
	apitest.WaitLive(t, other.Opts.AuthWatch)
	k, secret = newKey()
	if err := e.Store.RevokeUserAPIKey(ctx, e.Alpha.Family.ID, e.Alpha.User.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	refusedSoon(t, other, "/api/v1/accounts", secret)
}

// refusedSoon waits, at most 2 s, for in to refuse key with a 401: a web
// process other than the one that made the change learns of it by
// announcement, within a millisecond or so.
func refusedSoon(t *testing.T, in *apitest.Env, path, key string) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		r := in.Do("GET", path, key, nil)
		if r.Status == 401 {
			apitest.WantError(t, r, 401, "unauthorized")
			return
		}
		if time.Since(start) > 2*time.Second {
			t.Fatalf("still %d 2 s after the change: %s", r.Status, r.Body)
		}
	}
}
