package models_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"coffer/models"
	"coffer/models/importfile"
	"coffer/models/modelstest"
)

// TestRestoreSureRecurring: the reference's recurring lines (no cadence:
// monthly) are restored onto the file's account and merchant; a series of
// a merchant the file does not hold keeps its name, or is left out
// without one; a second restore matches the series instead of doubling
// them; a bad status names its line.
func TestRestoreSureRecurring(t *testing.T) {
	s := modelstest.NewStore(t)
	alpha := modelstest.NewFamily(t, s, "alpha")
	ctx := context.Background()
	nd := string(sureFixture(t, "all.ndjson"))
	line := func(id, rest string) string {
		return `{"type":"RecurringTransaction","data":{"id":"` + id + `",` + rest + `}}`
	}
	file := nd + "\n" +
		line("9e000000-0000-4000-8000-000000000001", `"account_id":"0a1f6c2e-1111-4a8b-9c01-000000000001","merchant_id":"3e000000-0000-4000-8000-000000000001","amount":"42.5","currency":"USD","expected_day_of_month":31,"last_occurrence_date":"2024-01-31","next_expected_date":"2024-02-29","status":"active","occurrence_count":3,"name":null,"manual":false,"expected_amount_min":"40.0","expected_amount_max":"45.0","expected_amount_avg":"42.5","created_at":"2024-01-31T10:00:00.000Z","updated_at":"2024-01-31T10:00:00.000Z"`) + "\n" +
		line("9e000000-0000-4000-8000-000000000002", `"account_id":null,"merchant_id":"3e000000-0000-4000-8000-0000000000ff","amount":"-2000","currency":"usd","expected_day_of_month":15,"next_expected_date":"2024-02-15","status":"inactive","occurrence_count":6,"name":"Salary","manual":true`) + "\n" +
		line("9e000000-0000-4000-8000-000000000003", `"merchant_id":"3e000000-0000-4000-8000-0000000000fe","amount":"9.99","currency":"USD","next_expected_date":"2024-02-10","status":"active"`)

	sum, err := s.RestoreSure(ctx, alpha.Family.ID, []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Created["recurring_transactions"] != 2 || sum.Skipped["recurring_transactions"] != 1 {
		t.Errorf("summary %+v", sum)
	}
	list, n, err := s.RecurringTransactions(ctx, alpha.Family.ID, models.RecurringFilter{}, models.Page{Number: 1, Size: 10})
	must(t, err)
	if n != 2 {
		t.Fatalf("%d recurring transactions", n)
	}
	for _, r := range list {
		switch {
		case r.Merchant != nil:
			if r.Merchant.Name != "Corner Market" || r.Account == nil || r.Account.Name != "Checking" || r.Cadence != "monthly" ||
				r.ExpectedDay != 31 || r.NextDate != "2024-02-29" || r.Amount.String() != "42.5000" || r.Occurrences != 3 ||
				r.AmountMin == nil || r.AmountMin.String() != "40.0000" || r.Status != models.RecurringActive {
				t.Errorf("the merchant's series %+v", r)
			}
		default:
			if r.Name != "Salary" || r.AccountID != nil || r.Currency != "USD" || r.Status != models.RecurringInactive || !r.Manual {
				t.Errorf("the salary %+v", r)
			}
		}
	}

	sum, err = s.RestoreSure(ctx, alpha.Family.ID, []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Matched["recurring_transactions"] != 2 || sum.Created["recurring_transactions"] != 0 {
		t.Errorf("second restore %+v", sum)
	}

	bad := nd + "\n" + line("9e000000-0000-4000-8000-000000000004", `"amount":"5","currency":"USD","next_expected_date":"2024-02-10","status":"someday","name":"Gym"`)
	_, err = s.RestoreSure(ctx, alpha.Family.ID, []byte(bad))
	var se *importfile.SureError
	if !errors.As(err, &se) || se.Line != 22 || !strings.Contains(se.Reason, "Status must be one of") {
		t.Errorf("bad status: %v", err)
	}
}
