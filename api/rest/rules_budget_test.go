package rest_test

import (
	"testing"

	"coffer/api/apitest"
)

// TestRulePreviewNeedsWrite: a preview evaluates the rule over every
// transaction of the family, so a read-only credential may not start one
// (issue 24); a read_write key still may.
func TestRulePreviewNeedsWrite(t *testing.T) {
	e := apitest.NewEnv(t)
	cat, _ := apitest.RuleFixtures(t, e)
	apitest.WantError(t, e.Do("POST", "/api/v1/rules/preview", e.Alpha.ReadKey, coffeeRule(cat.ID.String())), 403, "insufficient_scope")
	e.Do("POST", "/api/v1/rules/preview", e.Alpha.Key, coffeeRule(cat.ID.String())).WantJSON(t, 200)
}
