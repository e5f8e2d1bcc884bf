package mcp_test

import (
	"net/http"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
)

// TestMCPForecastAndUpcoming: over the SDK's client with an API key,
// get_forecast gives the figures GET /api/v1/forecast gives, and
// get_upcoming_bills the family's coming bill; beta's key sees neither
// alpha's bill nor its account.
func TestMCPForecastAndUpcoming(t *testing.T) {
	e := apitest.NewEnv(t, apitest.TrustLoopback)
	base := e.Listen()
	ctx := apitest.OAuthClientCtx(t)
	mcpLedger(t, e) // Checking: $2,376.55
	// Dated from the real clock, as the server's: due in five days, once
	// in the coming 30.
	due := time.Now().UTC().AddDate(0, 0, 5)
	rent := &models.RecurringTransaction{FamilyID: e.Alpha.Family.ID, AccountID: &e.Alpha.Account.ID, Name: "Rent",
		Amount: 1_000_0000, Currency: "USD", Cadence: "monthly", ExpectedDay: due.Day(), NextDate: civil.DateOf(due),
		Status: models.RecurringActive}
	if err := e.Store.CreateRecurringTransaction(t.Context(), rent); err != nil {
		t.Fatal(err)
	}
	plain := ctx.Value(oauth2.HTTPClient).(*http.Client).Transport
	cs := mcpConnect(t, ctx, base, &http.Client{Transport: headerTransport{"X-Api-Key", e.Alpha.Key, plain}})

	api := e.Do("GET", "/api/v1/forecast?days=20", e.Alpha.Key, nil).WantJSON(t, http.StatusOK)
	f := wantTool(t, ctx, cs, "get_forecast", map[string]any{"days": 20})
	lowest, apiLowest := f["lowest"].(map[string]any), api["lowest"].(map[string]any)
	if lowest["date"] != apiLowest["date"] || lowest["balance"] != apiLowest["amount"].(map[string]any)["formatted"] ||
		lowest["balance"] != "$1,376.55" {
		t.Fatalf("lowest %v, API's %v", lowest, apiLowest)
	}
	safe := f["safe_to_spend"].(map[string]any)
	if safe["amount"] != api["safe_to_spend"].(map[string]any)["amount"].(map[string]any)["formatted"] || safe["until"] != nil {
		t.Fatalf("safe to spend %v, API's %v", safe, api["safe_to_spend"])
	}
	if acc := first(t, f, "accounts"); acc["id"] != e.Alpha.Account.ID.String() || len(acc["balances"].([]any)) != 3 {
		t.Fatalf("accounts %v", f["accounts"])
	}

	up := wantTool(t, ctx, cs, "get_upcoming_bills", nil)
	if b := first(t, up, "upcoming"); len(up["upcoming"].([]any)) != 1 || b["name"] != "Rent" || b["date"] != string(civil.DateOf(due)) ||
		b["formatted_amount"] != "$1,000.00" || b["kind"] != "bill" || b["account"] != "Checking" {
		t.Fatalf("upcoming %v", up)
	}
	if m, isErr := callTool(t, ctx, cs, "get_upcoming_bills", map[string]any{"days": 400}); !isErr || m["error"] != "validation_failed" {
		t.Fatalf("400 days: %v", m)
	}

	beta := mcpConnect(t, ctx, base, &http.Client{Transport: headerTransport{"X-Api-Key", e.Beta.Key, plain}})
	if up := wantTool(t, ctx, beta, "get_upcoming_bills", nil); len(up["upcoming"].([]any)) != 0 {
		t.Fatalf("alpha's bill from beta: %v", up)
	}
	if m, isErr := callTool(t, ctx, beta, "get_forecast", map[string]any{"account_id": e.Alpha.Account.ID.String()}); !isErr || m["error"] != "not_found" {
		t.Fatalf("alpha's account from beta: %v", m)
	}
}
