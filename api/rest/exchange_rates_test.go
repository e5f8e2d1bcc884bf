package rest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// fetched stores instance rates of EUR in USD, as the rates job does.
func fetched(t *testing.T, e *apitest.Env, days map[string]string) {
	t.Helper()
	for day, text := range days {
		r, err := money.ParseRate(text)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Store.SaveFetchedRates(context.Background(), "EUR", "USD", civil.Date(day), civil.Date(day),
			[]models.DayRate{{Date: civil.Date(day), Rate: r}}); err != nil {
			t.Fatal(err)
		}
	}
}

func rateList(t *testing.T, e *apitest.Env, path, key string) []map[string]any {
	t.Helper()
	body := e.Do("GET", path, key, nil).WantJSON(t, 200)
	var out []map[string]any
	for _, r := range body["exchange_rates"].([]any) {
		out = append(out, r.(map[string]any))
	}
	if p := body["pagination"].(map[string]any); int(p["total_count"].(float64)) < len(out) {
		t.Fatalf("%s: pagination %v for %d rows", path, p, len(out))
	}
	return out
}

// TestExchangeRatesCreate: the family's own rate is an upsert on (from,
// to, date), 201 then 200 with the same id, in the reference's shape.
func TestExchangeRatesCreate(t *testing.T) {
	e := apitest.NewEnv(t)
	body := map[string]any{"from": "chf", "to": "usd", "date": "2026-06-15", "rate": "1.12"}
	first := e.Do("POST", "/api/v1/exchange_rates", e.Alpha.Key, body).WantJSON(t, 201)
	if first["from_currency"] != "CHF" || first["to_currency"] != "USD" || first["date"] != "2026-06-15" || first["rate"] != "1.12" ||
		first["source"] != "manual" {
		t.Fatalf("created %v", first)
	}
	body["rate"] = 1.15 // a JSON number works too
	again := e.Do("POST", "/api/v1/exchange_rates", e.Alpha.Key, body).WantJSON(t, 200)
	if again["id"] != first["id"] || again["rate"] != "1.15" || again["created_at"] != first["created_at"] {
		t.Fatalf("again %v, first %v", again, first)
	}
	if rows := rateList(t, e, "/api/v1/exchange_rates", e.Alpha.Key); len(rows) != 1 || rows[0]["rate"] != "1.15" {
		t.Fatalf("listed %v", rows)
	}
	got := e.Do("GET", "/api/v1/exchange_rates/"+first["id"].(string), e.Alpha.ReadKey, nil).WantJSON(t, 200)
	if got["id"] != first["id"] || got["rate"] != "1.15" {
		t.Fatalf("shown %v", got)
	}
}

// TestExchangeRatesBadInput: the reference's errors on our ErrorResponse:
// a missing member 400, a bad one 422 naming it; nothing stored.
func TestExchangeRatesBadInput(t *testing.T) {
	e := apitest.NewEnv(t)
	for _, tc := range []struct {
		body   map[string]any
		status int
		code   string
		says   string
	}{
		{map[string]any{"from": "EUR", "to": "USD", "date": "junk", "rate": "1.1"}, 422, "validation_failed", "date must be"},
		{map[string]any{"from": "EUR", "to": "USD", "date": "2026-06-15", "rate": "-2"}, 422, "validation_failed", "rate must be greater than 0"},
		{map[string]any{"from": "EUR", "to": "USD", "date": "2026-06-15", "rate": 0}, 422, "validation_failed", "rate must be greater than 0"},
		{map[string]any{"from": "EUR", "to": "USD", "date": "2026-06-15", "rate": "abc"}, 422, "validation_failed", "rate must be a positive number"},
		{map[string]any{"from": "EUR", "to": "EUR", "date": "2026-06-15", "rate": "1"}, 422, "validation_failed", "from and to must be different currencies"},
		{map[string]any{"from": "NOPE", "to": "USD", "date": "2026-06-15", "rate": "1"}, 422, "validation_failed", "from must be a known ISO 4217 currency code"},
		{map[string]any{"from": "EUR", "to": "USD", "date": "2300-01-01", "rate": "1"}, 422, "validation_failed", "date must be"},
		{map[string]any{"from": "EUR", "to": "USD", "rate": "1.1"}, 400, "bad_request", "date"},
	} {
		r := e.Do("POST", "/api/v1/exchange_rates", e.Alpha.Key, tc.body)
		got := apitest.WantError(t, r, tc.status, tc.code)
		if !contains(got, tc.says) {
			t.Errorf("%v: %v does not say %q", tc.body, got, tc.says)
		}
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/exchange_rates", e.Alpha.Key, "[1]"), 400, "bad_request")
	if rows := rateList(t, e, "/api/v1/exchange_rates", e.Alpha.Key); len(rows) != 0 {
		t.Fatalf("stored %v", rows)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/exchange_rates?from=NOPE", e.Alpha.Key, nil), 422, "validation_failed")
	apitest.WantError(t, e.Do("GET", "/api/v1/exchange_rates?start_date=2026-13-01", e.Alpha.Key, nil), 422, "validation_failed")
	apitest.WantError(t, e.Do("GET", "/api/v1/exchange_rates?page=0", e.Alpha.Key, nil), 400, "bad_request")
	apitest.WantError(t, e.Do("GET", "/api/v1/exchange_rates", "", nil), 401, "unauthorized")
}

func contains(body map[string]any, s string) bool {
	text := body["message"].(string)
	if errs, ok := body["errors"].([]any); ok {
		for _, e := range errs {
			text += " " + e.(string)
		}
	}
	return strings.Contains(text, s)
}

// TestExchangeRatesWriters: a read key is 403 insufficient_scope, a
// member's read_write key 403 forbidden; neither stores anything.
func TestExchangeRatesWriters(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := context.Background()
	body := map[string]any{"from": "EUR", "to": "USD", "date": "2026-06-15", "rate": "1.1"}
	apitest.WantError(t, e.Do("POST", "/api/v1/exchange_rates", e.Alpha.ReadKey, body), 403, "insufficient_scope")
	member := &models.User{FamilyID: e.Alpha.Family.ID, Email: "member-rates@example.com", Role: models.RoleMember}
	if err := e.Store.CreateUser(ctx, member); err != nil {
		t.Fatal(err)
	}
	key, err := e.Store.CreateAPIKey(ctx, e.Alpha.Family.ID, &models.APIKey{UserID: member.ID, Name: "member", Scope: models.ScopeReadWrite})
	if err != nil {
		t.Fatal(err)
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/exchange_rates", key, body), 403, "forbidden")
	if rows := rateList(t, e, "/api/v1/exchange_rates", key); len(rows) != 0 {
		t.Fatalf("stored %v", rows)
	}
}

// TestExchangeRatesIsolation: a family lists the fetched rates and its
// own, never another family's; another family's id is 404; one family's
// rate changes only its own conversions.
func TestExchangeRatesIsolation(t *testing.T) {
	e := apitest.NewEnv(t)
	fetched(t, e, map[string]string{"2026-05-01": "1.07", "2026-06-01": "1.08"})
	own := e.Do("POST", "/api/v1/exchange_rates", e.Alpha.Key,
		map[string]any{"from": "EUR", "to": "USD", "date": "2026-06-01", "rate": "1.5"}).WantJSON(t, 201)
	gbp := e.Do("POST", "/api/v1/exchange_rates", e.Alpha.Key,
		map[string]any{"from": "GBP", "to": "USD", "date": "2026-06-01", "rate": "1.27"}).WantJSON(t, 201)

	for _, tc := range []struct {
		key, path string
		want      int
	}{
		{e.Alpha.Key, "/api/v1/exchange_rates", 4},
		{e.Beta.Key, "/api/v1/exchange_rates", 2},
		{e.Alpha.Key, "/api/v1/exchange_rates?from=eur&to=USD&start_date=2026-05-15", 2},
		{e.Beta.Key, "/api/v1/exchange_rates?from=eur&to=USD&start_date=2026-05-15", 1},
		{e.Alpha.Key, "/api/v1/exchange_rates?end_date=2026-05-31", 1},
		{e.Beta.Key, "/api/v1/exchange_rates?from=GBP", 0},
		{e.Alpha.Key, "/api/v1/exchange_rates?per_page=1&page=2", 1},
	} {
		if rows := rateList(t, e, tc.path, tc.key); len(rows) != tc.want {
			t.Errorf("%s: %d rows, want %d", tc.path, len(rows), tc.want)
		}
	}
	for _, id := range []any{own["id"], gbp["id"]} {
		apitest.WantError(t, e.Do("GET", "/api/v1/exchange_rates/"+id.(string), e.Beta.Key, nil), 404, "not_found")
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/exchange_rates/not-a-uuid", e.Alpha.Key, nil), 404, "not_found")
	// Beta's own rate of the same pair and day is a row of its own.
	e.Do("POST", "/api/v1/exchange_rates", e.Beta.Key,
		map[string]any{"from": "EUR", "to": "USD", "date": "2026-06-01", "rate": "0.9"}).WantJSON(t, 201)

	a, _ := money.ParseAmount("100")
	for _, tc := range []struct {
		id   uuid.UUID
		want string
	}{{e.Alpha.Family.ID, "150.0000"}, {e.Beta.Family.ID, "90.0000"}} {
		r, used, ok, err := e.Store.Rate(context.Background(), tc.id, "EUR", "USD", "2026-06-20")
		if err != nil || !ok || used != "2026-06-01" {
			t.Fatalf("rate %s of %s, ok %v, %v", r, used, ok, err)
		}
		if got, err := money.Convert(a, r); err != nil || got.String() != tc.want {
			t.Errorf("100 EUR = %s USD, want %s", got, tc.want)
		}
	}
}

// TestExchangeRatesNewAccountQueuesFetch: an account created in another
// currency than the family's queues the family's rates fetch at once.
func TestExchangeRatesNewAccountQueuesFetch(t *testing.T) {
	e := apitest.NewEnv(t)
	insp := asynq.NewInspector(e.Redis)
	defer insp.Close()
	id := "exchange_rates:fetch:" + e.Alpha.Family.ID.String()
	e.Do("POST", "/api/v1/accounts", e.Alpha.Key, map[string]any{"account": map[string]any{"name": "Dollars", "account_type": "depository"}}).WantJSON(t, 201)
	if _, err := insp.GetTaskInfo(jobs.QueueLow, id); err == nil {
		t.Fatal("an account in the family's currency queued a rates fetch")
	}
	e.Do("POST", "/api/v1/accounts", e.Alpha.Key, map[string]any{"account": map[string]any{"name": "Euros", "account_type": "depository", "currency": "EUR"}}).WantJSON(t, 201)
	if info, err := insp.GetTaskInfo(jobs.QueueLow, id); err != nil || info.Type != jobs.TypeExchangeRatesFetch {
		t.Fatalf("no rates fetch queued for a euro account: %v %v", info, err)
	}
}

// TestBalanceSheetConverts: an account in another currency counts in the
// balance sheet at the family's latest rate, which the answer names with
// its date; without a rate it is left out and counted as such.
func TestBalanceSheetConverts(t *testing.T) {
	e := apitest.NewEnv(t)
	a := e.Alpha
	acct := e.Do("POST", "/api/v1/accounts", a.Key, map[string]any{"account": map[string]any{"name": "Franken",
		"account_type": "depository", "currency": "CHF", "balance": "1000"}}).WantJSON(t, 201)
	before := e.Do("GET", "/api/v1/balance_sheet", a.ReadKey, nil).WantJSON(t, 200)
	if before["unconverted_accounts"] != float64(1) || len(before["conversions"].([]any)) != 0 {
		t.Fatalf("without a rate: %v", before)
	}
	e.Do("POST", "/api/v1/exchange_rates", a.Key, map[string]any{"from": "CHF", "to": "USD", "date": "2026-01-02", "rate": "1.1234567"}).WantJSON(t, 201)
	after := e.Do("GET", "/api/v1/balance_sheet", a.ReadKey, nil).WantJSON(t, 200)
	conv := after["conversions"].([]any)
	if after["unconverted_accounts"] != float64(0) || len(conv) != 1 {
		t.Fatalf("with a rate: %v", after)
	}
	c := conv[0].(map[string]any)
	if c["account_id"] != acct["id"] || c["rate"] != "1.1234567" || c["rate_date"] != "2026-01-02" ||
		c["value"].(map[string]any)["amount"] != "1123.46" {
		t.Fatalf("conversion %v", c)
	}
}
