package rest_test

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"testing"

	"coffer/api/apitest"
	"coffer/models/secret"
)

// BenchmarkAccountsBearerVsKey measures GET /api/v1/accounts with an
// OAuth access token and with an API key of the same user, in one run, so
// that their ratio can be read off (issue 13: a bearer call costs no more
// than a key's).
func BenchmarkAccountsBearerVsKey(b *testing.B) {
	e := apitest.BenchEnv(b)
	h, err := hashFor("correct horse battery")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.Store.DB().NewUpdate().Table("users").Set("password_hash = ?", h).Where("id = ?", e.Alpha.User.ID).Exec(b.Context()); err != nil {
		b.Fatal(err)
	}
	r := e.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.Alpha.User.Email, "password": "correct horse battery", "device": apitest.Phone})
	if r.Status != 200 {
		b.Fatalf("login: %d %s", r.Status, r.Body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := jsonUnmarshal(r.Body, &tok); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, header, value string }{
		{"api_key", "X-Api-Key", e.Alpha.Key},
		{"bearer", "Authorization", "Bearer " + tok.AccessToken},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("GET", "/api/v1/accounts", nil)
				req.Header.Set(c.header, c.value)
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
		})
	}
}

func hashFor(pw string) (string, error) {
	return secret.HashPassword(pw, secret.Argon2Params{MemoryKiB: 64, Time: 1, Threads: 1})
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
