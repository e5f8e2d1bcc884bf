package rest_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"coffer/api"
	"coffer/api/apitest"
)

// FuzzCreateTransaction throws arbitrary bodies at POST /transactions: the
// answer is never a 500, always JSON of the documented shape (do checks it
// against the OpenAPI document), and a 4xx is an ErrorResponse.
func FuzzCreateTransaction(f *testing.F) {
	// The fuzz function may not log through f, so the service logs nowhere.
	e := apitest.NewEnv(f, func(o *api.Options) { o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil)) })
	acct := e.Alpha.Account.ID.String()
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
		e.T = t
		r := e.Do("POST", "/api/v1/transactions", e.Alpha.Key, body)
		if r.Status >= 500 {
			t.Fatalf("status %d for %q: %s", r.Status, body, r.Body)
		}
		if r.Status >= 400 {
			var m map[string]any
			if err := json.Unmarshal(r.Body, &m); err != nil || m["error"] == nil {
				t.Fatalf("not an ErrorResponse: %s", r.Body)
			}
		}
	})
}

// FuzzListTransactionsQuery throws arbitrary query strings at the list:
// a bad value is a 400, never a 500.
func FuzzListTransactionsQuery(f *testing.F) {
	e := apitest.NewEnv(f, func(o *api.Options) { o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil)) })
	for _, seed := range []string{
		"page=2&per_page=10", "page=0", "per_page=abc", "account_ids[]=" + e.Alpha.Account.ID.String(),
		"start_date=2024-01-01&end_date=2023-01-01", "min_amount=-1.5&max_amount=1e3", "search=%25_%5C", "type=income",
		"search=%FF%FE", "tag_ids[]=&tag_ids[]=x", "page=99999999999999999999",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, query string) {
		if strings.ContainsAny(query, " #") || !utf8.ValidString(query) {
			return // not something an HTTP client can put in a request line
		}
		if _, err := url.ParseRequestURI("/api/v1/transactions?" + query); err != nil {
			return
		}
		e.T = t
		r := e.Do("GET", "/api/v1/transactions?"+query, e.Alpha.Key, nil)
		if r.Status != 200 && r.Status != 400 {
			t.Fatalf("status %d for %q: %s", r.Status, query, r.Body)
		}
	})
}
