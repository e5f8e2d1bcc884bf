package models_test

import (
	"context"
	"testing"

	"coffer/models"
	"coffer/models/modelstest"
)

// TestBeginKeepsRulesStep: a store bound to a transaction by Begin files
// rows with the rules, as the store it came from does.
func TestBeginKeepsRulesStep(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "begin-rules")
	cat := &models.Category{FamilyID: f.Family.ID, Name: "Coffee", Color: "#000000", Icon: "cup", Classification: "expense"}
	if err := s.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	rule := &models.Rule{FamilyID: f.Family.ID, Active: true,
		Conditions: []models.RuleCondition{cond(models.CondName, "like", "starbucks")},
		Actions:    []models.RuleAction{action(models.ActSetCategory, cat.ID.String())}}
	if err := s.CreateRule(ctx, rule); err != nil {
		t.Fatal(err)
	}
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	if tx.Rules == nil {
		t.Fatal("the store of a transaction has no rules step")
	}
	row, created, err := tx.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
		Date: "2024-01-15", Amount: 450, Currency: "USD", Name: "STARBUCKS #12"}, nil)
	if err != nil || !created {
		t.Fatalf("create: %v %v", err, created)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := s.Transaction(ctx, f.Family.ID, row.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.CategoryID == nil || *got.CategoryID != cat.ID || got.RuleID == nil || *got.RuleID != rule.ID {
		t.Fatalf("not filed by the rule: category %v rule %v", got.CategoryID, got.RuleID)
	}
}
