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

	// The person confirms (the web process's policy).
	web := jobs.UseBalances(e.store, asynq.NewClientFromRedisClient(e.rdb), bridgetest.Logger(t))
	if _, err := assistant.Confirm(ctx, e.store, assistant.Caller{FamilyID: fam, UserID: e.fam.User.ID}, &ps[0]); err != nil {
		t.Fatal(err)
	}
	if queued, settled := web.Counts(); queued != 1 || settled != 0 {
		t.Errorf("confirm: the policy queued %d and settled %d balances, want 1 queued", queued, settled)
	}
	runBalance(t, e.store, insp, fam, acct)
	if a, _ := e.store.Account(ctx, fam, acct); a.Balance != -1300*money.AmountScale {
		t.Errorf("after the confirmed proposal: balance %s", a.Balance)
	}

	// An MCP client's call of the same tool (another web process).
	mcp := jobs.UseBalances(e.store, asynq.NewClientFromRedisClient(e.rdb), bridgetest.Logger(t))
	caller := assistant.Caller{FamilyID: fam, UserID: e.fam.User.ID, Role: models.RoleAdmin, MayWrite: true}
	if _, err := assistant.Call(ctx, e.store, caller, "update_transaction", fmt.Sprintf(`{"id": %q, "amount": "1400"}`, rent.ID)); err != nil {
		t.Fatal(err)
	}
	if queued, settled := mcp.Counts(); queued != 1 || settled != 0 {
		t.Errorf("MCP: the policy queued %d and settled %d balances, want 1 queued", queued, settled)
	}
	runBalance(t, e.store, insp, fam, acct)
	if a, _ := e.store.Account(ctx, fam, acct); a.Balance != -1400*money.AmountScale {
		t.Errorf("after the MCP call: balance %s", a.Balance)
	}
}
