package models_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// reconcileFixture is a family whose checking account opens at 1,000.00
// and holds three rows: -500.00 (pay, in), 120.00 and 30.00 (out), in
// January, and one in March.
type reconcileFixture struct {
	*modelstest.FamilyFixture
	rows  []*models.Transaction
	march *models.Transaction
}

func newReconcileFixture(t *testing.T, s *models.Store, name string) *reconcileFixture {
	t.Helper()
	ctx := context.Background()
	f := &reconcileFixture{FamilyFixture: modelstest.NewFamily(t, s, name)}
	f.Account.OpeningBalance = money.Amount(1000_0000)
	if err := s.UpdateAccount(ctx, f.Account, "opening_balance"); err != nil {
		t.Fatal(err)
	}
	add := func(date civil.Date, amount money.Amount, name string) *models.Transaction {
		tx := &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: date, Amount: amount, Currency: "USD", Name: name}
		if _, _, err := s.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	f.rows = []*models.Transaction{add("2026-01-05", -500_0000, "Pay"), add("2026-01-10", 120_0000, "Groceries"), add("2026-01-20", 30_0000, "Coffee beans")}
	f.march = add("2026-03-01", 10_0000, "Later")
	return f
}

// TestReconciliationFinish: the cleared balance is the opening balance
// and the cleared rows up to the statement date; finishing is refused
// (nothing written) until it equals the statement's, then locks exactly
// the cleared rows up to that day and keeps the record.
func TestReconciliationFinish(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := newReconcileFixture(t, s, "reconcile")
	fam, acct, user := f.Family.ID, f.Account.ID, f.User.ID

	rc, err := s.StartReconciliation(ctx, fam, acct, user, "2026-01-31", 1380_0000) // 1000 + 500 - 120
	if err != nil {
		t.Fatal(err)
	}
	rows, n, err := s.ReconcileRows(ctx, rc)
	if err != nil || n != 3 || len(rows) != 3 {
		t.Fatalf("rows to reconcile: %d of %d, err %v; want the 3 January rows", len(rows), n, err)
	}
	// March's row is cleared but after the statement date: not counted.
	if err := s.SetCleared(ctx, fam, acct, []uuid.UUID{f.rows[0].ID, f.rows[1].ID, f.rows[2].ID, f.march.ID},
		[]uuid.UUID{f.rows[0].ID, f.rows[2].ID, f.march.ID}); err != nil {
		t.Fatal(err)
	}
	if b, err := s.ClearedBalance(ctx, fam, acct, "2026-01-31"); err != nil || b != 1470_0000 {
		t.Fatalf("cleared balance %v, err %v; want 1470.00", b, err)
	}
	var inv *models.InvalidError
	if _, err := s.FinishReconciliation(ctx, fam, acct, user); !errors.As(err, &inv) {
		t.Fatalf("finish with a difference: err %v, want an InvalidError", err)
	}
	if open, err := s.OpenReconciliation(ctx, fam, acct); err != nil || open.Status != models.ReconciliationInProgress {
		t.Fatalf("after a refused finish: %+v, %v; want still in progress", open, err)
	}
	for _, r := range f.rows {
		if got, _ := s.Transaction(ctx, fam, r.ID); got.Reconciled() {
			t.Fatalf("row %s locked by a refused finish", r.Name)
		}
	}
	// Tick the groceries instead of the coffee: 1000 + 500 - 120 = 1380.
	if err := s.SetCleared(ctx, fam, acct, []uuid.UUID{f.rows[1].ID, f.rows[2].ID}, []uuid.UUID{f.rows[1].ID}); err != nil {
		t.Fatal(err)
	}
	done, err := s.FinishReconciliation(ctx, fam, acct, user)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != models.ReconciliationFinished || done.ClearedBalance == nil || *done.ClearedBalance != 1380_0000 || done.FinishedAt == nil {
		t.Fatalf("finished %+v", done)
	}
	want := map[uuid.UUID]bool{f.rows[0].ID: true, f.rows[1].ID: true, f.rows[2].ID: false, f.march.ID: false}
	for id, locked := range want {
		got, err := s.Transaction(ctx, fam, id)
		if err != nil || got.Reconciled() != locked {
			t.Fatalf("row %s reconciled=%v, want %v (err %v)", got.Name, got.Reconciled(), locked, err)
		}
	}
	list, total, err := s.Reconciliations(ctx, fam, acct, models.Page{Number: 1, Size: 10})
	if err != nil || total != 1 || list[0].User == nil || list[0].User.ID != user {
		t.Fatalf("list: %+v total %d err %v", list, total, err)
	}
	if _, err := s.OpenReconciliation(ctx, fam, acct); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("open after finish: %v, want ErrNotFound", err)
	}
}

// TestReconciledRowLocked: a person's edit, delete or bulk edit of a
// locked row is refused or skipped; unlocking then editing works; another
// family reaches none of it.
func TestReconciledRowLocked(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := newReconcileFixture(t, s, "locked")
	other := newReconcileFixture(t, s, "other")
	fam, acct, user := f.Family.ID, f.Account.ID, f.User.ID
	pay := f.rows[0]
	if _, err := s.StartReconciliation(ctx, fam, acct, user, "2026-01-31", 1500_0000); err != nil {
		t.Fatal(err)
	}
	// Rows of another account or family are refused, and nothing is ticked.
	var inv *models.InvalidError
	if err := s.SetCleared(ctx, fam, acct, nil, []uuid.UUID{pay.ID, other.rows[0].ID}); !errors.As(err, &inv) {
		t.Fatalf("another family's row: %v, want refused", err)
	}
	if got, _ := s.Transaction(ctx, fam, pay.ID); got.Cleared {
		t.Fatal("a refused tick was written")
	}
	if _, err := s.StartReconciliation(ctx, other.Family.ID, acct, other.User.ID, "2026-01-31", 0); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("another family's account: %v, want ErrNotFound", err)
	}
	if err := s.SetCleared(ctx, fam, acct, nil, []uuid.UUID{pay.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FinishReconciliation(ctx, fam, acct, user); err != nil {
		t.Fatal(err)
	}

	edit := *pay
	edit.Name = "Salary"
	if _, err := s.UpdateTransaction(ctx, &edit, []string{"name"}, nil); !errors.Is(err, models.ErrReconciled) {
		t.Fatalf("edit of a locked row: %v, want ErrReconciled", err)
	}
	if _, err := s.DeleteTransaction(ctx, fam, pay.ID); !errors.Is(err, models.ErrReconciled) {
		t.Fatalf("delete of a locked row: %v, want ErrReconciled", err)
	}
	if err := s.SetCleared(ctx, fam, acct, []uuid.UUID{pay.ID}, nil); !errors.Is(err, models.ErrReconciled) {
		t.Fatalf("untick of a locked row: %v, want ErrReconciled", err)
	}
	if n, err := s.BulkAddTags(ctx, fam, []uuid.UUID{pay.ID, f.rows[1].ID}, []uuid.UUID{newTag(t, s, fam)}); err != nil || n != 1 {
		t.Fatalf("bulk tags: %d, %v; want the unlocked row only", n, err)
	}
	if n, err := s.BulkSetCategory(ctx, fam, []uuid.UUID{pay.ID}, nil); err != nil || n != 0 {
		t.Fatalf("bulk category: %d, %v; want 0", n, err)
	}
	if _, err := s.SplitTransaction(ctx, fam, pay.ID, []models.SplitPart{{Name: "a", Amount: pay.Amount}}); !errors.Is(err, models.ErrReconciled) {
		t.Fatalf("split of a locked row: %v, want ErrReconciled", err)
	}
	if err := s.UnlockTransaction(ctx, other.Family.ID, pay.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("unlock by another family: %v, want ErrNotFound", err)
	}
	if err := s.UnlockTransaction(ctx, fam, pay.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateTransaction(ctx, &edit, []string{"name"}, nil); err != nil {
		t.Fatalf("edit after unlock: %v", err)
	}
	if got, _ := s.Transaction(ctx, fam, pay.ID); got.Name != "Salary" || got.Reconciled() || !got.Cleared {
		t.Fatalf("after unlock and edit: %+v", got)
	}
}

// TestRuleRunSkipsReconciled: a run of every rule leaves a locked row as
// it is and files the others.
func TestRuleRunSkipsReconciled(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := newReconcileFixture(t, s, "rules")
	fam, acct := f.Family.ID, f.Account.ID
	if _, err := s.StartReconciliation(ctx, fam, acct, f.User.ID, "2026-01-31", 880_0000); err != nil { // 1000 - 120
		t.Fatal(err)
	}
	if err := s.SetCleared(ctx, fam, acct, nil, []uuid.UUID{f.rows[1].ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FinishReconciliation(ctx, fam, acct, f.User.ID); err != nil {
		t.Fatal(err)
	}
	name := "rename all"
	r := &models.Rule{FamilyID: fam, Name: &name, Active: true,
		Conditions: []models.RuleCondition{cond(models.CondName, "like", "o")},
		Actions:    []models.RuleAction{action(models.ActRename, "Renamed")}}
	if err := s.CreateRule(ctx, r); err != nil {
		t.Fatal(err)
	}
	run, err := s.CreateAllRulesRun(ctx, fam)
	if err != nil {
		t.Fatal(err)
	}
	for done := false; !done; {
		if done, _, err = s.RuleRunStep(ctx, fam, run.ID, 10); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.RuleRun(ctx, fam, run.ID); err != nil || got.TransactionsReconciled != 1 || got.Status != models.RuleRunSuccess {
		t.Fatalf("run: %+v, %v; want one row left alone as reconciled", got, err)
	}
	if got, _ := s.Transaction(ctx, fam, f.rows[1].ID); got.Name != "Groceries" {
		t.Fatalf("the locked row was renamed to %q", got.Name)
	}
	if got, _ := s.Transaction(ctx, fam, f.rows[2].ID); got.Name != "Renamed" {
		t.Fatalf("an unlocked row was not renamed: %q", got.Name)
	}
}

func newTag(t *testing.T, s *models.Store, familyID uuid.UUID) uuid.UUID {
	t.Helper()
	tag := &models.Tag{FamilyID: familyID, Name: "Checked", Color: "#000000"}
	if err := s.CreateTag(context.Background(), tag); err != nil {
		t.Fatal(err)
	}
	return tag.ID
}

// TestTransferWithReconciledSideKept: deleting a transfer one of whose
// sides is reconciled is refused, and both sides stay.
func TestTransferWithReconciledSideKept(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "transfer")
	fam, acct := f.Family.ID, f.Account.ID
	savings := &models.Account{FamilyID: fam, Name: "Savings", AccountType: "depository", Currency: "USD"}
	if err := s.CreateAccount(ctx, savings); err != nil {
		t.Fatal(err)
	}
	id, err := s.CreateTransfer(ctx, fam, models.NewTransfer{FromAccountID: acct, ToAccountID: savings.ID, Amount: 50_0000, Date: "2026-01-02"})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.Transfer(ctx, fam, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetCleared(ctx, fam, acct, nil, []uuid.UUID{tr.OutflowTransactionID}); err != nil {
		t.Fatal(err)
	}
	b, err := s.ClearedBalance(ctx, fam, acct, "2026-01-31")
	if err != nil || b != -50_0000 {
		t.Fatalf("cleared balance %v, %v; want -50.00", b, err)
	}
	if _, err := s.StartReconciliation(ctx, fam, acct, f.User.ID, "2026-01-31", b); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FinishReconciliation(ctx, fam, acct, f.User.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteTransfer(ctx, fam, id); !errors.Is(err, models.ErrReconciled) {
		t.Fatalf("delete a transfer with a reconciled side: %v, want ErrReconciled", err)
	}
	for _, side := range []uuid.UUID{tr.InflowTransactionID, tr.OutflowTransactionID} {
		if _, err := s.Transaction(ctx, fam, side); err != nil {
			t.Fatalf("side %s after the refused delete: %v", side, err)
		}
	}
}
