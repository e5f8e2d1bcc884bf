package models_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// TestSplitParentLeftAlone: once a transaction is split, nothing that
// shows or counts excluded rows treats its parent as one a person left
// out, and nothing un-excludes, re-files or pairs it: the rules skip the
// parent (and never make a part a transfer), transfer suggestions and
// candidates skip parent and parts, the "left out" note does not count
// it, a bulk category edit passes it by.
func TestSplitParentLeftAlone(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "split-alone")
	fam, acct := f.Family.ID, f.Account.ID
	card := &models.Account{FamilyID: fam, Name: "Card", AccountType: "credit_card", Currency: "USD"}
	cat := &models.Category{FamilyID: fam, Name: "Shopping", Color: "#000000", Icon: "bag", Classification: "expense"}
	if err := s.CreateAccount(ctx, card); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	add := func(a uuid.UUID, amount int64, name string) *models.Transaction {
		tx := &models.Transaction{FamilyID: fam, AccountID: a, Date: "2026-01-10", Amount: money.Amount(amount), Currency: "USD", Name: name}
		row, _, err := s.CreateTransaction(ctx, tx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return row
	}
	parent := add(acct, 100_0000, "Warehouse")
	add(card.ID, -100_0000, "Mirror of the whole")
	add(card.ID, -60_0000, "Mirror of a part")
	if _, err := s.SplitTransaction(ctx, fam, parent.ID, []models.SplitPart{{Name: "Warehouse food", Amount: 60_0000},
		{Name: "Warehouse soap", Amount: 40_0000}}); err != nil {
		t.Fatal(err)
	}
	p, err := s.Transaction(ctx, fam, parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	partIDs := []uuid.UUID{p.Splits[0].ID, p.Splits[1].ID}

	// Rules: file and exclude anything named Warehouse, and make it a transfer to the card.
	rule := &models.Rule{FamilyID: fam, Active: true,
		Conditions: []models.RuleCondition{cond(models.CondName, "like", "Warehouse")},
		Actions: []models.RuleAction{action(models.ActSetCategory, cat.ID.String()), action(models.ActExclude, ""),
			action(models.ActTransfer, card.ID.String())}}
	if err := s.CreateRule(ctx, rule); err != nil {
		t.Fatal(err)
	}
	preview, err := s.PreviewRule(ctx, rule, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range preview.Changes {
		if ch.Transaction.ID == parent.ID {
			t.Error("the rule preview shows the split parent")
		}
		if ch.TransferTo != nil {
			t.Errorf("the rule preview makes %s a transfer", ch.Transaction.Name)
		}
	}
	if preview.Total != 2 {
		t.Errorf("the preview changes %d rows, want the 2 parts", preview.Total)
	}
	if _, err := s.ApplyRulesTo(ctx, fam, append([]uuid.UUID{parent.ID}, partIDs...)); err != nil {
		t.Fatal(err)
	}
	p, err = s.Transaction(ctx, fam, parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !p.IsSplitParent() || p.CategoryID != nil || p.RuleID != nil {
		t.Errorf("a rule touched the split parent: reason %v category %v rule %v", p.ExcludedReason, p.CategoryID, p.RuleID)
	}
	for _, part := range p.Splits {
		if part.Transfer != nil {
			t.Errorf("a rule made part %s a transfer", part.Name)
		}
	}
	transfers, _, err := s.Transfers(ctx, fam, models.Page{Number: 1, Size: 10})
	if err != nil || len(transfers) != 0 {
		t.Errorf("transfers after the rules: %d, %v", len(transfers), err)
	}

	// Transfer suggestions and candidates: neither the parent nor a part.
	sugg, err := s.SuggestedTransfers(ctx, fam, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, sg := range sugg {
		for _, id := range append([]uuid.UUID{parent.ID}, partIDs...) {
			if sg.Outflow.ID == id || sg.Inflow.ID == id {
				t.Errorf("suggested a transfer of %s", sg.Outflow.Name)
			}
		}
	}
	for _, id := range append([]uuid.UUID{parent.ID}, partIDs...) {
		if cands, err := s.TransferCandidates(ctx, fam, id); err != nil || len(cands) != 0 {
			t.Errorf("transfer candidates of %s: %d, %v", id, len(cands), err)
		}
	}

	// What the figures leave out: a part the rule excluded, not the parent.
	left, err := s.LeftOutOf(ctx, fam, models.Period{From: "2026-01-01", To: "2026-01-31"})
	if err != nil || left.Excluded != 2 {
		t.Errorf("left out: %+v %v, want the 2 parts the rule excluded", left, err)
	}

	// A bulk category edit passes the parent by.
	n, err := s.BulkSetCategory(ctx, fam, []uuid.UUID{parent.ID}, &cat.ID)
	if err != nil || n != 0 {
		t.Errorf("bulk category on the parent: %d, %v", n, err)
	}
}
