package models_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/importfile"
	"coffer/models/modelstest"
)

// TestImportAppliesRules: a file import's rows go through the pipeline's
// rules step, as every other door's: a category, a tag, a rename and an
// exclusion with rule_id recorded, and a transfer whose other side is the
// import's too. A revert then removes both sides and the tags, and leaves
// the rest of the ledger as it was; a second publication files the rows
// again, each once.
func TestImportAppliesRules(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "import-rules")
	fam := f.Family.ID
	cat := &models.Category{FamilyID: fam, Name: "Coffee", Color: "#000000", Icon: "cup", Classification: "expense"}
	if err := s.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	tag := &models.Tag{FamilyID: fam, Name: "caffeine", Color: "#111111"}
	if err := s.CreateTag(ctx, tag); err != nil {
		t.Fatal(err)
	}
	savings := &models.Account{FamilyID: fam, Name: "Savings", AccountType: "depository", Currency: "USD"}
	if err := s.CreateAccount(ctx, savings); err != nil {
		t.Fatal(err)
	}
	coffee := &models.Rule{FamilyID: fam, Active: true,
		Conditions: []models.RuleCondition{cond(models.CondName, "like", "starbucks")},
		Actions: []models.RuleAction{action(models.ActSetCategory, cat.ID.String()), action(models.ActAddTag, tag.ID.String()),
			action(models.ActRename, "Starbucks"), action(models.ActExclude, "")}}
	move := &models.Rule{FamilyID: fam, Active: true,
		Conditions: []models.RuleCondition{cond(models.CondName, "like", "to savings")},
		Actions:    []models.RuleAction{action(models.ActTransfer, savings.ID.String())}}
	for _, r := range []*models.Rule{coffee, move} {
		if err := s.CreateRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// A row typed by hand beforehand stays whatever the import does.
	before, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: f.Account.ID, Date: "2024-02-01",
		Amount: 100, Currency: "USD", Name: "Lunch"}, nil)
	if err != nil {
		t.Fatal(err)
	}

	file := "date,amount,name\n01/15/2024,-4.50,STARBUCKS #12\n01/16/2024,-3,Bus\n01/17/2024,-50,Move to savings\n"
	im := newImport(t, s, f, importfile.CSV, file)
	check := func(t *testing.T) {
		t.Helper()
		if got := runImport(t, s, im); got.ImportedRowsCount != 3 {
			t.Fatalf("import: %+v", got)
		}
		lines, _, err := s.ImportLines(ctx, fam, im.ID, models.Page{Number: 1, Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]*models.Transaction{}
		for _, l := range lines {
			tx, err := s.Transaction(ctx, fam, *l.TransactionID)
			if err != nil {
				t.Fatal(err)
			}
			byName[tx.Name] = tx
		}
		sb := byName["Starbucks"]
		if sb == nil || sb.CategoryID == nil || *sb.CategoryID != cat.ID || !sb.Excluded || len(sb.Tags) != 1 ||
			sb.Tags[0].ID != tag.ID || sb.RuleID == nil || *sb.RuleID != coffee.ID {
			t.Fatalf("not filed: %+v", sb)
		}
		if bus := byName["Bus"]; bus == nil || bus.RuleID != nil || bus.CategoryID != nil || len(bus.Tags) != 0 {
			t.Fatalf("filed by no rule: %+v", bus)
		}
		mv := byName["Move to savings"]
		if mv == nil || mv.Transfer == nil || mv.Transfer.OtherAccount == nil || mv.Transfer.OtherAccount.ID != savings.ID ||
			mv.RuleID == nil || *mv.RuleID != move.ID {
			t.Fatalf("no transfer: %+v", mv)
		}
		for acct, want := range map[uuid.UUID]int{f.Account.ID: 3, savings.ID: 1} {
			if n := countWhere(t, s, (*models.Transaction)(nil), "family_id = ? AND account_id = ? AND import_id = ?", fam, acct, im.ID); n != want {
				t.Fatalf("%d rows of the import on %s, want %d", n, acct, want)
			}
		}
		others, err := s.ImportAccounts(ctx, fam, im.ID)
		if err != nil || len(others) != 1 || others[0] != savings.ID {
			t.Fatalf("import accounts %v %v", others, err)
		}
	}
	check(t)

	if _, err := s.StartRevert(ctx, fam, im.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RevertImport(ctx, fam, im.ID); err != nil {
		t.Fatal(err)
	}
	if n := countWhere(t, s, (*models.Transaction)(nil), "family_id = ?", fam); n != 1 {
		t.Fatalf("%d transactions after the revert, want the hand-typed one", n)
	}
	for _, table := range []string{"transfers", "transaction_tags"} {
		n, err := s.DB().NewSelect().Table(table).Where("family_id = ?", fam).Count(ctx)
		if err != nil || n != 0 {
			t.Fatalf("%s after the revert: %d %v", table, n, err)
		}
	}
	if got, err := s.Transaction(ctx, fam, before.ID); err != nil || got.Name != "Lunch" {
		t.Fatalf("hand-typed row: %+v %v", got, err)
	}
	// Published again, the rows are filed again, each once.
	check(t)
	if n := countWhere(t, s, (*models.Transaction)(nil), "family_id = ?", fam); n != 5 {
		t.Fatalf("%d transactions, want 5", n)
	}
}

// TestImportKeepsLockedFields: a row a file import wrote and a person then
// edited keeps its edit when the rules run again over the ledger, as
// every other door's rows do.
func TestImportKeepsLockedFields(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "import-locks")
	fam := f.Family.ID
	var cats [2]*models.Category
	for i, name := range []string{"Coffee", "Treats"} {
		cats[i] = &models.Category{FamilyID: fam, Name: name, Color: "#000000", Icon: "cup", Classification: "expense"}
		if err := s.CreateCategory(ctx, cats[i]); err != nil {
			t.Fatal(err)
		}
	}
	rule := &models.Rule{FamilyID: fam, Active: true, Conditions: []models.RuleCondition{cond(models.CondName, "like", "starbucks")},
		Actions: []models.RuleAction{action(models.ActSetCategory, cats[0].ID.String())}}
	if err := s.CreateRule(ctx, rule); err != nil {
		t.Fatal(err)
	}
	im := runImport(t, s, newImport(t, s, f, importfile.CSV, "date,amount,name\n01/15/2024,-4.50,STARBUCKS\n"))
	lines, _, err := s.ImportLines(ctx, fam, im.ID, models.Page{Number: 1, Size: 10})
	if err != nil || len(lines) != 1 {
		t.Fatalf("lines %+v %v", lines, err)
	}
	id := *lines[0].TransactionID
	edit := &models.Transaction{ID: id, FamilyID: fam, AccountID: f.Account.ID, CategoryID: &cats[1].ID}
	if _, err := s.UpdateTransaction(ctx, edit, []string{"category_id"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyRulesTo(ctx, fam, []uuid.UUID{id}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Transaction(ctx, fam, id)
	if err != nil || got.CategoryID == nil || *got.CategoryID != cats[1].ID {
		t.Fatalf("the person's category was overwritten: %+v %v", got, err)
	}
}
