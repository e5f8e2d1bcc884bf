package screens_test

import (
	"net/url"
	"strings"
	"testing"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/money"
)

// TestRecurringScreen: the screen lists a suggestion with its price
// change; confirm makes it active, end ends it; another family's record
// is 404.
func TestRecurringScreen(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := t.Context()
	was := money.Amount(99900)
	r := &models.RecurringTransaction{FamilyID: e.Alpha.Family.ID, Name: "Netflix", Amount: 159900, PreviousAmount: &was,
		Currency: "USD", Cadence: "monthly", ExpectedDay: 15, NextDate: "2026-07-15", Status: models.RecurringSuggested, Occurrences: 5}
	if err := e.Store.CreateRecurringTransaction(ctx, r); err != nil {
		t.Fatal(err)
	}
	theirs := &models.RecurringTransaction{FamilyID: e.Beta.Family.ID, Name: "Theirs", Amount: 100000,
		Currency: "USD", Cadence: "weekly", ExpectedDay: 1, NextDate: "2026-07-01"}
	if err := e.Store.CreateRecurringTransaction(ctx, theirs); err != nil {
		t.Fatal(err)
	}

	page := string(b.Get("/recurring").Body)
	for _, want := range []string{`href="/recurring"`, "Netflix", "$15.99", "was $9.99", ">Confirm<", ">Dismiss<"} {
		if !strings.Contains(page, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	if strings.Contains(page, "Theirs") {
		t.Error("screen shows another family's")
	}
	if res := b.Post("/recurring/"+r.ID.String()+"/status", url.Values{"action": {"confirm"}}); res.Status != 303 {
		t.Fatalf("confirm: %d", res.Status)
	}
	if got, _ := e.Store.RecurringTransaction(ctx, e.Alpha.Family.ID, r.ID); got.Status != models.RecurringActive {
		t.Fatalf("after confirm %s", got.Status)
	}
	if res := b.Post("/recurring/"+r.ID.String()+"/status", url.Values{"action": {"end"}}); res.Status != 303 {
		t.Fatalf("end: %d", res.Status)
	}
	if got, _ := e.Store.RecurringTransaction(ctx, e.Alpha.Family.ID, r.ID); got.Status != models.RecurringEnded {
		t.Fatalf("after end %s", got.Status)
	}
	if res := b.Post("/recurring/"+theirs.ID.String()+"/status", url.Values{"action": {"dismiss"}}); res.Status != 404 {
		t.Errorf("dismiss another family's: %d", res.Status)
	}
}
