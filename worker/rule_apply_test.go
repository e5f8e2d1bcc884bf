package worker_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/uptrace/bun"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/modelstest"
	"coffer/models/money"
	"coffer/worker"
)

// cancelOnWrite cancels a context at the first rule write of a batch after
// the first one, while armed: the worker dies mid-batch, its transaction
// not committed.
type cancelOnWrite struct {
	armed  atomic.Bool
	writes atomic.Int32
	cancel context.CancelFunc
}

func (h *cancelOnWrite) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	if h.armed.Load() && strings.Contains(e.Query, "UPDATE transactions AS t SET") && h.writes.Add(1) == 2 {
		h.cancel()
	}
	return ctx
}

func (h *cancelOnWrite) AfterQuery(context.Context, *bun.QueryEvent) {}

// TestRuleApplyResumesAfterKill applies a rule to 3,500 transactions: a
// first attempt is cut off in the middle of its second batch, then a real
// worker picks the run up. Every row is processed once, every matching row
// changed once, nothing doubled, nothing lost.
func TestRuleApplyResumesAfterKill(t *testing.T) {
	store := modelstest.NewStore(t)
	opt, rdb := modelstest.RedisClient(t, redisDB)
	queue := asynq.NewClientFromRedisClient(rdb)
	log := discardLog()
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "ruleworker")
	tag := &models.Tag{FamilyID: f.Family.ID, Name: "coffee", Color: "#000000"}
	if err := store.CreateTag(ctx, tag); err != nil {
		t.Fatal(err)
	}
	const total, every = 3500, 3
	rows := make([]models.Transaction, total)
	now := time.Now().UTC()
	for i := range rows {
		name := fmt.Sprintf("Grocer %d", i)
		if i%every == 0 {
			name = fmt.Sprintf("STARBUCKS %d", i)
		}
		rows[i] = models.Transaction{ID: models.NewID(), FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: "2024-05-01",
			Amount: money.Amount(1000 + i), Currency: "USD", Name: name, CreatedAt: now, UpdatedAt: now}
	}
	for start := 0; start < total; start += 500 {
		batch := rows[start:min(start+500, total)]
		if _, err := store.DB().NewInsert().Model(&batch).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	value, tagID := "Coffee", tag.ID.String()
	rule := &models.Rule{FamilyID: f.Family.ID, Active: true,
		Conditions: []models.RuleCondition{{ConditionType: models.CondName, Operator: "regex", Value: ptr(`^starbucks \d+$`)}},
		Actions:    []models.RuleAction{{ActionType: models.ActRename, Value: &value}, {ActionType: models.ActAddTag, Value: &tagID}}}
	if err := store.CreateRule(ctx, rule); err != nil {
		t.Fatal(err)
	}
	run, err := store.CreateRuleRun(ctx, f.Family.ID, rule.ID, "manual")
	if err != nil {
		t.Fatal(err)
	}
	task, err := jobs.NewRuleApplyTask(f.Family.ID, run.ID)
	if err != nil {
		t.Fatal(err)
	}

	// The first attempt dies in its second batch.
	killCtx, cancel := context.WithCancel(ctx)
	hook := &cancelOnWrite{cancel: cancel}
	hook.armed.Store(true)
	dying := &jobs.Handlers{Store: models.NewStore(store.DB().WithQueryHook(hook)), Queue: queue, Log: log}
	if err := dying.RuleApply(killCtx, task); err == nil {
		t.Fatal("the cut-off attempt reported success")
	}
	h := &jobs.Handlers{Store: store, Queue: queue, Log: log}
	mid, err := store.RuleRun(ctx, f.Family.ID, run.ID)
	if err != nil || mid.Status != models.RuleRunPending || mid.TransactionsProcessed != jobs.RuleApplyBatch {
		t.Fatalf("after the kill: %+v %v; want pending with one batch done", mid, err)
	}

	// A real worker carries the run on.
	runWorker(t, worker.Options{Redis: opt, Handlers: h, Logger: log, Concurrency: 2, BalanceSweepCron: "@every 1h"})
	if _, err := queue.Enqueue(task); err != nil {
		t.Fatal(err)
	}
	var end *models.RuleRun
	waitFor(t, "the rule run to end", func() (bool, string) {
		end, err = store.RuleRun(ctx, f.Family.ID, run.ID)
		if err != nil {
			return false, err.Error()
		}
		return end.Status != models.RuleRunPending, fmt.Sprintf("%s %d/%d", end.Status, end.TransactionsProcessed, end.TransactionsQueued)
	})
	matching := (total + every - 1) / every
	if end.Status != models.RuleRunSuccess || end.TransactionsQueued != total || end.TransactionsProcessed != total ||
		end.TransactionsModified != matching {
		t.Fatalf("run %+v; want success, %d processed, %d modified", end, total, matching)
	}
	var renamed, links int
	if err := store.DB().NewSelect().Table("transactions").ColumnExpr("count(*)").Where("family_id = ?", f.Family.ID).
		Where("name = 'Coffee'").Where("rule_id = ?", rule.ID).Scan(ctx, &renamed); err != nil {
		t.Fatal(err)
	}
	if err := store.DB().NewSelect().Table("transaction_tags").ColumnExpr("count(*)").Where("family_id = ?", f.Family.ID).
		Scan(ctx, &links); err != nil {
		t.Fatal(err)
	}
	if renamed != matching || links != matching {
		t.Fatalf("%d renamed and %d tagged, want %d each", renamed, links, matching)
	}

	// Delivered again, the finished run does nothing.
	if err := h.RuleApply(ctx, task); err != nil {
		t.Fatal(err)
	}
	if again, _ := store.RuleRun(ctx, f.Family.ID, run.ID); again.TransactionsProcessed != total || again.TransactionsModified != matching {
		t.Fatalf("redelivery changed the run: %+v", again)
	}
}

func ptr(s string) *string { return &s }
