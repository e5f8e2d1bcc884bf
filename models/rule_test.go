package models_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/modelstest"
)

func TestRuleStoreAndRun(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "rules")
	other := modelstest.NewFamily(t, s, "others")
	cat := &models.Category{FamilyID: f.Family.ID, Name: "Coffee", Color: "#000000", Icon: "cup", Classification: "expense"}
	if err := s.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	tag := &models.Tag{FamilyID: f.Family.ID, Name: "caffeine", Color: "#000000"}
	if err := s.CreateTag(ctx, tag); err != nil {
		t.Fatal(err)
	}
	var ids []uuid.UUID
	for i := range 25 {
		name := "Grocer"
		if i%5 == 0 {
			name = fmt.Sprintf("Starbucks %d", i)
		}
		tx := &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: "2024-01-15", Amount: 1000, Currency: "USD", Name: name}
		if _, _, err := s.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tx.ID)
	}
	// A person chose this one's category: no rule changes it.
	other1 := &models.Category{FamilyID: f.Family.ID, Name: "Treats", Color: "#000000", Icon: "x", Classification: "expense"}
	if err := s.CreateCategory(ctx, other1); err != nil {
		t.Fatal(err)
	}
	edited := &models.Transaction{ID: ids[5], FamilyID: f.Family.ID, AccountID: f.Account.ID, CategoryID: &other1.ID}
	if _, err := s.UpdateTransaction(ctx, edited, []string{"category_id"}, nil); err != nil {
		t.Fatal(err)
	}

	name := "Coffee"
	r := &models.Rule{FamilyID: f.Family.ID, Name: &name, Active: true,
		Conditions: []models.RuleCondition{cond(models.CondName, "like", "starbucks")},
		Actions:    []models.RuleAction{action(models.ActSetCategory, cat.ID.String()), action(models.ActAddTag, tag.ID.String())}}
	if err := s.CreateRule(ctx, r); err != nil {
		t.Fatal(err)
	}
	// Saving changed nothing.
	if got, _ := s.Transaction(ctx, f.Family.ID, ids[0]); got.CategoryID != nil {
		t.Fatalf("saving a rule changed a row: %+v", got)
	}
	// Another family's category is refused, and the rule is not theirs to read.
	bad := &models.Rule{FamilyID: other.Family.ID, Active: true, Conditions: r.Conditions,
		Actions: []models.RuleAction{action(models.ActSetCategory, cat.ID.String())}}
	var inv *models.InvalidError
	if err := s.CreateRule(ctx, bad); !errors.As(err, &inv) || inv.Problems[0] != "Category "+cat.ID.String()+" not found" {
		t.Fatalf("foreign category: %v", err)
	}
	if _, err := s.Rule(ctx, other.Family.ID, r.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("cross-family read: %v", err)
	}

	p, err := s.PreviewRule(ctx, r, 2)
	if err != nil || p.Total != 5 || len(p.Changes) != 2 {
		t.Fatalf("preview: %+v, %v; want 2 of 5 (the locked row still gets the tag)", p, err)
	}

	run, err := s.CreateRuleRun(ctx, f.Family.ID, r.ID, "manual")
	if err != nil || run.TransactionsQueued != 25 {
		t.Fatalf("run: %+v %v", run, err)
	}
	steps := 0
	for done := false; !done; steps++ {
		if done, _, err = s.RuleRunStep(ctx, f.Family.ID, run.ID, 10); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.RuleRun(ctx, f.Family.ID, run.ID)
	if err != nil || got.Status != models.RuleRunSuccess || got.TransactionsProcessed != 25 || got.TransactionsModified != 5 || steps != 3 {
		t.Fatalf("run after %d steps: %+v %v", steps, got, err)
	}
	for i, id := range ids {
		tx, err := s.Transaction(ctx, f.Family.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case i == 5:
			if *tx.CategoryID != other1.ID || len(tx.Tags) != 1 {
				t.Fatalf("locked row: category %v tags %v", tx.CategoryID, tx.Tags)
			}
		case i%5 == 0:
			if tx.CategoryID == nil || *tx.CategoryID != cat.ID || len(tx.Tags) != 1 || tx.RuleID == nil || *tx.RuleID != r.ID {
				t.Fatalf("row %d: %+v", i, tx)
			}
		default:
			if tx.CategoryID != nil || tx.RuleID != nil {
				t.Fatalf("row %d changed: %+v", i, tx)
			}
		}
	}
	// A finished run is not run again.
	if done, _, err := s.RuleRunStep(ctx, f.Family.ID, run.ID, 10); !done || err != nil {
		t.Fatalf("rerun: %v %v", done, err)
	}
	runs, n, err := s.RuleRuns(ctx, f.Family.ID, models.RuleRunFilter{RuleID: &r.ID}, models.Page{Number: 1, Size: 10})
	if err != nil || n != 1 || runs[0].Rule == nil || runs[0].Rule.ID != r.ID {
		t.Fatalf("runs: %+v %d %v", runs, n, err)
	}
	if _, n, _ := s.RuleRuns(ctx, other.Family.ID, models.RuleRunFilter{}, models.Page{Number: 1, Size: 10}); n != 0 {
		t.Fatalf("other family sees %d runs", n)
	}

	// Replacing the conditions and actions; a deleted category drops the action.
	r.Conditions = []models.RuleCondition{cond(models.CondCompound, "or", "", cond(models.CondName, "like", "grocer"), cond(models.CondAmount, ">", "1000"))}
	r.Actions = []models.RuleAction{action(models.ActExclude, "")}
	if err := s.UpdateRule(ctx, r, true, true); err != nil {
		t.Fatal(err)
	}
	back, err := s.Rule(ctx, f.Family.ID, r.ID)
	if err != nil || len(back.Conditions) != 1 || len(back.Conditions[0].SubConditions) != 2 || len(back.Actions) != 1 {
		t.Fatalf("updated rule: %+v %v", back, err)
	}
	accounts, err := s.ApplyRulesTo(ctx, f.Family.ID, ids[:2])
	if err != nil || len(accounts) != 1 || accounts[0] != f.Account.ID {
		t.Fatalf("apply to new rows: %v %v", accounts, err)
	}
	if tx, _ := s.Transaction(ctx, f.Family.ID, ids[1]); !tx.Excluded || *tx.ExcludedReason != models.ExcludedByRule {
		t.Fatalf("row 1 not excluded: %+v", tx)
	}
	if err := s.DeleteRule(ctx, f.Family.ID, r.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.RuleRun(ctx, f.Family.ID, run.ID); got.RuleID != nil || got.RuleName == nil || *got.RuleName != "Coffee" {
		t.Fatalf("run after rule deleted: %+v", got)
	}
}
