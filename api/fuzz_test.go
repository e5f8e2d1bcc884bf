package api_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"coffer/api"
	"coffer/models"
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

// FuzzListTransactionsQuery throws arbitrary query strings at the list:
// a bad value is a 400, never a 500.
func FuzzListTransactionsQuery(f *testing.F) {
	e := newEnv(f, func(o *api.Options) { o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil)) })
	for _, seed := range []string{
		"page=2&per_page=10", "page=0", "per_page=abc", "account_ids[]=" + e.alpha.Account.ID.String(),
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
		e.t = t
		r := e.do("GET", "/api/v1/transactions?"+query, e.alpha.Key, nil)
		if r.status != 200 && r.status != 400 {
			t.Fatalf("status %d for %q: %s", r.status, query, r.body)
		}
	})
}

// FuzzScreenQueries sends any query string to the household screens that
// read one (the transaction filters, the account register, the report
// period, the budget month): the answer is a page or a 404, never a 500.
func FuzzScreenQueries(f *testing.F) {
	e := newEnv(f, func(o *api.Options) { o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil)) })
	u := e.alpha.User
	token, err := e.store.CreateSession(f.Context(), &models.Session{UserID: u.ID, Method: models.MethodPassword}, time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	acct := e.alpha.Account.ID.String()
	for _, seed := range []string{
		"q=%25_&min=-3&max=1e3", "from=2024-13-01&to=2024-01-01", "account_id=x&tag_id=" + acct, "page=99999999999",
		"type=sideways", "q=%FF%FE", "month=0000-00", "month=9999-12", "from=0001-01-01&to=9999-12-31",
	} {
		f.Add(0, seed)
	}
	paths := []string{"/transactions", "/accounts/" + acct, "/reports", "/budgets", "/reports/cash_flow.csv"}
	f.Fuzz(func(t *testing.T, which int, query string) {
		if strings.ContainsAny(query, " #") || !utf8.ValidString(query) {
			return
		}
		path := paths[(which%len(paths)+len(paths))%len(paths)] + "?" + query
		if _, err := url.ParseRequestURI(path); err != nil {
			return
		}
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Cookie", "session="+token)
		resp, err := e.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 && resp.StatusCode != 404 {
			t.Fatalf("status %d for %s", resp.StatusCode, path)
		}
	})
}
