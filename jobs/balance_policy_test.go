package jobs_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/assistant"
	"coffer/jobs/assistant/assistanttest"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/money"
)

// runBalance runs the account's queued balance recalculation as the
// worker would, and removes it; it fails the test when none is queued.
func runBalance(t *testing.T, store *models.Store, insp *asynq.Inspector, familyID, accountID uuid.UUID) {
	t.Helper()
	info, err := insp.GetTaskInfo(jobs.QueueDefault, "account:balance:"+accountID.String())
	if err != nil {
		t.Fatalf("no balance task queued: %v", err)
	}
	h := &jobs.Handlers{Store: store, Log: bridgetest.Logger(t)}
	if err := h.AccountBalance(context.Background(), asynq.NewTask(info.Type, info.Payload)); err != nil {
		t.Fatal(err)
	}
	if err := insp.DeleteTask(jobs.QueueDefault, info.ID); err != nil {
		t.Fatal(err)
	}
}

// TestBalancePolicyAssistant: the assistant's write tool, run when a
// person confirms its proposal and when an MCP client with a writing key
// calls it, hands the account it changed to the one balance policy, which
// queues its recalculation; once that has run, the balance is right. The
// tool recomputing inline (as it once did) would leave the count at 0.
func TestBalancePolicyAssistant(t *testing.T) {
	e := newAssistant(t, nil)
	ctx := context.Background()
	fam, acct := e.fam.Family.ID, e.fam.Account.ID
	insp := asynq.NewInspectorFromRedisClient(e.rdb)
	t.Cleanup(func() { _ = insp.DeleteTask(jobs.QueueDefault, "account:balance:"+acct.String()) })
	if err := e.store.SetAssistantMayWrite(ctx, fam, e.fam.User.ID, true); err != nil {
		t.Fatal(err)
	}
	rent := &models.Transaction{FamilyID: fam, AccountID: acct, Date: "2026-11-01", Amount: 1200 * money.AmountScale, Currency: "USD", Name: "Rent"}
	if _, _, err := e.store.CreateTransaction(ctx, rent, nil); err != nil {
		t.Fatal(err)
	}
	e.fake.Script = assistanttest.Sequence(
		assistanttest.Reply{Calls: []assistanttest.Call{{Name: "update_transaction",
			Arguments: fmt.Sprintf(`{"id": %q, "amount": "1300", "nature": "expense"}`, rent.ID)}}},
		assistanttest.Reply{Content: "Proposed."})
	c, q := e.ask(t, "the rent went up to 1300")
	if err := e.reply(c, q); err != nil {
		t.Fatal(err)
	}
	ps, err := e.store.ChatProposals(ctx, fam, e.fam.User.ID, c.ID)
	if err != nil || len(ps) != 1 {
		t.Fatalf("proposals %v (%v)", ps, err)
	}

	// door runs write in a web process of its own (a policy of its own),
	// then the queued recalculation, and checks the balance.
	door := func(name string, write func() error, want money.Amount) {
		t.Helper()
		policy := jobs.UseBalances(e.store, asynq.NewClientFromRedisClient(e.rdb), bridgetest.Logger(t))
		if err := write(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if queued, settled := policy.Counts(); queued != 1 || settled != 0 {
			t.Errorf("%s: the policy queued %d and settled %d balances, want 1 queued", name, queued, settled)
		}
		runBalance(t, e.store, insp, fam, acct)
		if a, _ := e.store.Account(ctx, fam, acct); a.Balance != want {
			t.Errorf("after %s: balance %s, want %s", name, a.Balance, want)
		}
	}
	door("the confirmed proposal", func() error {
		_, err := assistant.Confirm(ctx, e.store, assistant.Caller{FamilyID: fam, UserID: e.fam.User.ID}, &ps[0])
		return err
	}, -1300*money.AmountScale)
	caller := assistant.Caller{FamilyID: fam, UserID: e.fam.User.ID, Role: models.RoleAdmin, MayWrite: true}
	door("an MCP client's call", func() error {
		_, err := assistant.Call(ctx, e.store, caller, "update_transaction", fmt.Sprintf(`{"id": %q, "amount": "1400"}`, rent.ID))
		return err
	}, -1400*money.AmountScale)
}
