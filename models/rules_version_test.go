package models_test

import (
	"context"
	"testing"

	"coffer/models"
	"coffer/models/modelstest"
)

// rulesVersionTables are the tables a rule can name, or is made of: a
// change to any row of them must bump the family's rules_version.
var rulesVersionTables = []string{"rules", "rule_conditions", "rule_actions", "categories", "merchants", "tags"}

// TestRulesVersionTriggers: every write to what a rule can name bumps the
// family's rules_version where the data changes, the store's writes and a
// write that calls nothing of ours alike (an UPDATE and a DELETE straight
// to the table); and without a trigger, such a write is caught.
func TestRulesVersionTriggers(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "rules-version")
	fam := f.Family.ID
	version := func() int64 {
		t.Helper()
		var v int64
		if err := s.DB().NewSelect().Table("families").Column("rules_version").Where("id = ?", fam).Scan(ctx, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	bumps := func(what string, write func() error) bool {
		t.Helper()
		before := version()
		if err := write(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return version() > before
	}
	raw := func(q string, args ...any) func() error {
		return func() error { _, err := s.DB().ExecContext(ctx, q, args...); return err }
	}

	cat := &models.Category{FamilyID: fam, Name: "Coffee", Color: "#000000", Icon: "cup", Classification: "expense"}
	mer := &models.Merchant{FamilyID: fam, Name: "Cafe"}
	tag := &models.Tag{FamilyID: fam, Name: "work", Color: "#000000"}
	for _, w := range []struct {
		what  string
		write func() error
	}{
		{"create category", func() error { return s.CreateCategory(ctx, cat) }},
		{"create merchant", func() error { return s.CreateMerchant(ctx, mer) }},
		{"create tag", func() error { return s.CreateTag(ctx, tag) }},
		{"create rule", func() error {
			return s.CreateRule(ctx, &models.Rule{FamilyID: fam, Active: true,
				Conditions: []models.RuleCondition{cond(models.CondName, "like", "starbucks")},
				Actions:    []models.RuleAction{action(models.ActSetCategory, cat.ID.String())}})
		}},
	} {
		if !bumps(w.what, w.write) {
			t.Errorf("%s: rules_version unchanged", w.what)
		}
	}
	for _, table := range rulesVersionTables {
		if !bumps("update "+table, raw("UPDATE "+table+" SET family_id = family_id WHERE family_id = ?", fam)) {
			t.Errorf("an UPDATE of %s leaves rules_version as it was", table)
		}
	}
	for _, table := range []string{"rule_actions", "rule_conditions", "rules", "categories", "merchants", "tags"} {
		if !bumps("delete "+table, raw("DELETE FROM "+table+" WHERE family_id = ?", fam)) {
			t.Errorf("a DELETE from %s leaves rules_version as it was", table)
		}
	}

	// The seeded slip: without its triggers, a write to tags is not
	// counted, and the check above would fail.
	drop := []string{"DROP TRIGGER tags_rules_version ON tags"}
	if !s.Postgres() {
		drop = []string{"DROP TRIGGER tags_rules_version_insert", "DROP TRIGGER tags_rules_version_update", "DROP TRIGGER tags_rules_version_delete"}
	}
	for _, q := range drop {
		if err := raw(q)(); err != nil {
			t.Fatal(err)
		}
	}
	other := &models.Tag{FamilyID: fam, Name: "home", Color: "#000000"}
	if bumps("create tag without its trigger", func() error { return s.CreateTag(ctx, other) }) {
		t.Fatal("a tag written without its trigger still counted: the check cannot fail")
	}
}
