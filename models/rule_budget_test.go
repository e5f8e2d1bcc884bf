package models_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/modelstest"
)

// heavyRegex compiles to close to the largest program a rule may hold.
const heavyRegex = "[a-z]{0,200}q"

// TestRuleRowBudget: however many costly conditions a family's rules
// hold and however long a row's notes, one row's evaluation stops at
// RowWorkBudget (counted, not timed), reads at most RuleTextBytes of the
// notes, and says that it stopped.
func TestRuleRowBudget(t *testing.T) {
	if p := models.ValidateRule(&models.Rule{Conditions: []models.RuleCondition{cond(models.CondNotes, "regex", "(?:"+heavyRegex+"){3}")},
		Actions: []models.RuleAction{action(models.ActExclude, "")}}); len(p) != 1 || !strings.Contains(p[0], "too large a regular expression") {
		t.Fatalf("an oversized regular expression: %v", p)
	}
	var rules []models.Rule
	for range 10 {
		conds := make([]models.RuleCondition, 10)
		for i := range conds {
			conds[i] = cond(models.CondNotes, "not_like", "zzz")
		}
		conds[9] = cond(models.CondNotes, "regex", heavyRegex)
		r := models.Rule{ID: uuid.New(), Active: true, Conditions: conds, Actions: []models.RuleAction{action(models.ActRename, "Matched")}}
		if p := models.ValidateRule(&r); len(p) > 0 {
			t.Fatal(p)
		}
		rules = append(rules, r)
	}
	rs, err := models.CompileRules(rules)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Repeat("b", 1<<20) // a megabyte of notes, no q: the regex scans it all
	res := rs.Apply(models.RuleRow{Name: "x", Notes: &notes, Date: "2024-01-01"})
	if !res.Exhausted || res.Work > 2*models.RowWorkBudget || len(res.Changed) != 0 {
		t.Fatalf("work %d (budget %d), exhausted %v, changed %v", res.Work, models.RowWorkBudget, res.Exhausted, res.Changed)
	}
	// Text past RuleTextBytes is not read: a condition on it cannot match.
	late := strings.Repeat("a", models.RuleTextBytes) + " late"
	set, err := models.CompileRules([]models.Rule{{ID: uuid.New(), Active: true,
		Conditions: []models.RuleCondition{cond(models.CondNotes, "like", "late")}, Actions: []models.RuleAction{action(models.ActRename, "Late")}}})
	if err != nil {
		t.Fatal(err)
	}
	if res := set.Apply(models.RuleRow{Name: "x", Notes: &late}); len(res.Changed) != 0 || res.Work > models.RuleTextBytes+10 {
		t.Fatalf("read past the cap: %+v", res)
	}
	// A cheap rule set costs little and is never cut short.
	if res := set.Apply(models.RuleRow{Name: "x", Notes: models.Ptr("late")}); res.Exhausted || len(res.Changed) != 1 {
		t.Fatalf("cheap rule: %+v", res)
	}
}

// deadlineAfter is a context whose deadline has passed once its Err has
// been asked n times: a deadline that falls between rows, without a clock.
type deadlineAfter struct {
	context.Context
	n atomic.Int64
}

func (c *deadlineAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.DeadlineExceeded
	}
	return nil
}

// TestPreviewRuleDeadlineBetweenRows: a preview checks the request's
// deadline before every row (not every 1,000), and answers how far it got.
func TestPreviewRuleDeadlineBetweenRows(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "budget")
	for range 30 {
		tx := &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: "2024-01-15", Amount: 1000, Currency: "USD", Name: "Grocer"}
		if _, _, err := s.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
	}
	r := &models.Rule{FamilyID: f.Family.ID, Active: true, Conditions: []models.RuleCondition{cond(models.CondName, "like", "grocer")},
		Actions: []models.RuleAction{action(models.ActRename, "Groceries")}}
	p, err := s.PreviewRule(ctx, r, 100)
	if err != nil || p.Evaluated != 30 || p.Total != 30 {
		t.Fatalf("full preview: %+v %v", p, err)
	}
	dctx := &deadlineAfter{Context: ctx}
	dctx.n.Store(5)
	p, err = s.PreviewRule(dctx, r, 100)
	if !errors.Is(err, context.DeadlineExceeded) || p == nil || p.Evaluated > 5 || p.Total != p.Evaluated {
		t.Fatalf("preview past its deadline: %+v %v; want at most 5 rows evaluated and the deadline's error", p, err)
	}
}
