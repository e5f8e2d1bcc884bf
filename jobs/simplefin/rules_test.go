package simplefin_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

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
