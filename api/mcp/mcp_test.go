package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"coffer/api/apitest"
	"coffer/models"
)

// mcpLedger gives alpha's Checking account a salary and a coffee, and
// returns the coffee.
func mcpLedger(t *testing.T, e *apitest.Env) *models.Transaction {
	t.Helper()
	ctx := t.Context()
	var coffee *models.Transaction
	for _, tx := range []models.Transaction{
		{FamilyID: e.Alpha.Family.ID, AccountID: e.Alpha.Account.ID, Date: "2026-10-02", Amount: -25_000_000, Currency: "USD", Name: "Salary"},
		{FamilyID: e.Alpha.Family.ID, AccountID: e.Alpha.Account.ID, Date: "2026-10-05", Amount: 123_4500, Currency: "USD", Name: "Coffee beans"},
	} {
		row, _, err := e.Store.CreateTransaction(ctx, &tx, nil)
		if err != nil {
			t.Fatal(err)
		}
		coffee = row
	}
	if err := e.Store.RecalculateBalance(ctx, e.Alpha.Family.ID, e.Alpha.Account.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.CreateMerchant(ctx, &models.Merchant{FamilyID: e.Alpha.Family.ID, Name: "Roastery"}); err != nil {
		t.Fatal(err)
	}
	return coffee
}

// oauthGrant runs the code + PKCE flow for alpha's user with scope and
// returns the client's configuration and its first token.
func oauthGrant(t *testing.T, e *apitest.Env, ctx context.Context, base, scope string) (*oauth2.Config, *oauth2.Token) {
	t.Helper()
	clientID := apitest.RegisterClient(t, ctx, base, "http://127.0.0.1/callback")
	conf := &oauth2.Config{ClientID: clientID, RedirectURL: "http://127.0.0.1:49152/callback", Scopes: []string{scope},
		Endpoint: oauth2.Endpoint{AuthURL: base + "/oauth/authorize", TokenURL: base + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	b := e.Browser(t)
	if r := b.Login(e.Alpha.User.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("sign-in: %d", r.Status)
	}
	verifier := oauth2.GenerateVerifier()
	tok, err := conf.Exchange(ctx, apitest.Authorize(t, b, conf, verifier), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	return conf, tok
}

// swapSource is the token source of an MCP client's http.Client, which a
// test can replace between calls (to hand the oauth2 client an expired
// token, which it then refreshes itself).
type swapSource struct {
	mu   sync.Mutex
	ts   oauth2.TokenSource
	seen []string // the access tokens sent
}

func (s *swapSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, err := s.ts.Token()
	if err == nil && (len(s.seen) == 0 || s.seen[len(s.seen)-1] != tok.AccessToken) {
		s.seen = append(s.seen, tok.AccessToken)
	}
	return tok, err
}

func (s *swapSource) set(ts oauth2.TokenSource) { s.mu.Lock(); s.ts = ts; s.mu.Unlock() }

// headerTransport adds a header to every request (an API key).
type headerTransport struct {
	name, value string
	base        http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return h.base.RoundTrip(r)
}

// mcpConnect connects the SDK's own client to base's /mcp over hc.
func mcpConnect(t *testing.T, ctx context.Context, base string, hc *http.Client) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "coffer-test", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// toolNames lists the tools the server offers.
func toolNames(t *testing.T, ctx context.Context, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		if m, ok := tool.InputSchema.(map[string]any); !ok || m["type"] != "object" || tool.Description == "" {
			t.Errorf("tool %s: schema %v", tool.Name, tool.InputSchema)
		}
		names = append(names, tool.Name)
	}
	return names
}

// callTool calls a tool and returns its JSON result and whether it is a
// tool error; a JSON-RPC error fails the test.
func callTool(t *testing.T, ctx context.Context, cs *sdk.ClientSession, name string, args any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d contents", name, len(res.Content))
	}
	text, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("%s: content %T", name, res.Content[0])
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text.Text), &m); err != nil {
		t.Fatalf("%s: result is not a JSON object: %s", name, text.Text)
	}
	return m, res.IsError
}

// wantTool calls a tool that must succeed.
func wantTool(t *testing.T, ctx context.Context, cs *sdk.ClientSession, name string, args any) map[string]any {
	t.Helper()
	m, isErr := callTool(t, ctx, cs, name, args)
	if isErr {
		t.Fatalf("%s: tool error %v", name, m)
	}
	return m
}

// first is the first element of a result's list.
func first(t *testing.T, m map[string]any, key string) map[string]any {
	t.Helper()
	list, _ := m[key].([]any)
	if len(list) == 0 {
		t.Fatalf("%s: empty in %v", key, m)
	}
	return list[0].(map[string]any)
}

// names is the "name" of each element of a result's list.
func names(m map[string]any, key string) []string {
	var out []string
	list, _ := m[key].([]any)
	for _, v := range list {
		out = append(out, v.(map[string]any)["name"].(string))
	}
	return out
}

// TestMCPOverOAuth: an MCP client registered dynamically gets a
// read_write token by the real code + PKCE flow, connects with the
// official SDK's client over HTTP, lists the tools and calls each one
// against the ledger (the forecast and the upcoming bills in
// TestMCPForecastAndUpcoming); half way, the oauth2 client refreshes its
// token and the calls go on with the new one.
func TestMCPOverOAuth(t *testing.T) {
	e := apitest.NewEnv(t, apitest.TrustLoopback)
	base := e.Listen()
	ctx := apitest.OAuthClientCtx(t)
	coffee := mcpLedger(t, e)
	conf, tok := oauthGrant(t, e, ctx, base, models.ScopeReadWrite)

	src := &swapSource{ts: conf.TokenSource(ctx, tok)}
	hc := &http.Client{Transport: &oauth2.Transport{Source: src, Base: ctx.Value(oauth2.HTTPClient).(*http.Client).Transport}}
	cs := mcpConnect(t, ctx, base, hc)
	got := toolNames(t, ctx, cs)
	want := []string{"get_accounts", "get_transactions", "get_balance_sheet", "get_income_statement", "get_categories",
		"get_merchants", "get_tags", "get_forecast", "get_upcoming_bills", "update_transaction", "create_category", "create_tag"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("tools %v", got)
	}

	acc := first(t, wantTool(t, ctx, cs, "get_accounts", nil), "accounts")
	if acc["name"] != "Checking" || acc["balance"] != "$2,376.55" || acc["id"] != e.Alpha.Account.ID.String() {
		t.Fatalf("accounts %v", acc)
	}
	txs := wantTool(t, ctx, cs, "get_transactions", map[string]any{"search": "coffee", "start_date": "2026-10-01",
		"end_date": "2026-10-31", "account_ids": []string{e.Alpha.Account.ID.String()}, "page": 1, "page_size": 1})
	if tx := first(t, txs, "transactions"); txs["total_results"] != 1.0 || tx["amount"] != "123.45" || tx["formatted_amount"] != "$123.45" || tx["id"] != coffee.ID.String() {
		t.Fatalf("transactions %v", txs)
	}
	if page := wantTool(t, ctx, cs, "get_transactions", map[string]any{"page": 2, "page_size": 1}); page["total_pages"] != 2.0 ||
		first(t, page, "transactions")["name"] != "Salary" {
		t.Fatalf("page 2 %v", page)
	}
	if bs := wantTool(t, ctx, cs, "get_balance_sheet", map[string]any{}); bs["net_worth"] != "$2,376.55" {
		t.Fatalf("balance sheet %v", bs)
	}
	is := wantTool(t, ctx, cs, "get_income_statement", map[string]any{"start_date": "2026-10-01", "end_date": "2026-10-31"})
	if is["net"] != "$2,376.55" || is["expense"].(map[string]any)["total"] != "$123.45" {
		t.Fatalf("income statement %v", is)
	}
	if m := wantTool(t, ctx, cs, "get_merchants", nil); !slices.Equal(names(m, "merchants"), []string{"Roastery"}) {
		t.Fatalf("merchants %v", m)
	}
	if m := wantTool(t, ctx, cs, "get_tags", nil); len(names(m, "tags")) != 0 {
		t.Fatalf("tags %v", m)
	}
	if m := wantTool(t, ctx, cs, "get_categories", nil); slices.Contains(names(m, "categories"), "Groceries") {
		t.Fatalf("categories %v", m)
	}
	cat := wantTool(t, ctx, cs, "create_category", map[string]any{"name": "Groceries"})["category"].(map[string]any)
	tag := wantTool(t, ctx, cs, "create_tag", map[string]any{"name": "from mcp"})["tag"].(map[string]any)
	wantTool(t, ctx, cs, "update_transaction", map[string]any{"id": coffee.ID.String(), "name": "Espresso beans",
		"category_id": cat["id"], "tag_ids": []any{tag["id"]}})
	row, err := e.Store.Transaction(t.Context(), e.Alpha.Family.ID, coffee.ID)
	if err != nil || row.Name != "Espresso beans" || row.CategoryID == nil || row.CategoryID.String() != cat["id"] || row.Amount != 123_4500 {
		t.Fatalf("row after update_transaction: %+v %v", row, err)
	}

	// The access token has run out, as far as the client knows: it
	// refreshes with its refresh token, and the server rotates both.
	expired := *tok
	expired.Expiry = time.Now().Add(-time.Minute)
	src.set(conf.TokenSource(ctx, &expired))
	if m := wantTool(t, ctx, cs, "get_categories", nil); !slices.Contains(names(m, "categories"), "Groceries") {
		t.Fatalf("categories after the refresh %v", m)
	}
	if len(src.seen) != 2 || src.seen[1] == tok.AccessToken {
		t.Fatalf("no refresh: %d tokens sent", len(src.seen))
	}
	if tags := wantTool(t, ctx, cs, "get_tags", nil); !slices.Contains(names(tags, "tags"), "from mcp") {
		t.Fatalf("tags %v", tags)
	}
	txs = wantTool(t, ctx, cs, "get_transactions", map[string]any{"categories": []string{"Groceries"}, "tags": []string{"from mcp"}})
	if tx := first(t, txs, "transactions"); txs["total_results"] != 1.0 || tx["name"] != "Espresso beans" {
		t.Fatalf("by category after the refresh %v", txs)
	}
}
