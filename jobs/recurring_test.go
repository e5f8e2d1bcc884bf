package jobs_test

import (
	"context"
	"testing"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
)

// TestRecurringDetect: the job stores the family's monthly series as a
// suggestion, and a second run (at-least-once delivery) adds nothing; the
// sweep queues one detection per family, once however often it runs.
func TestRecurringDetect(t *testing.T) {
	h, store, insp := newHandlers(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "recurring")
	today := store.Now().UTC()
	for i := 3; i >= 1; i-- {
		if _, _, err := store.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
			Date: civil.DateOf(today.AddDate(0, -i, 0)), Amount: 4990000, Currency: "USD", Name: "Gym membership"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	task, err := jobs.NewRecurringDetectTask(f.Family.ID)
	if err != nil {
		t.Fatal(err)
	}
	for run := 0; run < 2; run++ {
		if err := h.RecurringDetect(ctx, asynq.NewTask(task.Type(), task.Payload())); err != nil {
			t.Fatal(err)
		}
		rows, n, err := store.RecurringTransactions(ctx, f.Family.ID, models.RecurringFilter{}, models.Page{Number: 1, Size: 25})
		if err != nil || n != 1 || rows[0].Status != models.RecurringSuggested || rows[0].Occurrences != 3 {
			t.Fatalf("run %d: %+v, %d, %v", run, rows, n, err)
		}
	}

	other := modelstest.NewFamily(t, store, "recurring-other")
	t.Cleanup(func() {
		for _, id := range []string{f.Family.ID.String(), other.Family.ID.String()} {
			_ = insp.DeleteTask(jobs.QueueLow, "recurring:detect:"+id)
			_ = insp.DeleteTask(jobs.QueueLow, "recurring:missed:"+id)
		}
	})
	for run := 0; run < 2; run++ {
		if err := h.RecurringSweep(ctx, asynq.NewTask(jobs.TypeRecurringSweep, nil)); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{f.Family.ID.String(), other.Family.ID.String()} {
		info, err := insp.GetTaskInfo(jobs.QueueLow, "recurring:detect:"+id)
		if err != nil || info.Type != jobs.TypeRecurringDetect {
			t.Errorf("family %s: %+v, %v", id, info, err)
		}
		info, err = insp.GetTaskInfo(jobs.QueueLow, "recurring:missed:"+id)
		if err != nil || info.Type != jobs.TypeRecurringMissed {
			t.Errorf("family %s missed check: %+v, %v", id, info, err)
		}
	}
}

// TestRecurringMissed: the job records the occurrence whose date and
// grace passed unpaid, and moves the bill on; run again (at least once
// delivery), it records nothing more.
func TestRecurringMissed(t *testing.T) {
	h, store, _ := newHandlers(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "missed")
	today := store.Now().UTC()
	due := civil.DateOf(today.AddDate(0, 0, -10))
	r := &models.RecurringTransaction{FamilyID: f.Family.ID, Name: "Insurance", Amount: 900000, Currency: "USD",
		Cadence: "monthly", ExpectedDay: due.Time().Day(), NextDate: due}
	if err := store.CreateRecurringTransaction(ctx, r); err != nil {
		t.Fatal(err)
	}
	task, err := jobs.NewRecurringMissedTask(f.Family.ID)
	if err != nil {
		t.Fatal(err)
	}
	for run := 0; run < 2; run++ {
		if err := h.RecurringMissed(ctx, asynq.NewTask(task.Type(), task.Payload())); err != nil {
			t.Fatal(err)
		}
		os, err := store.RecurringOccurrences(ctx, f.Family.ID, models.OccurrenceFilter{Status: models.OccurrenceMissed})
		if err != nil || len(os) != 1 || os[0].DueDate != due {
			t.Fatalf("run %d: %+v %v", run, os, err)
		}
	}
	got, err := store.RecurringTransaction(ctx, f.Family.ID, r.ID)
	if err != nil || got.NextDate <= due {
		t.Fatalf("not moved on: %+v %v", got, err)
	}
}
