package rest_test

import (
	"testing"

	"github.com/hibiken/asynq"

	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/models"
)

// TestBulkCreateRecurring: a bulk create that writes rows queues the
// family's recurring detection (once, whatever the number of batches),
// as an import does; a batch that writes nothing queues none. A row of the
// batch that matches an active bill marks its occurrence paid.
func TestBulkCreateRecurring(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := t.Context()
	acct := e.Alpha.Account.ID.String()
	bill := &models.RecurringTransaction{FamilyID: e.Alpha.Family.ID, Name: "Rent", Amount: 15000000, Currency: "USD",
		Cadence: "monthly", ExpectedDay: 1, NextDate: "2024-04-01"}
	if err := e.Store.CreateRecurringTransaction(ctx, bill); err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspector(e.Redis)
	defer insp.Close()
	taskID := "recurring:detect:" + e.Alpha.Family.ID.String()
	e.DropTasks()
	_ = insp.DeleteTask(jobs.QueueLow, taskID)

	refused := bulkResults(t, e.Do("POST", "/api/v1/transactions/bulk", e.Alpha.Key, bulkBody(
		map[string]any{"account_id": acct, "date": "2024-02-30", "amount": "x"})))
	if refused[0]["status"] != "error" {
		t.Fatalf("refused: %v", refused[0])
	}
	if _, err := insp.GetTaskInfo(jobs.QueueLow, taskID); err == nil {
		t.Fatal("a batch that wrote nothing queued a detection")
	}

	for range 2 {
		res := bulkResults(t, e.Do("POST", "/api/v1/transactions/bulk", e.Alpha.Key, bulkBody(
			map[string]any{"account_id": acct, "date": "2024-04-02", "amount": "1500", "name": "RENT 04/2024", "nature": "expense"},
			map[string]any{"account_id": acct, "date": "2024-04-02", "amount": "3.50", "name": "Coffee", "nature": "expense"})))
		if res[0]["status"] != "created" {
			t.Fatalf("bulk: %v", res[0])
		}
	}
	info, err := insp.GetTaskInfo(jobs.QueueLow, taskID)
	if err != nil || info.Type != jobs.TypeRecurringDetect {
		t.Fatalf("detection not queued: %+v %v", info, err)
	}
	_ = insp.DeleteTask(jobs.QueueLow, taskID)

	os, err := e.Store.RecurringOccurrences(ctx, e.Alpha.Family.ID, models.OccurrenceFilter{})
	if err != nil || len(os) != 1 || os[0].DueDate != "2024-04-01" || os[0].Status != models.OccurrencePaid {
		t.Fatalf("occurrences %+v %v", os, err)
	}
	if got, _ := e.Store.RecurringTransaction(ctx, e.Alpha.Family.ID, bill.ID); got.NextDate != "2024-05-01" {
		t.Fatalf("bill %+v", got)
	}
}
