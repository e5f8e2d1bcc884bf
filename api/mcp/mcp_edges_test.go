package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/models"
)

const mcpChallenge = `Bearer resource_metadata="http://example.com/.well-known/oauth-protected-resource/mcp"`

// mcpPost sends one raw request to /mcp (body as is) with the headers of
// a Streamable HTTP client and the extra ones given.
func mcpPost(t *testing.T, e *apitest.Env, method, body string, header map[string]string) apitest.Response {
	t.Helper()
	req := httptest.NewRequest(method, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := e.App.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	r := apitest.Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
	if r.Status >= 500 {
		t.Fatalf("%s /mcp %q: %d %s", method, body, r.Status, out)
	}
	apitest.NoLeak(t, r)
	return r
}

// wantRPCError checks a JSON-RPC error response of the status and code.
func wantRPCError(t *testing.T, r apitest.Response, status, code int) {
	t.Helper()
	var m struct {
		JSONRPC string `json:"jsonrpc"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if r.Status != status || json.Unmarshal(r.Body, &m) != nil || m.JSONRPC != "2.0" || m.Error == nil ||
		m.Error.Code != code || m.Error.Message == "" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("want a JSON-RPC error %d with status %d, got %d %s %s", code, status, r.Status, r.Header.Get("Content-Type"), r.Body)
	}
}

// wantUnauthorized checks the 401 of /mcp: the ErrorResponse, and a
// challenge that names the resource metadata.
func wantUnauthorized(t *testing.T, r apitest.Response, exact bool) {
	t.Helper()
	apitest.WantError(t, r, 401, "unauthorized")
	h := r.Header.Get("WWW-Authenticate")
	if exact && h != mcpChallenge || !exact && !strings.HasPrefix(h, mcpChallenge+", ") {
		t.Fatalf("WWW-Authenticate %q", h)
	}
}

// TestMCPUnauthorized: no credential, a forged, revoked or bad one, and
// the token of a suspended user all get 401 with the challenge of RFC
// 9728 §5.1.
func TestMCPUnauthorized(t *testing.T) {
	e := apitest.NewEnv(t)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	wantUnauthorized(t, mcpPost(t, e, "POST", list, nil), true)
	wantUnauthorized(t, mcpPost(t, e, "GET", "", nil), true)
	r := mcpPost(t, e, "POST", list, map[string]string{"Authorization": "Bearer ory_at_forged.token"})
	wantUnauthorized(t, r, false)
	if h := r.Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="invalid_token"`) {
		t.Fatalf("forged token: %s", h)
	}
	wantUnauthorized(t, mcpPost(t, e, "POST", list, map[string]string{"X-Api-Key": "cof_nope"}), true)

	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	access, _ := apitest.MobileLogin(t, e, e.Alpha.User, "correct horse battery")
	if r := mcpPost(t, e, "POST", list, apitest.Bearer(access)); r.Status != 200 {
		t.Fatalf("a good token: %d %s", r.Status, r.Body)
	}
	b := e.Browser(t)
	if r := b.Send("POST", "/oauth/revoke", url.Values{"token": {access}, "client_id": {"coffer-mobile"}}, nil); r.Status != 200 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	wantUnauthorized(t, mcpPost(t, e, "POST", list, apitest.Bearer(access)), false)

	access, _ = apitest.MobileLogin(t, e, e.Alpha.User, "correct horse battery")
	if r := mcpPost(t, e, "POST", list, apitest.Bearer(access)); r.Status != 200 {
		t.Fatalf("a good token: %d %s", r.Status, r.Body)
	}
	admin := &models.User{FamilyID: e.Alpha.Family.ID, Email: "admin-" + e.Alpha.User.Email, Role: models.RoleAdmin}
	if err := e.Store.CreateUser(t.Context(), admin); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.SuspendUser(t.Context(), models.AdminChange{ActorID: admin.ID, ActorRole: models.RoleAdmin,
		ActorFamilyID: e.Alpha.Family.ID, TargetID: e.Alpha.User.ID}); err != nil {
		t.Fatal(err)
	}
	wantUnauthorized(t, mcpPost(t, e, "POST", list, apitest.Bearer(access)), false)
	wantUnauthorized(t, mcpPost(t, e, "POST", list, map[string]string{"X-Api-Key": e.Alpha.Key}), true)
}

// TestMCPExpiredToken: an access token stops at its expiry on /mcp too,
// though this process has it cached. The clocks move; nothing sleeps.
func TestMCPExpiredToken(t *testing.T) {
	e, skew := apitest.ShortTokenEnv(t)
	access, _ := apitest.MobileLogin(t, e, e.Alpha.User, "correct horse battery")
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	if r := mcpPost(t, e, "POST", list, apitest.Bearer(access)); r.Status != 200 {
		t.Fatalf("before expiry: %d %s", r.Status, r.Body)
	}
	skew.Store(int64(4 * time.Second))
	wantUnauthorized(t, mcpPost(t, e, "POST", list, apitest.Bearer(access)), false)
}

// TestMCPBadRequests: a body that is not JSON-RPC is a JSON-RPC error
// with a 4xx; an unknown tool or method is a JSON-RPC error; arguments of
// the wrong type are a tool error the model can read. Nothing is a 500.
func TestMCPBadRequests(t *testing.T) {
	e := apitest.NewEnv(t)
	key := map[string]string{"X-Api-Key": e.Alpha.Key}
	for _, c := range []struct {
		name, method, body string
		header             map[string]string
		status, code       int
	}{
		{"not JSON", "POST", "this is not json", nil, 400, -32700},
		{"truncated", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/li`, nil, 400, -32700},
		{"array of garbage", "POST", `[1, "x", {}]`, nil, 400, -32600},
		{"a number", "POST", `42`, nil, 400, -32600},
		{"no method", "POST", `{"jsonrpc":"2.0","id":1}`, nil, 400, -32600},
		{"a response", "POST", `{"jsonrpc":"2.0","id":1,"result":{}}`, nil, 400, -32600},
		{"batch without a method", "POST", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2}]`, nil, 400, -32600},
		{"empty batch", "POST", `[]`, nil, 400, -32600},
		{"batch of good calls", "POST", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`, nil, 400, -32600},
		{"batch of one", "POST", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, nil, 400, -32600},
		{"empty", "POST", ``, nil, 400, -32700},
		{"not JSON-RPC 2.0", "POST", `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, nil, 400, -32600},
		{"no Accept", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Accept": ""}, 400, -32600},
		{"form body", "POST", `a=b`, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, -32600},
		{"GET", "GET", ``, nil, 405, -32600},
		{"DELETE", "DELETE", ``, nil, 405, -32600},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := map[string]string{"X-Api-Key": e.Alpha.Key}
			for k, v := range c.header {
				h[k] = v
			}
			wantRPCError(t, mcpPost(t, e, c.method, c.body, h), c.status, c.code)
		})
	}

	call := func(params string) apitest.Response {
		t.Helper()
		return mcpPost(t, e, "POST", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":`+params+`}`, key)
	}
	wantRPCError(t, call(`{"name":"transfer_everything","arguments":{}}`), 200, -32602)
	wantRPCError(t, mcpPost(t, e, "POST", `{"jsonrpc":"2.0","id":1,"method":"no/such"}`, key), 400, -32600)
	for _, args := range []string{`{"page_size":"many"}`, `{"page":"two"}`, `{"account_ids":"all"}`, `"everything"`, `[1]`,
		`{"start_date":"2026-02-30"}`} {
		r := call(`{"name":"get_transactions","arguments":` + args + `}`)
		var m struct {
			Result struct {
				IsError bool `json:"isError"`
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if r.Status != 200 || json.Unmarshal(r.Body, &m) != nil || !m.Result.IsError || len(m.Result.Content) != 1 ||
			!strings.Contains(m.Result.Content[0].Text, `"error":"invalid_`) {
			t.Fatalf("arguments %s: %d %s", args, r.Status, r.Body)
		}
	}
}

// TestMCPScopes: a read token is offered the read tools only, and a
// write tool called anyway is an unknown tool that changes nothing; an
// API key in X-Api-Key works like a token of its scope.
func TestMCPScopes(t *testing.T) {
	e := apitest.NewEnv(t, apitest.TrustLoopback)
	base := e.Listen()
	ctx := apitest.OAuthClientCtx(t)
	coffee := mcpLedger(t, e)
	conf, tok := oauthGrant(t, e, ctx, base, models.ScopeRead)
	reads := []string{"get_accounts", "get_transactions", "get_balance_sheet", "get_income_statement", "get_categories",
		"get_merchants", "get_tags", "get_forecast", "get_upcoming_bills"}
	plain := ctx.Value(oauth2.HTTPClient).(*http.Client).Transport

	cs := mcpConnect(t, ctx, base, &http.Client{Transport: &oauth2.Transport{Source: conf.TokenSource(ctx, tok), Base: plain}})
	got := toolNames(t, ctx, cs)
	slices.Sort(got)
	slices.Sort(reads)
	if !slices.Equal(got, reads) {
		t.Fatalf("read token's tools %v", got)
	}
	for name, args := range map[string]any{
		"update_transaction": map[string]any{"id": coffee.ID.String(), "name": "Hacked"},
		"create_tag":         map[string]any{"name": "nope"},
		"create_category":    map[string]any{"name": "nope"},
	} {
		if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Fatalf("%s with a read token: %v", name, err)
		}
	}
	row, err := e.Store.Transaction(t.Context(), e.Alpha.Family.ID, coffee.ID)
	if err != nil || row.Name != "Coffee beans" {
		t.Fatalf("row %+v %v", row, err)
	}
	if tags, _ := e.Store.Tags(t.Context(), e.Alpha.Family.ID); len(tags) != 0 {
		t.Fatalf("tags %v", tags)
	}
	if acc := first(t, wantTool(t, ctx, cs, "get_accounts", nil), "accounts"); acc["balance"] != "$2,376.55" {
		t.Fatalf("accounts %v", acc)
	}

	// API keys: the read key sees the read tools, the read_write key all.
	for key, want := range map[string]int{e.Alpha.ReadKey: 9, e.Alpha.Key: 12} {
		cs := mcpConnect(t, ctx, base, &http.Client{Transport: headerTransport{"X-Api-Key", key, plain}})
		if got := toolNames(t, ctx, cs); len(got) != want {
			t.Fatalf("key's tools %v", got)
		}
	}
	cs = mcpConnect(t, ctx, base, &http.Client{Transport: headerTransport{"X-Api-Key", e.Alpha.Key, plain}})
	wantTool(t, ctx, cs, "create_tag", map[string]any{"name": "by key"})
	if tags, _ := e.Store.Tags(t.Context(), e.Alpha.Family.ID); len(tags) != 1 || tags[0].Name != "by key" {
		t.Fatalf("tags %v", tags)
	}
}

// TestMCPFamilyIsolation: the tools act on the credential's family only;
// another family's ids find nothing and change nothing.
func TestMCPFamilyIsolation(t *testing.T) {
	e := apitest.NewEnv(t, apitest.TrustLoopback)
	base := e.Listen()
	ctx := apitest.OAuthClientCtx(t)
	coffee := mcpLedger(t, e)
	apitest.SetPassword(t, e, e.Beta.User, "correct horse battery")
	access, _ := apitest.MobileLogin(t, e, e.Beta.User, "correct horse battery")
	plain := ctx.Value(oauth2.HTTPClient).(*http.Client).Transport
	for _, hc := range []*http.Client{
		{Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: access}), Base: plain}},
		{Transport: headerTransport{"X-Api-Key", e.Beta.Key, plain}},
	} {
		cs := mcpConnect(t, ctx, base, hc)
		if acc := first(t, wantTool(t, ctx, cs, "get_accounts", nil), "accounts"); acc["id"] != e.Beta.Account.ID.String() {
			t.Fatalf("accounts %v", acc)
		}
		m, isErr := callTool(t, ctx, cs, "get_transactions", map[string]any{"account_ids": []string{e.Alpha.Account.ID.String()}})
		if !isErr && m["total_results"] != 0.0 || strings.Contains(mustJSON(t, m), "Coffee") {
			t.Fatalf("alpha's account from beta: %v", m)
		}
		if m := wantTool(t, ctx, cs, "get_transactions", map[string]any{"search": "coffee"}); m["total_results"] != 0.0 {
			t.Fatalf("search from beta: %v", m)
		}
		m, isErr = callTool(t, ctx, cs, "update_transaction", map[string]any{"id": coffee.ID.String(), "name": "Stolen"})
		if !isErr || m["error"] != "not_found" {
			t.Fatalf("alpha's transaction from beta: %v", m)
		}
		if bs := wantTool(t, ctx, cs, "get_balance_sheet", nil); bs["net_worth"] != "$0.00" {
			t.Fatalf("beta's balance sheet %v", bs)
		}
	}
	row, err := e.Store.Transaction(t.Context(), e.Alpha.Family.ID, coffee.ID)
	if err != nil || row.Name != "Coffee beans" {
		t.Fatalf("row %+v %v", row, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestMCPRateLimit: calls on /mcp count against the credential's hourly
// limit like the API's, with the same 429.
func TestMCPRateLimit(t *testing.T) {
	e := apitest.NewEnv(t, func(o *api.Options) { o.APIRateLimitPerHour = 2 })
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	key := map[string]string{"X-Api-Key": e.Alpha.Key}
	for i := range 2 {
		if r := mcpPost(t, e, "POST", list, key); r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "2" {
			t.Fatalf("call %d: %d %v", i, r.Status, r.Header)
		}
	}
	r := mcpPost(t, e, "POST", list, key)
	apitest.WantError(t, r, 429, "rate_limited")
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
}
