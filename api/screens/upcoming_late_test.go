package screens_test

import (
	"strings"
	"testing"
	"time"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
)

// TestUpcomingPaidLate: the missed gym fee, paid a few days later, leaves
// the missed list and shows as paid late, with the day and amount paid.
func TestUpcomingPaidLate(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	upcomingBook(t, e)
	today := civil.DateOf(time.Now().UTC())
	if _, _, err := e.Store.CreateTransaction(t.Context(), &models.Transaction{FamilyID: e.Alpha.Family.ID,
		AccountID: e.Alpha.Account.ID, Date: today, Amount: 499000, Currency: "USD", Name: "GYM 123"}, nil); err != nil {
		t.Fatal(err)
	}
	page := string(b.Get("/upcoming").Body)
	for _, want := range []string{"None: everything due came in.", "Paid late", "Gym", string(today), "$49.90"} {
		if !strings.Contains(page, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
}
