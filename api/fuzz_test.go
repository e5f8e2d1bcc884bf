package api_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"coffer/api"
)

// FuzzCreateTransaction throws arbitrary bodies at POST /transactions: the
// answer is never a 500, always JSON of the documented shape (do checks it
// against the OpenAPI document), and a 4xx is an ErrorResponse.
func FuzzCreateTransaction(f *testing.F) {
	// The fuzz function may not log through f, so the service logs nowhere.
	e := newEnv(f, func(o *api.Options) { o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil)) })
	acct := e.alpha.Account.ID.String()
	for _, seed := range []string{
		`{"transaction":{"account_id":"` + acct + `","date":"2024-01-01","amount":"12.50","name":"x"}}`,
		`{"transaction":{"account_id":"` + acct + `","date":"2024-01-01","amount":1e3,"name":"x","nature":"income"}}`,
		`{"transaction":{"account_id":"` + acct + `","external_id":12,"source":"s","tag_ids":["x"]}}`,
		`{"transaction":{"account_id":null,"date":[],"amount":{},"name":5,"currency":"usd"}}`,
		`{"transaction":"x"}`, `[]`, `null`, `{`, "\xff", `{"transaction":{"amount":"-0.0001","date":"2024-02-29"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		e.t = t
		r := e.do("POST", "/api/v1/transactions", e.alpha.Key, body)
		if r.status >= 500 {
			t.Fatalf("status %d for %q: %s", r.status, body, r.body)
		}
		if r.status >= 400 {
			var m map[string]any
			if err := json.Unmarshal(r.body, &m); err != nil || m["error"] == nil {
				t.Fatalf("not an ErrorResponse: %s", r.body)
			}
		}
	})
}
