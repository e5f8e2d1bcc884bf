package api_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"coffer/models"
)

// TestRuleScreens drives /rules with plain forms: a bad rule is shown
// again with its message, a preview saves nothing, a saved rule is listed,
// edited, applied (a run is queued) and deleted; another family's rule is
// a 404.
func TestRuleScreens(t *testing.T) {
	e := newEnv(t)
	b := signedInBrowser(t, e)
	ctx := context.Background()
	cat, _ := ruleFixtures(t, e)

	if r := b.get("/rules"); r.status != 200 || !strings.Contains(string(r.body), "No rules yet") {
		t.Fatalf("empty list: %d", r.status)
	}
	b.get("/rules/new")
	form := url.Values{"name": {"Coffee"}, "match": {"any"}, "active": {"on"}, "position": {"1"},
		"cond_type_0": {"transaction_name"}, "cond_op_0": {"regex"}, "cond_value_0": {"(unclosed"},
		"cond_type_1": {"transaction_amount"}, "cond_op_1": {">"}, "cond_value_1": {"1000"},
		"act_type_0": {"set_transaction_category"}, "act_ref_0": {cat.ID.String()}}
	if r := b.post("/rules", form); r.status != 422 || !strings.Contains(string(r.body), "not a valid regular expression") ||
		!strings.Contains(string(r.body), "(unclosed") {
		t.Fatalf("bad regex: %d %s", r.status, r.body)
	}
	form.Set("cond_value_0", "^starbucks")
	form.Set("intent", "preview")
	if r := b.post("/rules", form); r.status != 200 || !strings.Contains(string(r.body), "Preview: 2 existing transactions would change") {
		t.Fatalf("preview: %d %s", r.status, r.body)
	}
	if rules, _ := e.store.OrderedRules(ctx, e.alpha.Family.ID); len(rules) != 0 {
		t.Fatal("the preview saved the rule")
	}
	form.Set("intent", "save")
	if r := b.post("/rules", form); r.status != 303 {
		t.Fatalf("save: %d %s", r.status, r.body)
	}
	rules, _ := e.store.OrderedRules(ctx, e.alpha.Family.ID)
	if len(rules) != 1 || len(rules[0].Conditions) != 1 || rules[0].Conditions[0].Operator != "or" || len(rules[0].Conditions[0].SubConditions) != 2 {
		t.Fatalf("saved: %+v", rules)
	}
	id := rules[0].ID.String()
	if r := b.get("/rules"); !strings.Contains(string(r.body), "Coffee") || !strings.Contains(string(r.body), "“^starbucks”") {
		t.Fatalf("list: %s", r.body)
	}
	if r := b.get("/rules/" + id + "/edit"); r.status != 200 || !strings.Contains(string(r.body), `value="^starbucks"`) ||
		!strings.Contains(string(r.body), `<option value="any" selected>`) {
		t.Fatalf("edit: %d %s", r.status, r.body)
	}
	form.Set("name", "Coffee shops")
	if r := b.post("/rules/"+id, form); r.status != 303 {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	if r := b.post("/rules/"+id+"/apply", nil); r.status != 303 {
		t.Fatalf("apply: %d %s", r.status, r.body)
	}
	runs, n, _ := e.store.RuleRuns(ctx, e.alpha.Family.ID, models.RuleRunFilter{}, models.Page{Number: 1, Size: 5})
	if n != 1 || runs[0].Status != models.RuleRunPending || *runs[0].RuleName != "Coffee shops" {
		t.Fatalf("runs: %+v", runs)
	}
	if r := b.get("/rules"); !strings.Contains(string(r.body), "0 of 4") {
		t.Fatalf("runs table: %s", r.body)
	}

	// Another family's rule.
	other := &models.Rule{FamilyID: e.beta.Family.ID, Active: true,
		Conditions: []models.RuleCondition{{ConditionType: models.CondName, Operator: "like", Value: ptrTo("x")}},
		Actions:    []models.RuleAction{{ActionType: models.ActExclude}}}
	if err := e.store.CreateRule(ctx, other); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/rules/" + other.ID.String() + "/edit"} {
		if r := b.get(path); r.status != 404 {
			t.Fatalf("%s: %d", path, r.status)
		}
	}
	if r := b.post("/rules/"+other.ID.String()+"/delete", nil); r.status != 404 {
		t.Fatalf("foreign delete: %d", r.status)
	}
	if r := b.post("/rules/"+id+"/delete", nil); r.status != 303 {
		t.Fatalf("delete: %d", r.status)
	}
	if rules, _ := e.store.OrderedRules(ctx, e.alpha.Family.ID); len(rules) != 0 {
		t.Fatal("not deleted")
	}
}

func ptrTo(s string) *string { return &s }

// TestBrowserRules adds a rule in Chromium with the plain form, previews
// it, saves it and applies it, at phone width.
func TestBrowserRules(t *testing.T) {
	e, base := serveEnv(t)
	setPassword(t, e, e.alpha.User, "correct horse battery")
	cat, _ := ruleFixtures(t, e)
	c := newChrome(t)
	c.run("phone", chromedp.EmulateViewport(390, 844))
	c.signIn(base, e.alpha.User.Email)
	c.run("new rule",
		chromedp.Navigate(base+"/rules"),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/rules/new"]`)),
		chromedp.Click(chromedp.CSS(`a[href="/rules/new"]`)),
		chromedp.WaitVisible(chromedp.ID("name")),
		chromedp.SendKeys(chromedp.ID("name"), "Coffee"),
		chromedp.SetValue(chromedp.ID("cond_type_0"), "transaction_name"),
		chromedp.SetValue(chromedp.ID("cond_op_0"), "like"),
		chromedp.SendKeys(chromedp.ID("cond_value_0"), "starbucks"),
		chromedp.SetValue(chromedp.ID("act_type_0"), "set_transaction_category"),
		chromedp.SetValue(chromedp.ID("act_ref_0"), cat.ID.String()),
		chromedp.Click(chromedp.CSS(`button[value=preview]`)),
		chromedp.WaitVisible(chromedp.ID("preview")),
	)
	if got := c.text("#preview h2"); got != "Preview: 2 existing transactions would change" {
		t.Fatalf("preview: %q", got)
	}
	c.shoot("rules-form-preview")
	c.run("save", chromedp.Click(chromedp.CSS(`button[value=save]`)), chromedp.WaitVisible(chromedp.ID("rules")))
	c.run("apply", chromedp.Click(chromedp.CSS(`#rules form[action$="/apply"] button`)), chromedp.WaitVisible(chromedp.ID("rule-runs")))
	if got := c.text("#rule-runs"); !strings.Contains(got, "Coffee") || !strings.Contains(got, "pending") {
		t.Fatalf("runs: %q", got)
	}
	if got := c.text("p.flash"); !strings.Contains(got, "Applying rule Coffee to 4 transactions") {
		t.Fatalf("flash: %q", got)
	}
	c.shoot("rules-phone")
}
