package models_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/importfile"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// TestLatePaymentPaysMissed: a monthly bill due on the 15th whose grace
// ended on the 20th is recorded missed on the 21st and moved to August;
// its payment arriving on the 22nd, by each door, pays July's occurrence
// late (the occurrence is paid, with the payment's date, amount and id)
// and leaves August due. A second such payment pays nothing, and
// August's payment still pays August.
func TestLatePaymentPaysMissed(t *testing.T) {
	for _, door := range []string{"create", "bulk", "bulk-copy"} {
		t.Run(door, func(t *testing.T) {
			ctx := context.Background()
			s := modelstest.NewStore(t)
			now := time.Date(2026, 7, 21, 9, 0, 0, 0, time.UTC)
			s.Now = func() time.Time { return now }
			f := modelstest.NewFamily(t, s, "alpha")
			power := newBill(t, s, f, "Power", 800000, 15, "2026-07-15")
			if n, err := s.MarkMissedRecurring(ctx, f.Family.ID); err != nil || n != 1 {
				t.Fatalf("missed %d, %v", n, err)
			}
			now = time.Date(2026, 7, 22, 18, 0, 0, 0, time.UTC)

			pay := func(name string, amount money.Amount, date civil.Date) *models.Transaction {
				t.Helper()
				row := &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: date, Amount: amount,
					Currency: "USD", Name: name}
				if door == "create" {
					got, created, err := s.CreateTransaction(ctx, row, nil)
					if err != nil || !created {
						t.Fatalf("create: %v %v", created, err)
					}
					return got
				}
				rows := []*models.NewTransaction{{Row: row}}
				size := map[string]int{"bulk": 3, "bulk-copy": 80}[door]
				for len(rows) < size {
					rows = append(rows, &models.NewTransaction{Row: &models.Transaction{AccountID: f.Account.ID,
						Date: date, Amount: 50000, Currency: "USD", Name: fmt.Sprintf("Groceries %d", len(rows))}})
				}
				if _, err := s.IngestTransactions(ctx, f.Family.ID, rows); err != nil {
					t.Fatal(err)
				}
				return rows[0].Row
			}
			late := pay("POWER #4432", 812300, "2026-07-22")
			os := occurrences(t, s, f.Family.ID)
			if len(os) != 1 || os[0].DueDate != "2026-07-15" || os[0].Status != models.OccurrencePaid ||
				os[0].TransactionID == nil || *os[0].TransactionID != late.ID || os[0].PaidAmount == nil ||
				*os[0].PaidAmount != 812300 || os[0].PaidDate == nil || *os[0].PaidDate != "2026-07-22" || !os[0].Late() {
				t.Fatalf("occurrences after the late payment %+v", os)
			}
			got := reload(t, s, power)
			if got.NextDate != "2026-08-15" || got.LastDate == nil || *got.LastDate != "2026-07-22" || got.Occurrences != 4 {
				t.Fatalf("power after the late payment %+v", got)
			}
			missed, err := s.RecurringOccurrences(ctx, f.Family.ID, models.OccurrenceFilter{Status: models.OccurrenceMissed})
			if err != nil || len(missed) != 0 {
				t.Fatalf("still listed missed: %+v %v", missed, err)
			}

			// The same payee again pays nothing: July is paid, August weeks away.
			pay("POWER #4432", 812300, "2026-07-25")
			if os := occurrences(t, s, f.Family.ID); len(os) != 1 {
				t.Fatalf("paid twice: %+v", os)
			}
			// August on time pays August.
			aug := pay("POWER #4432", 800000, "2026-08-14")
			os = occurrences(t, s, f.Family.ID)
			if len(os) != 2 || os[1].DueDate != "2026-08-15" || *os[1].TransactionID != aug.ID || os[1].Late() {
				t.Fatalf("occurrences after August %+v", os)
			}
			if got := reload(t, s, power); got.NextDate != "2026-09-15" {
				t.Fatalf("power after August %+v", got)
			}
		})
	}
}

// TestLatePaymentByFileImport: a statement imported after the missed job
// ran pays the missed occurrence late, not the next one.
func TestLatePaymentByFileImport(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	now := time.Date(2024, 1, 4, 9, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	f := modelstest.NewFamily(t, s, "alpha")
	bill := newBill(t, s, f, "Coffee shop", 123400, 28, "2023-12-28")
	if n, err := s.MarkMissedRecurring(ctx, f.Family.ID); err != nil || n != 1 {
		t.Fatalf("missed %d, %v", n, err)
	}
	runImport(t, s, newImport(t, s, f, importfile.OFX, ofxSGML)) // COFFEE SHOP on 5 January
	os := occurrences(t, s, f.Family.ID)
	if len(os) != 1 || os[0].DueDate != "2023-12-28" || os[0].Status != models.OccurrencePaid || os[0].TransactionID == nil ||
		os[0].PaidDate == nil || *os[0].PaidDate != "2024-01-05" {
		t.Fatalf("occurrences %+v", os)
	}
	if got := reload(t, s, bill); got.NextDate != "2024-01-28" {
		t.Fatalf("bill %+v", got)
	}
}

// TestLatePaymentBeforeMissedJob: a bill paid past its grace before the
// missed job has run (the worker was down, or the job runs at night) is
// paid late, not missed: the job then finds nothing to record, and the
// same payee again pays nothing until August's window.
func TestLatePaymentBeforeMissedJob(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	s.Now = func() time.Time { return time.Date(2026, 7, 22, 18, 0, 0, 0, time.UTC) }
	f := modelstest.NewFamily(t, s, "alpha")
	power := newBill(t, s, f, "Power", 800000, 15, "2026-07-15")
	pay := func(date civil.Date) *models.Transaction {
		t.Helper()
		got, created, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
			Date: date, Amount: 800000, Currency: "USD", Name: "POWER #4432"}, nil)
		if err != nil || !created {
			t.Fatalf("create: %v %v", created, err)
		}
		return got
	}
	late := pay("2026-07-22")
	os := occurrences(t, s, f.Family.ID)
	if len(os) != 1 || os[0].DueDate != "2026-07-15" || os[0].Status != models.OccurrencePaid ||
		os[0].TransactionID == nil || *os[0].TransactionID != late.ID || !os[0].Late() {
		t.Fatalf("occurrences after the late payment %+v", os)
	}
	if got := reload(t, s, power); got.NextDate != "2026-08-15" {
		t.Fatalf("power after the late payment %+v", got)
	}
	if n, err := s.MarkMissedRecurring(ctx, f.Family.ID); err != nil || n != 0 {
		t.Fatalf("missed %d, %v", n, err)
	}
	pay("2026-07-25")
	if os := occurrences(t, s, f.Family.ID); len(os) != 1 {
		t.Fatalf("paid twice: %+v", os)
	}
}
