package rest_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"coffer/api"
	"coffer/api/apitest"
)

// FuzzBulkCreateTransactions throws arbitrary bodies at POST
// /transactions/bulk: never a 500; a 200 has one result per item, in
// order; a 4xx is an ErrorResponse (do checks both against the OpenAPI
// document).
func FuzzBulkCreateTransactions(f *testing.F) {
	e := apitest.NewEnv(f, func(o *api.Options) { o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil)) })
	acct := e.Alpha.Account.ID.String()
	item := `{"account_id":"` + acct + `","date":"2024-01-01","amount":"12.50","name":"x","external_id":"k"}`
	for _, seed := range []string{
		`{"transactions":[` + item + `]}`,
		`{"transactions":[` + item + `,` + item + `,1,null,"x",[],{}]}`,
		`{"transactions":[{"account_id":"` + e.Beta.Account.ID.String() + `","date":"2024-02-30","amount":1e3}]}`,
		`{"transactions":[]}`, `{"transactions":{}}`, `{"transactions":null}`, `[]`, `{`, "\xff",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		e.T = t
		r := e.Do("POST", "/api/v1/transactions/bulk", e.Alpha.Key, body)
		switch {
		case r.Status >= 500:
			t.Fatalf("status %d for %q: %s", r.Status, body, r.Body)
		case r.Status == 200:
			var req struct{ Transactions []json.RawMessage }
			var res struct{ Results []struct{ Index int } }
			if json.Unmarshal(body, &req) != nil || json.Unmarshal(r.Body, &res) != nil || len(res.Results) != len(req.Transactions) {
				t.Fatalf("%d results for %q: %s", len(res.Results), body, r.Body)
			}
			for i, x := range res.Results {
				if x.Index != i {
					t.Fatalf("result %d has index %d", i, x.Index)
				}
			}
		case r.Status >= 400:
			var m map[string]any
			if err := json.Unmarshal(r.Body, &m); err != nil || m["error"] == nil {
				t.Fatalf("not an ErrorResponse: %s", r.Body)
			}
		}
	})
}
