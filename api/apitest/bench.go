package apitest

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"coffer/api"
)

// BenchEnv is NewEnv without logging and with the rate limit off, so the
// numbers measure the request path itself.
func BenchEnv(b *testing.B) *Env {
	b.Helper()
	return NewEnv(b, func(o *api.Options) {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		o.APIRateLimitPerHour = 10_000_000
	})
}

func (e *Env) Bench(b *testing.B, method, path, key string, body func(i int) string, want int) {
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
		resp, err := e.App.Test(req, -1)
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

// BenchPage measures one screen for the session token: from the request
// to the last byte of HTML.
func (e *Env) BenchPage(b *testing.B, path, token string) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Cookie", "session="+token)
		resp, err := e.App.Test(req, -1)
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
