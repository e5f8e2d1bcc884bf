package simplefin_test

import (
	"context"
	"testing"
	"time"

	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/civil"
)

// TestSyncPaysRecurring: a sync is a door of the ingestion pipeline: a
// new row that matches an active bill marks its occurrence paid in the
// import's transaction; the same rows synced again pay nothing twice.
func TestSyncPaysRecurring(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	day := time.Now().UTC().Add(-48 * time.Hour)
	due := civil.DateOf(day)
	rent := &models.RecurringTransaction{FamilyID: s.f.Family.ID, Name: "Rent", Amount: 9000000, Currency: "USD",
		Cadence: "monthly", ExpectedDay: day.Day(), NextDate: due}
	if err := s.store.CreateRecurringTransaction(ctx, rent); err != nil {
		t.Fatal(err)
	}
	s.bridge.SetDataset(oneAccount(bridgetest.Txn{ID: "R1", Posted: day.Unix(), Amount: "-900.00", Description: "RENT"},
		bridgetest.Txn{ID: "C1", Posted: day.Unix(), Amount: "-4.50", Description: "POS COFFEE BAR"}))
	for round := 1; round <= 2; round++ {
		sy := s.first
		if round == 2 {
			sy = s.newSync(t, false)
		}
		if _, err := s.run(t, sy); err != nil {
			t.Fatal(err)
		}
		os, err := s.store.RecurringOccurrences(ctx, s.f.Family.ID, models.OccurrenceFilter{})
		r1 := byExternalID(s.imported(t))["R1"]
		if err != nil || len(os) != 1 || os[0].DueDate != due || os[0].TransactionID == nil || *os[0].TransactionID != r1.ID {
			t.Fatalf("round %d: %+v %v", round, os, err)
		}
	}
	got, err := s.store.RecurringTransaction(ctx, s.f.Family.ID, rent.ID)
	if err != nil || got.NextDate <= due || got.Occurrences != 1 {
		t.Fatalf("rent %+v %v", got, err)
	}
}

// TestSyncPaysMissedLate: a bill recorded missed and moved on is paid by
// a sync's row that comes a few days late: the missed occurrence turns
// paid by it, and the next one stays due.
func TestSyncPaysMissedLate(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	dueDay := time.Now().UTC().AddDate(0, 0, -10)
	due := civil.DateOf(dueDay)
	rent := &models.RecurringTransaction{FamilyID: s.f.Family.ID, Name: "Rent", Amount: 9000000, Currency: "USD",
		Cadence: "monthly", ExpectedDay: dueDay.Day(), NextDate: due, Status: models.RecurringActive}
	if err := s.store.CreateRecurringTransaction(ctx, rent); err != nil {
		t.Fatal(err)
	}
	if n, err := s.store.MarkMissedRecurring(ctx, s.f.Family.ID); err != nil || n != 1 {
		t.Fatalf("missed %d %v", n, err)
	}
	next := reloadRent(t, s, rent).NextDate
	late := time.Now().UTC().Add(-48 * time.Hour)
	s.bridge.SetDataset(oneAccount(bridgetest.Txn{ID: "R1", Posted: late.Unix(), Amount: "-900.00", Description: "RENT"}))
	if _, err := s.run(t, s.first); err != nil {
		t.Fatal(err)
	}
	os, err := s.store.RecurringOccurrences(ctx, s.f.Family.ID, models.OccurrenceFilter{})
	r1 := byExternalID(s.imported(t))["R1"]
	if err != nil || len(os) != 1 || os[0].DueDate != due || os[0].Status != models.OccurrencePaid || os[0].TransactionID == nil ||
		*os[0].TransactionID != r1.ID || !os[0].Late() {
		t.Fatalf("occurrences %+v %v", os, err)
	}
	if got := reloadRent(t, s, rent); got.NextDate != next {
		t.Fatalf("rent moved from %s: %+v", next, got)
	}
}

func reloadRent(t *testing.T, s *syncSetup, r *models.RecurringTransaction) *models.RecurringTransaction {
	t.Helper()
	got, err := s.store.RecurringTransaction(context.Background(), r.FamilyID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
