package assistant_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"coffer/jobs/assistant"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// TestToolsForecastAndUpcoming: get_forecast gives the store's forecast
// figures (those of GET /api/v1/forecast) and get_upcoming_bills the
// coming bills and income, last month's missed bill, and the one paid
// late that is no longer missed; another family sees none of it.
func TestToolsForecastAndUpcoming(t *testing.T) {
	store := modelstest.NewStore(t)
	ctx := context.Background()
	now := time.Date(2026, 7, 21, 9, 0, 0, 0, time.UTC)
	store.Now = func() time.Time { return now }
	f := modelstest.NewFamily(t, store, "bills")
	other := modelstest.NewFamily(t, store, "bills-other")
	item := func(fx *modelstest.FamilyFixture, name string, amount money.Amount, cadence string, next civil.Date) {
		t.Helper()
		r := &models.RecurringTransaction{FamilyID: fx.Family.ID, AccountID: &fx.Account.ID, Name: name, Amount: amount,
			Currency: "USD", Cadence: cadence, ExpectedDay: next.Time().Day(), NextDate: next, Status: models.RecurringActive}
		if err := store.CreateRecurringTransaction(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := store.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
		Date: "2026-07-01", Amount: -3_000_0000, Currency: "USD", Name: "Opening"}, nil); err != nil {
		t.Fatal(err)
	}
	item(f, "Power", 80_0000, "monthly", "2026-07-15")
	item(f, "Gym", 30_0000, "monthly", "2026-07-10")
	item(f, "Rent", 1_500_0000, "monthly", "2026-08-01")
	item(f, "Salary", -2_000_0000, "biweekly", "2026-07-31")
	item(other, "Secret bill", 99_0000, "monthly", "2026-07-25")
	if _, err := store.MarkMissedRecurring(ctx, f.Family.ID); err != nil { // Power and Gym
		t.Fatal(err)
	}
	if _, _, err := store.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
		Date: "2026-07-21", Amount: 80_0000, Currency: "USD", Name: "POWER #4432"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := store.RecalculateBalance(ctx, f.Family.ID, f.Account.ID); err != nil {
		t.Fatal(err)
	}

	c := assistant.Caller{FamilyID: f.Family.ID, UserID: f.User.ID, Role: models.RoleMember}
	call := func(c assistant.Caller, name, args string) map[string]any { return callTool(t, store, c, name, args) }

	up := call(c, "get_upcoming_bills", "")
	var got []string
	for _, u := range up["upcoming"].([]any) {
		m := u.(map[string]any)
		got = append(got, fmt.Sprint(m["date"], " ", m["name"], " ", m["kind"], " ", m["formatted_amount"]))
	}
	want := "[2026-07-31 Salary income $2,000.00 2026-08-01 Rent bill $1,500.00 2026-08-10 Gym bill $30.00 2026-08-14 Salary income $2,000.00 2026-08-15 Power bill $80.00]"
	if fmt.Sprint(got) != want {
		t.Fatalf("upcoming %v\nwant %s", got, want)
	}
	if tot := up["totals"].([]any)[0].(map[string]any); tot["out"] != "$1,610.00" || tot["in"] != "$4,000.00" {
		t.Fatalf("totals %v", tot)
	}
	if m := up["missed"].([]any); len(m) != 1 || m[0].(map[string]any)["name"] != "Gym" || m[0].(map[string]any)["due_date"] != "2026-07-10" {
		t.Fatalf("missed %v", m)
	}
	if l := up["paid_late"].([]any); len(l) != 1 || l[0].(map[string]any)["name"] != "Power" || l[0].(map[string]any)["paid_date"] != "2026-07-21" {
		t.Fatalf("paid late %v", l)
	}
	if got := call(c, "get_upcoming_bills", `{"days": 0}`); got["error"] != "validation_failed" {
		t.Fatalf("0 days %v", got)
	}

	fc, err := store.Forecast(ctx, f.Family.ID, 45)
	if err != nil {
		t.Fatal(err)
	}
	fo := call(c, "get_forecast", `{"days": 45}`)
	lowest, safe := fo["lowest"].(map[string]any), fo["safe_to_spend"].(map[string]any)
	if lowest["date"] != string(fc.Lowest.Date) || lowest["balance"] != fc.Lowest.Balance.Format(money.MustCurrency("USD")) ||
		safe["amount"] != fc.SafeToSpend.Format(money.MustCurrency("USD")) || safe["until"] != "2026-07-31" || fo["days"] != 45.0 {
		t.Fatalf("forecast %v; store's lowest %+v, safe %v", fo, fc.Lowest, fc.SafeToSpend)
	}
	bal := fo["balances"].([]any)
	if first := bal[0].(map[string]any); first["date"] != "2026-07-21" || first["balance"] != "$2,920.00" {
		t.Fatalf("first balance %v", first)
	}
	if last := bal[len(bal)-1].(map[string]any); last["date"] != "2026-09-04" {
		t.Fatalf("last balance %v", last)
	}
	if got := call(c, "get_forecast", `{"account_id": "`+f.Account.ID.String()+`"}`); len(got["accounts"].([]any)) != 1 || got["days"] != 90.0 {
		t.Fatalf("one account %v", got)
	}
	for args, code := range map[string]string{
		`{"days": 366}`: "validation_failed", `{"days": "ten"}`: "invalid_arguments",
		`{"account_id": "` + other.Account.ID.String() + `"}`: "not_found", `{"account_id": "nope"}`: "not_found",
	} {
		if got := call(c, "get_forecast", args); got["error"] != code {
			t.Errorf("%s: %v, want %s", args, got, code)
		}
	}

	oc := assistant.Caller{FamilyID: other.Family.ID, UserID: other.User.ID, Role: models.RoleAdmin}
	if up := call(oc, "get_upcoming_bills", ""); len(up["upcoming"].([]any)) != 1 || len(up["missed"].([]any)) != 0 ||
		len(up["paid_late"].([]any)) != 0 {
		t.Fatalf("other family's upcoming %v", up)
	}
}
