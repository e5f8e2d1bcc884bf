package models_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/modelstest"
)

// fiftyRules stores 50 active rules of every kind on the family: name
// tests (contains, starts with, regular expressions), amount ranges,
// merchants, categories, accounts, dates, any-of groups; actions that set
// categories and merchants, add tags, rename and exclude.
func fiftyRules(b *testing.B, s *models.Store, fam, account uuid.UUID) {
	b.Helper()
	ctx := context.Background()
	var cats, merchants, tags []uuid.UUID
	for table, dst := range map[string]*[]uuid.UUID{"categories": &cats, "merchants": &merchants, "tags": &tags} {
		if err := s.DB().NewSelect().Table(table).Column("id").Where("family_id = ?", fam).OrderExpr("id").Scan(ctx, dst); err != nil {
			b.Fatal(err)
		}
	}
	v := func(s string) *string { return &s }
	for i := range 50 {
		var c models.RuleCondition
		switch i % 10 {
		case 0:
			c = models.RuleCondition{ConditionType: models.CondName, Operator: "like", Value: v(fmt.Sprintf("purchase %d7", i))}
		case 1:
			c = models.RuleCondition{ConditionType: models.CondName, Operator: "regex", Value: v(fmt.Sprintf(`^purchase \d+%d$`, i%10))}
		case 2:
			c = models.RuleCondition{ConditionType: models.CondName, Operator: "starts_with", Value: v(fmt.Sprintf("purchase %d", i))}
		case 3:
			c = models.RuleCondition{ConditionType: models.CondAmount, Operator: ">", Value: v(fmt.Sprint(100 + i*10))}
		case 4:
			c = models.RuleCondition{ConditionType: models.CondMerchant, Operator: "=", Value: v(merchants[i].String())}
		case 5:
			c = models.RuleCondition{ConditionType: models.CondCategory, Operator: "is_null"}
		case 6:
			c = models.RuleCondition{ConditionType: models.CondAccount, Operator: "=", Value: v(account.String())}
		case 7:
			c = models.RuleCondition{ConditionType: models.CondDate, Operator: ">=", Value: v(fmt.Sprintf("2026-%02d-01", 1+i%12))}
		case 8:
			c = models.RuleCondition{ConditionType: models.CondCompound, Operator: "or", SubConditions: []models.RuleCondition{
				{ConditionType: models.CondName, Operator: "ends_with", Value: v(fmt.Sprint(i))},
				{ConditionType: models.CondType, Operator: "=", Value: v("income")}}}
		default:
			c = models.RuleCondition{ConditionType: models.CondName, Operator: "matches_regex", Value: v(`(1|3|5)(2|4)9$`)}
		}
		var a models.RuleAction
		switch i % 5 {
		case 0:
			a = models.RuleAction{ActionType: models.ActSetCategory, Value: v(cats[i%len(cats)].String())}
		case 1:
			a = models.RuleAction{ActionType: models.ActAddTag, Value: v(tags[i%len(tags)].String())}
		case 2:
			a = models.RuleAction{ActionType: models.ActSetMerchant, Value: v(merchants[i].String())}
		case 3:
			a = models.RuleAction{ActionType: models.ActRename, Value: v(fmt.Sprintf("Renamed by %d", i))}
		default:
			a = models.RuleAction{ActionType: models.ActExclude}
		}
		r := &models.Rule{FamilyID: fam, Active: true, Position: i, StopProcessing: i%7 == 0,
			Conditions: []models.RuleCondition{c}, Actions: []models.RuleAction{a}}
		must(b, s.CreateRule(ctx, r))
	}
}

// BenchmarkApplyRules applies 50 rules to a family's 100,000 transactions
// (beside another family of the same size), on analysed tables: "doors" is what an import of
// that many rows pays (every active rule, 1,000 rows per read and write),
// "run" is one rule run over all of them (the rule:apply job's batches).
// Run with -benchtime=1x: the first pass changes the rows, later ones
// mostly find them filed already.
func BenchmarkApplyRules(b *testing.B) {
	s := modelstest.NewStore(b)
	ctx := context.Background()
	big := seedBigFamily(b, s, "rules", 100_000)
	seedBigFamily(b, s, "rules-neighbour", 100_000)
	fiftyRules(b, s, big.fam, big.checking)
	analyze := "ANALYZE" // as autovacuum leaves the tables, like BenchmarkReports
	if s.Postgres() {
		analyze = "VACUUM ANALYZE"
	}
	if _, err := s.DB().ExecContext(ctx, analyze); err != nil {
		b.Fatal(err)
	}
	var ids []uuid.UUID
	if err := s.DB().NewSelect().Table("transactions").Column("id").Where("family_id = ?", big.fam).OrderExpr("id").Scan(ctx, &ids); err != nil {
		b.Fatal(err)
	}
	b.Run("doors", func(b *testing.B) {
		for range b.N {
			start := time.Now()
			if _, err := s.ApplyRulesTo(ctx, big.fam, ids); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(ids))/time.Since(start).Seconds(), "rows/s")
		}
	})
	b.Run("run", func(b *testing.B) {
		rules, err := s.OrderedRules(ctx, big.fam)
		if err != nil {
			b.Fatal(err)
		}
		last := rules[len(rules)-1].ID // every rule above it is matched, only its actions run
		for range b.N {
			start := time.Now()
			run, err := s.CreateRuleRun(ctx, big.fam, last, "manual")
			if err != nil {
				b.Fatal(err)
			}
			for done := false; !done; {
				if done, _, err = s.RuleRunStep(ctx, big.fam, run.ID, 1000); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(ids))/time.Since(start).Seconds(), "rows/s")
		}
	})
}
