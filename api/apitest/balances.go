package apitest

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/models/money"
)

// RunBalanceTasks does the worker's part of the balance policy: it runs
// the balance recalculations the env's families have queued, due or not,
// and removes them. It returns how many ran.
func (e *Env) RunBalanceTasks(t testing.TB) int {
	t.Helper()
	insp := asynq.NewInspector(e.Redis)
	defer insp.Close()
	h := &jobs.Handlers{Store: e.Store, Log: e.Logger()}
	n := 0
	for _, list := range []func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){insp.ListPendingTasks, insp.ListScheduledTasks} {
		tasks, err := list(jobs.QueueDefault, asynq.PageSize(1000))
		if errors.Is(err, asynq.ErrQueueNotFound) {
			return n // nothing was ever queued
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range tasks {
			if ti.Type != jobs.TypeAccountBalance || !e.owns(ti) {
				continue
			}
			if err := h.AccountBalance(context.Background(), asynq.NewTask(ti.Type, ti.Payload)); err != nil {
				t.Fatal(err)
			}
			if err := insp.DeleteTask(jobs.QueueDefault, ti.ID); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	return n
}

// Balance is the account's stored balance.
func (e *Env) Balance(t testing.TB, familyID, accountID uuid.UUID) money.Amount {
	t.Helper()
	a, err := e.Store.Account(context.Background(), familyID, accountID)
	if err != nil {
		t.Fatal(err)
	}
	return a.Balance
}
