package jobs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/importfile"
	"coffer/models/modelstest"
	"coffer/models/money"
)

const redisDB = 12

// newHandlers builds the handlers on a throwaway store and the test
// Redis, with an inspector of that Redis for the tests' checks.
func newHandlers(t *testing.T) (*jobs.Handlers, *models.Store, *asynq.Inspector) {
	t.Helper()
	store := modelstest.NewStore(t)
	_, rdb := modelstest.RedisClient(t, redisDB)
	h := &jobs.Handlers{Store: store, Queue: asynq.NewClientFromRedisClient(rdb), Log: bridgetest.Logger(t)}
	return h, store, asynq.NewInspectorFromRedisClient(rdb)
}

// forgetSweeps deletes the balance and notification sweeps that a
// requeue queued.
func forgetSweeps(insp *asynq.Inspector) {
	tasks, _ := insp.ListPendingTasks(jobs.QueueLow)
	for _, ti := range tasks {
		if ti.Type == jobs.TypeBalanceSweep || ti.Type == jobs.TypeNotifySweep {
			_ = insp.DeleteTask(jobs.QueueLow, ti.ID)
		}
	}
}

func TestAccountBalanceIsIdempotent(t *testing.T) {
	h, store, _ := newHandlers(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "jobs")
	if _, _, err := store.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
		Date: "2024-01-01", Amount: 125000, Currency: "USD", Name: "x"}, nil); err != nil {
		t.Fatal(err)
	}
	task, err := jobs.NewAccountBalanceTask(f.Family.ID, f.Account.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := h.AccountBalance(ctx, asynq.NewTask(task.Type(), task.Payload())); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		a, _ := store.Account(ctx, f.Family.ID, f.Account.ID)
		if a.Balance != -125000 {
			t.Fatalf("run %d: balance %v, want -12.5", i, a.Balance)
		}
	}
	// A deleted account, or one named with another family's id, is a no-op.
	gone, _ := jobs.NewAccountBalanceTask(uuid.New(), f.Account.ID)
	if err := h.AccountBalance(ctx, asynq.NewTask(gone.Type(), gone.Payload())); err != nil {
		t.Fatalf("foreign family: %v", err)
	}
	a, _ := store.Account(ctx, f.Family.ID, f.Account.ID)
	if a.Balance != -125000 {
		t.Fatalf("foreign family changed the balance: %v", a.Balance)
	}
}

// TestAccountBalanceOverflowIsRecorded: two transactions of 900 trillion
// made the job fail with an integer overflow at every retry while the
// account showed a stale balance. Now the job succeeds and the account
// says its balance cannot be computed.
func TestAccountBalanceOverflowIsRecorded(t *testing.T) {
	h, store, _ := newHandlers(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "jobs")
	for range 2 {
		if _, _, err := store.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
			Date: "2024-01-01", Amount: 900_000_000_000_000 * money.AmountScale, Currency: "USD", Name: "x"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	task, err := jobs.NewAccountBalanceTask(f.Family.ID, f.Account.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AccountBalance(ctx, asynq.NewTask(task.Type(), task.Payload())); err != nil {
		t.Fatalf("the job fails (and would be retried): %v", err)
	}
	a, _ := store.Account(ctx, f.Family.ID, f.Account.ID)
	if a.BalanceError == nil || *a.BalanceError != models.BalanceOverflow {
		t.Fatalf("balance error %v, want %q", a.BalanceError, models.BalanceOverflow)
	}
}

func TestBadPayloadsAreNotRetried(t *testing.T) {
	h, _, _ := newHandlers(t)
	for name, fn := range map[string]asynq.HandlerFunc{
		jobs.TypeAccountBalance: h.AccountBalance,
		jobs.TypeImportPublish:  h.ImportPublish,
		jobs.TypeImportRevert:   h.ImportRevert,
		jobs.TypeRestoreRun:     h.RestoreRun,
	} {
		err := fn(context.Background(), asynq.NewTask(name, []byte("{not json")))
		if !errors.Is(err, asynq.SkipRetry) {
			t.Errorf("%s: err = %v, want SkipRetry", name, err)
		}
	}
}

func TestBalancesDeduplicates(t *testing.T) {
	h, store, insp := newHandlers(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "dedupe")
	prefix := "account:balance:" + f.Account.ID.String()
	followUps := func() []string {
		tasks, _ := insp.ListScheduledTasks(jobs.QueueDefault, asynq.PageSize(1000))
		var ids []string
		for _, ti := range tasks {
			if strings.HasPrefix(ti.ID, prefix+":") {
				ids = append(ids, ti.ID)
			}
		}
		return ids
	}
	t.Cleanup(func() {
		for _, id := range append(followUps(), prefix) {
			_ = insp.DeleteTask(jobs.QueueDefault, id)
		}
	})
	// Five writes in one process: one delayed task covers them all.
	web1 := jobs.NewBalances(store, h.Queue, h.Log)
	for i := 0; i < 5; i++ {
		if err := web1.Enqueue(ctx, f.Family.ID, f.Account.ID); err != nil {
			t.Fatal(err)
		}
	}
	info, err := insp.GetTaskInfo(jobs.QueueDefault, prefix)
	if err != nil || info.State != asynq.TaskStateScheduled {
		t.Fatalf("first task: %v %v", info, err)
	}
	if ids := followUps(); len(ids) > 0 {
		t.Errorf("follow-ups %v were queued while the first task had not started", ids)
	}
	// Another process cannot know whether that task has started: it
	// queues one follow-up for the second its writes commit in, which
	// covers them all.
	web2 := jobs.NewBalances(store, h.Queue, h.Log)
	first := time.Now().Truncate(time.Second)
	for i := 0; i < 3; i++ {
		if err := web2.Enqueue(ctx, f.Family.ID, f.Account.ID); err != nil {
			t.Fatal(err)
		}
	}
	last := time.Now().Truncate(time.Second)
	ids := followUps()
	if first.Equal(last) && (len(ids) != 1 || ids[0] != jobs.BalanceFollowUpID(f.Account.ID, first)) || len(ids) < 1 || len(ids) > 2 {
		t.Errorf("follow-ups %v, want one for the second %v", ids, first)
	}
	for _, id := range ids {
		info, err := insp.GetTaskInfo(jobs.QueueDefault, id)
		if err != nil || !info.NextProcessAt.After(first.Add(time.Second)) {
			t.Errorf("follow-up %s starts at %v (%v), before its second ended", id, info.NextProcessAt, err)
		}
	}
}

func TestRequeueRebuildsTheQueue(t *testing.T) {
	h, store, insp := newHandlers(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "requeue")
	waiting := &models.Chat{FamilyID: f.Family.ID, UserID: f.User.ID, Title: "waiting"}
	failed := &models.Chat{FamilyID: f.Family.ID, UserID: f.User.ID, Title: "failed"}
	answered := &models.Chat{FamilyID: f.Family.ID, UserID: f.User.ID, Title: "answered"}
	empty := &models.Chat{FamilyID: f.Family.ID, UserID: f.User.ID, Title: "empty"}
	questions := map[*models.Chat]*models.Message{}
	for c, first := range map[*models.Chat]string{waiting: "hi", failed: "hi", answered: "hi", empty: ""} {
		m, err := store.CreateChat(ctx, c, first)
		if err != nil {
			t.Fatal(err)
		}
		questions[c] = m
	}
	msg := "failed"
	if err := store.SetChatError(ctx, f.Family.ID, failed.ID, &msg); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.SaveReply(ctx, &models.Message{FamilyID: f.Family.ID, ChatID: answered.ID,
		ReplyTo: &questions[answered].ID, Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	taskID := func(c *models.Chat) string { return "chat:reply:" + questions[c].ID.String() }
	t.Cleanup(func() {
		_ = insp.DeleteTask(jobs.QueueDefault, taskID(waiting))
		forgetSweeps(insp)
	})
	// An import that was importing when the process stopped goes on.
	p, err := importfile.Parse([]byte("date,amount\n01/15/2024,1\n"), importfile.CSV, importfile.DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	im := &models.Import{FamilyID: f.Family.ID, AccountID: f.Account.ID, Type: importfile.CSV, RawFile: "x",
		Settings: importfile.DefaultSettings()}
	if err := store.CreateImport(ctx, im, p); err != nil {
		t.Fatal(err)
	}
	if _, err := store.PublishImport(ctx, f.Family.ID, im.ID); err != nil {
		t.Fatal(err)
	}
	if err := h.Requeue(ctx, asynq.NewTask(jobs.TypeRequeue, nil)); err != nil {
		t.Fatal(err)
	}
	pending, _ := insp.ListPendingTasks(jobs.QueueDefault, asynq.PageSize(1000))
	found := false
	for _, ti := range pending {
		if ti.Type == jobs.TypeImportPublish && strings.Contains(string(ti.Payload), im.ID.String()) {
			found = true
			_ = insp.DeleteTask(jobs.QueueDefault, ti.ID)
		}
	}
	if !found {
		t.Error("importing import not re-queued")
	}
	if _, err := insp.GetTaskInfo(jobs.QueueDefault, taskID(waiting)); err != nil {
		t.Errorf("waiting chat not re-queued: %v", err)
	}
	for _, c := range []*models.Chat{failed, answered} {
		if _, err := insp.GetTaskInfo(jobs.QueueDefault, taskID(c)); err == nil {
			t.Errorf("chat %q re-queued", c.Title)
		}
	}
}
