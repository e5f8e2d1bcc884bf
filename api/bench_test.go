package api_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"coffer/api"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// benchEnv is newEnv without logging and with the rate limit off, so the
// numbers measure the request path itself.
func benchEnv(b *testing.B) *env {
	b.Helper()
	return newEnv(b, func(o *api.Options) {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		o.APIRateLimitPerHour = 10_000_000
	})
}

func (e *env) bench(b *testing.B, method, path, key string, body func(i int) string, want int) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var rd io.Reader
		if body != nil {
			rd = strings.NewReader(body(i))
		}
		req := httptest.NewRequest(method, path, rd)
		req.Header.Set("X-Api-Key", key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := e.app.Test(req, -1)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

func BenchmarkCreateTransaction(b *testing.B) {
	e := benchEnv(b)
	acct := e.alpha.Account.ID.String()
	e.bench(b, "POST", "/api/v1/transactions", e.alpha.Key, func(i int) string {
		return fmt.Sprintf(`{"transaction":{"account_id":%q,"date":"2024-01-15","amount":"12.50","name":"Coffee","nature":"expense","external_id":"bench-%d"}}`, acct, i)
	}, 201)
}

func BenchmarkListTransactions(b *testing.B) {
	e := benchEnv(b)
	ctx := b.Context()
	for i := 0; i < 500; i++ {
		t := &models.Transaction{FamilyID: e.alpha.Family.ID, AccountID: e.alpha.Account.ID, Date: civil.Date(fmt.Sprintf("2024-01-%02d", i%28+1)),
			Amount: money.Amount(i * 1000), Currency: "USD", Name: fmt.Sprintf("item %d", i)}
		if _, _, err := e.store.CreateTransaction(ctx, t, nil); err != nil {
			b.Fatal(err)
		}
	}
	e.bench(b, "GET", "/api/v1/transactions?per_page=25&page=3", e.alpha.Key, nil, 200)
}

func BenchmarkListChats(b *testing.B) {
	e := benchEnv(b)
	ctx := b.Context()
	for i := 0; i < 1000; i++ {
		c := &models.Chat{FamilyID: e.alpha.Family.ID, UserID: e.alpha.User.ID, Title: fmt.Sprintf("chat %d", i)}
		if _, err := e.store.CreateChat(ctx, c, "hello"); err != nil {
			b.Fatal(err)
		}
	}
	e.bench(b, "GET", "/api/v1/chats?page=2", e.alpha.Key, nil, 200)
}

// BenchmarkSignedInPage renders a screen for a signed-in user: session
// lookup, role check and template.
func BenchmarkSignedInPage(b *testing.B) {
	e := benchEnv(b)
	u := e.alpha.User
	sess := &models.Session{UserID: u.ID, Method: models.MethodPassword}
	token, err := e.store.CreateSession(b.Context(), sess, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	e.benchPage(b, "/admin/users", token)
}

// benchPage measures one screen for the session token: from the request
// to the last byte of HTML.
func (e *env) benchPage(b *testing.B, path, token string) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Cookie", "session="+token)
		resp, err := e.app.Test(req, -1)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}
