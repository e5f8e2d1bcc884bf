package api_test

import "testing"

// TestRulePreviewNeedsWrite: a preview evaluates the rule over every
// transaction of the family, so a read-only credential may not start one
// (issue 24); a read_write key still may.
func TestRulePreviewNeedsWrite(t *testing.T) {
	e := newEnv(t)
	cat, _ := ruleFixtures(t, e)
	wantError(t, e.do("POST", "/api/v1/rules/preview", e.alpha.ReadKey, coffeeRule(cat.ID.String())), 403, "insufficient_scope")
	e.do("POST", "/api/v1/rules/preview", e.alpha.Key, coffeeRule(cat.ID.String())).wantJSON(t, 200)
}
