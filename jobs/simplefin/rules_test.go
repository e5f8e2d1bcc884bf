package simplefin_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

// TestRulesOnImport: the import is a door of the ingestion pipeline like
// the API: its new rows go through the store's rules step, inside the
// import's transaction, and what the rules set is written with them. A
// re-sync updates provider fields only and keeps what the rules set.
func TestRulesOnImport(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	cat := &models.Category{FamilyID: s.f.Family.ID, Name: "Coffee", Color: "#000000", Icon: "cup", Classification: "expense"}
	tag := &models.Tag{FamilyID: s.f.Family.ID, Name: "auto", Color: "#111111"}
	if err := s.store.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	if err := s.store.CreateTag(ctx, tag); err != nil {
		t.Fatal(err)
	}
	var seen int
	s.store.Rules = func(ctx context.Context, tx *models.Store, familyID uuid.UUID, rows []*models.NewTransaction) error {
		seen += len(rows)
		for _, r := range rows {
			if strings.Contains(r.Row.Name, "COFFEE") && !slices.Contains(r.Row.LockedFields, "category") {
				r.Row.CategoryID = &cat.ID
				r.TagIDs = append(r.TagIDs, tag.ID)
			}
		}
		return nil
	}
	day := time.Now().UTC().Add(-48 * time.Hour).Unix()
	s.bridge.SetDataset(oneAccount(bridgetest.Txn{ID: "C1", Posted: day, Amount: "-4.50", Description: "POS COFFEE BAR"},
		bridgetest.Txn{ID: "R1", Posted: day, Amount: "-900.00", Description: "RENT"}))
	for round := 1; round <= 2; round++ {
		sy := s.first
		if round == 2 {
			sy = s.newSync(t, false)
		}
		if _, err := s.run(t, sy); err != nil {
			t.Fatal(err)
		}
		rows := byExternalID(s.imported(t))
		c1, r1 := rows["C1"], rows["R1"]
		if c1.CategoryID == nil || *c1.CategoryID != cat.ID || r1.CategoryID != nil {
			t.Fatalf("round %d: C1 category %v, R1 %v", round, c1.CategoryID, r1.CategoryID)
		}
		full, err := s.store.Transaction(ctx, s.f.Family.ID, c1.ID)
		if err != nil || len(full.Tags) != 1 || full.Tags[0].ID != tag.ID {
			t.Fatalf("round %d: C1 tags %v %v", round, full, err)
		}
	}
	if seen != 2 {
		t.Errorf("the rules saw %d rows, want the 2 new ones once", seen)
	}
}

// TestImportAppliesRules: rows a sync brings in are filed by the family's
// rules, in the import's own transaction; rows already there are not.
func TestImportAppliesRules(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	cat := &models.Category{FamilyID: s.f.Family.ID, Name: "Coffee", Color: "#000000", Icon: "cup", Classification: "expense"}
	if err := s.store.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	catID, newName := cat.ID.String(), "Starbucks"
	rule := &models.Rule{FamilyID: s.f.Family.ID, Active: true,
		Conditions: []models.RuleCondition{{ConditionType: models.CondName, Operator: "starts_with", Value: &[]string{"sbux"}[0]}},
		Actions: []models.RuleAction{{ActionType: models.ActSetCategory, Value: &catID}, {ActionType: models.ActRename, Value: &newName},
			{ActionType: models.ActExclude}}}
	if err := s.store.CreateRule(ctx, rule); err != nil {
		t.Fatal(err)
	}
	day := time.Now().UTC().Add(-48 * time.Hour).Unix()
	body := fmt.Sprintf(`{"errors":[],"accounts":[
	  {"id":"A1","name":"Checking","currency":"USD","balance":"5.00","balance-date":%[1]d,"transactions":[
	    {"id":"t1","posted":%[1]d,"amount":"-3.00","description":"SBUX 1234 SEATTLE"},
	    {"id":"t2","posted":%[1]d,"amount":"-4.00","description":"GROCER"}]}]}`, day)
	s.bridge.SetAccounts(bridgetest.AccountsNormally, body)
	got, err := s.run(t, s.first)
	if err != nil || got.Status != models.SyncCompleted {
		t.Fatalf("sync: %v %s %v", err, got.Status, got.Error)
	}
	rows := byExternalID(s.imported(t))
	t1, t2 := rows["t1"], rows["t2"]
	if t1.CategoryID == nil || *t1.CategoryID != cat.ID || t1.Name != "Starbucks" || !t1.Excluded || t1.RuleID == nil || *t1.RuleID != rule.ID {
		t.Fatalf("t1 not filed: %+v", t1)
	}
	if t2.CategoryID != nil || t2.RuleID != nil || t2.Name != "GROCER" {
		t.Fatalf("t2 changed: %+v", t2)
	}
}
