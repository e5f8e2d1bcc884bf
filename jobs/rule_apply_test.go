package jobs_test

import (
	"context"
	"testing"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/modelstest"
)

// TestRuleApplyIsIdempotent: the queue rebuild picks up a pending run, the
// handler finishes it and excludes the matching row (queueing its
// account's balance), and a second delivery changes nothing.
func TestRuleApplyIsIdempotent(t *testing.T) {
	h, store, insp := newHandlers(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "ruleapply")
	for _, name := range []string{"ATM fee", "Salary"} {
		tx := &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: "2024-01-01", Amount: 300, Currency: "USD", Name: name}
		if _, _, err := store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
	}
	fee := "fee"
	rule := &models.Rule{FamilyID: f.Family.ID, Active: true,
		Conditions: []models.RuleCondition{{ConditionType: models.CondName, Operator: "ends_with", Value: &fee}},
		Actions:    []models.RuleAction{{ActionType: models.ActExclude}}}
	if err := store.CreateRule(ctx, rule); err != nil {
		t.Fatal(err)
	}
	run, err := store.CreateRuleRun(ctx, f.Family.ID, rule.ID, "manual")
	if err != nil {
		t.Fatal(err)
	}
	taskID := "rule:apply:" + run.ID.String()
	t.Cleanup(func() {
		_ = insp.DeleteTask(jobs.QueueDefault, taskID)
		_ = insp.DeleteTask(jobs.QueueDefault, "account:balance:"+f.Account.ID.String())
		forgetSweeps(insp)
	})
	if err := h.Requeue(ctx, asynq.NewTask(jobs.TypeRequeue, nil)); err != nil {
		t.Fatal(err)
	}
	info, err := insp.GetTaskInfo(jobs.QueueDefault, taskID)
	if err != nil {
		t.Fatalf("pending run not re-queued: %v", err)
	}
	task := asynq.NewTask(info.Type, info.Payload)
	balances := jobs.UseBalances(store, h.Queue, h.Log) // from here on, as a worker's store
	for range 2 {
		if err := h.RuleApply(ctx, task); err != nil {
			t.Fatal(err)
		}
		got, err := store.RuleRun(ctx, f.Family.ID, run.ID)
		if err != nil || got.Status != models.RuleRunSuccess || got.TransactionsProcessed != 2 || got.TransactionsModified != 1 {
			t.Fatalf("run: %+v %v", got, err)
		}
	}
	if _, err := insp.GetTaskInfo(jobs.QueueDefault, "account:balance:"+f.Account.ID.String()); err != nil {
		t.Errorf("balance of the excluded row's account not queued: %v", err)
	}
	if queued, settled := balances.Counts(); queued != 1 || settled != 0 {
		t.Errorf("the policy queued %d and settled %d balances, want the excluded row's account queued once", queued, settled)
	}
	if err := h.RuleApply(ctx, asynq.NewTask(jobs.TypeRuleApply, []byte("{"))); err == nil {
		t.Error("a payload that does not decode was accepted")
	}
}
