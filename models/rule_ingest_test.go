package models_test

import (
	"context"
	"fmt"
	"testing"

	"coffer/models"
	"coffer/models/modelstest"
)

// TestRulesThroughPipeline: the Store's default rules step files rows on
// every path of the pipeline: a lone row without tags (PostgreSQL's
// one-statement fast path), a batch (COPY from 50 rows on PostgreSQL), and
// a row a rule makes one side of a transfer, whose other side is written
// after it. rule_id, excluded and excluded_reason are stored.
func TestRulesThroughPipeline(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "pipeline-rules")
	cat := &models.Category{FamilyID: f.Family.ID, Name: "Coffee", Color: "#000000", Icon: "cup", Classification: "expense"}
	if err := s.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	savings := &models.Account{FamilyID: f.Family.ID, Name: "Savings", AccountType: "depository", Currency: "USD"}
	if err := s.CreateAccount(ctx, savings); err != nil {
		t.Fatal(err)
	}
	coffee := &models.Rule{FamilyID: f.Family.ID, Active: true,
		Conditions: []models.RuleCondition{cond(models.CondName, "like", "starbucks")},
		Actions: []models.RuleAction{action(models.ActSetCategory, cat.ID.String()), action(models.ActRename, "Starbucks"),
			action(models.ActExclude, "")}}
	move := &models.Rule{FamilyID: f.Family.ID, Active: true,
		Conditions: []models.RuleCondition{cond(models.CondName, "like", "to savings")},
		Actions:    []models.RuleAction{action(models.ActTransfer, savings.ID.String())}}
	for _, r := range []*models.Rule{coffee, move} {
		if err := s.CreateRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	filed := func(t *testing.T, tx *models.Transaction) {
		t.Helper()
		got, err := s.Transaction(ctx, f.Family.ID, tx.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.CategoryID == nil || *got.CategoryID != cat.ID || got.Name != "Starbucks" || !got.Excluded ||
			models.Str(got.ExcludedReason) != models.ExcludedByRule || got.RuleID == nil || *got.RuleID != coffee.ID {
			t.Fatalf("not filed as stored: %+v", got)
		}
	}

	t.Run("one row", func(t *testing.T) {
		tx := &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: "2024-01-15", Amount: 450, Currency: "USD", Name: "STARBUCKS #12"}
		row, created, err := s.CreateTransaction(ctx, tx, nil)
		if err != nil || !created || row.Category == nil || row.Category.ID != cat.ID || row.Name != "Starbucks" {
			t.Fatalf("create: %v %v %+v", err, created, row)
		}
		filed(t, row)
	})
	t.Run("batch", func(t *testing.T) {
		var rows []*models.NewTransaction
		for i := range 60 {
			name := fmt.Sprintf("Grocer %d", i)
			if i%3 == 0 {
				name = fmt.Sprintf("starbucks %d", i)
			}
			rows = append(rows, &models.NewTransaction{Row: &models.Transaction{AccountID: f.Account.ID, Date: "2024-01-16",
				Amount: 100, Currency: "USD", Name: name}})
		}
		if _, err := s.IngestTransactions(ctx, f.Family.ID, rows); err != nil {
			t.Fatal(err)
		}
		for i, r := range rows {
			if r.Status != models.IngestCreated {
				t.Fatalf("row %d: %s %v", i, r.Status, r.Problems)
			}
			if i%3 == 0 {
				filed(t, r.Row)
			} else if got, _ := s.Transaction(ctx, f.Family.ID, r.Row.ID); got.RuleID != nil || got.CategoryID != nil {
				t.Fatalf("row %d filed: %+v", i, got)
			}
		}
	})
	t.Run("transfer", func(t *testing.T) {
		tx := &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: "2024-01-17", Amount: 5000, Currency: "USD", Name: "Move to savings"}
		rows := []*models.NewTransaction{{Row: tx}}
		changed, err := s.IngestTransactions(ctx, f.Family.ID, rows)
		if err != nil || rows[0].Status != models.IngestCreated {
			t.Fatalf("create: %v %s %v", err, rows[0].Status, rows[0].Problems)
		}
		row := rows[0].Row
		if row.Transfer == nil || row.Transfer.OtherAccount == nil || row.Transfer.OtherAccount.ID != savings.ID ||
			row.RuleID == nil || *row.RuleID != move.ID {
			t.Fatalf("no transfer: %+v", row)
		}
		if len(changed) != 2 {
			t.Fatalf("changed accounts %v, want both sides'", changed)
		}
	})
}
