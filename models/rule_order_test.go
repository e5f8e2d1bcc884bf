package models_test

import (
	"context"
	"errors"
	"testing"

	"coffer/models"
	"coffer/models/modelstest"
)

// Rules move up and down the order they run in, and "Apply all" runs
// every active rule in that order over what is there: the first to set
// a field wins, as on a new row.
func TestRuleOrderAndApplyAll(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "order")
	other := modelstest.NewFamily(t, s, "elsewhere")
	cats := map[string]*models.Category{}
	for _, n := range []string{"Coffee", "Treats"} {
		c := &models.Category{FamilyID: f.Family.ID, Name: n, Color: "#000000", Icon: "cup", Classification: "expense"}
		if err := s.CreateCategory(ctx, c); err != nil {
			t.Fatal(err)
		}
		cats[n] = c
	}
	rule := func(name, category string) *models.Rule {
		r := &models.Rule{FamilyID: f.Family.ID, Name: &name, Active: true,
			Conditions: []models.RuleCondition{cond(models.CondName, "like", "starbucks")},
			Actions:    []models.RuleAction{action(models.ActSetCategory, cats[category].ID.String())}}
		if err := s.CreateRule(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	coffee, treats := rule("coffee", "Coffee"), rule("treats", "Treats")
	tx := &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: "2024-01-15", Amount: 1000, Currency: "USD", Name: "STARBUCKS 12"}
	if _, _, err := s.CreateTransaction(ctx, tx, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Transaction(ctx, f.Family.ID, tx.ID); got.CategoryID == nil || *got.CategoryID != cats["Coffee"].ID {
		t.Fatalf("the first rule did not win: %+v", got.CategoryID)
	}

	order := func() []string {
		rules, err := s.OrderedRules(ctx, f.Family.ID)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range rules {
			names = append(names, *r.Name)
		}
		return names
	}
	if err := s.MoveRule(ctx, f.Family.ID, treats.ID, -1); err != nil {
		t.Fatal(err)
	}
	if got := order(); len(got) != 2 || got[0] != "treats" {
		t.Fatalf("after moving treats up: %v", got)
	}
	if err := s.MoveRule(ctx, f.Family.ID, treats.ID, -1); err != nil || order()[0] != "treats" {
		t.Fatalf("moving the first rule up: %v %v", err, order())
	}
	if err := s.MoveRule(ctx, other.Family.ID, coffee.ID, 1); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("another family moves a rule: %v", err)
	}

	// Clear the category the rules set, then apply all: treats is first now.
	if _, err := s.DB().NewUpdate().Table("transactions").Set("category_id = NULL").Where("id = ?", tx.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	run, err := s.CreateAllRulesRun(ctx, f.Family.ID)
	if err != nil || !run.AllRules || run.RuleID != nil || run.TransactionsQueued != 1 {
		t.Fatalf("run: %+v %v", run, err)
	}
	for done := false; !done; {
		if done, _, err = s.RuleRunStep(ctx, f.Family.ID, run.ID, 10); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.RuleRun(ctx, f.Family.ID, run.ID)
	if err != nil || got.Status != models.RuleRunSuccess || got.TransactionsModified != 1 {
		t.Fatalf("run after: %+v %v", got, err)
	}
	if got, _ := s.Transaction(ctx, f.Family.ID, tx.ID); got.CategoryID == nil || *got.CategoryID != cats["Treats"].ID {
		t.Fatalf("apply all: %+v", got.CategoryID)
	}
}
