package screens_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"coffer/api/apitest"
	"coffer/models"
)

// TestRuleScreens drives /rules with plain forms: a bad rule is shown
// again with its message, a preview saves nothing, a saved rule is listed,
// edited, applied (a run is queued) and deleted; another family's rule is
// a 404.
func TestRuleScreens(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := context.Background()
	cat, _ := apitest.RuleFixtures(t, e)

	if r := b.Get("/rules"); r.Status != 200 || !strings.Contains(string(r.Body), "No rules yet") {
		t.Fatalf("empty list: %d", r.Status)
	}
	b.Get("/rules/new")
	form := url.Values{"name": {"Coffee"}, "match": {"any"}, "active": {"on"}, "position": {"1"},
		"cond_type_0": {"transaction_name"}, "cond_op_0": {"regex"}, "cond_value_0": {"(unclosed"},
		"cond_type_1": {"transaction_amount"}, "cond_op_1": {">"}, "cond_value_1": {"1000"},
		"act_type_0": {"set_transaction_category"}, "act_ref_0": {cat.ID.String()}}
	if r := b.Post("/rules", form); r.Status != 422 || !strings.Contains(string(r.Body), "not a valid regular expression") ||
		!strings.Contains(string(r.Body), "(unclosed") {
		t.Fatalf("bad regex: %d %s", r.Status, r.Body)
	}
	form.Set("cond_value_0", "^starbucks")
	form.Set("intent", "preview")
	if r := b.Post("/rules", form); r.Status != 200 || !strings.Contains(string(r.Body), "Preview: 2 existing transactions would change") {
		t.Fatalf("preview: %d %s", r.Status, r.Body)
	}
	if rules, _ := e.Store.OrderedRules(ctx, e.Alpha.Family.ID); len(rules) != 0 {
		t.Fatal("the preview saved the rule")
	}
	form.Set("intent", "save")
	if r := b.Post("/rules", form); r.Status != 303 {
		t.Fatalf("save: %d %s", r.Status, r.Body)
	}
	rules, _ := e.Store.OrderedRules(ctx, e.Alpha.Family.ID)
	if len(rules) != 1 || len(rules[0].Conditions) != 1 || rules[0].Conditions[0].Operator != "or" || len(rules[0].Conditions[0].SubConditions) != 2 {
		t.Fatalf("saved: %+v", rules)
	}
	id := rules[0].ID.String()
	if r := b.Get("/rules"); !strings.Contains(string(r.Body), "Coffee") || !strings.Contains(string(r.Body), "“^starbucks”") {
		t.Fatalf("list: %s", r.Body)
	}
	if r := b.Get("/rules/" + id + "/edit"); r.Status != 200 || !strings.Contains(string(r.Body), `value="^starbucks"`) ||
		!strings.Contains(string(r.Body), `<option value="any" selected>`) {
		t.Fatalf("edit: %d %s", r.Status, r.Body)
	}
	form.Set("name", "Coffee shops")
	if r := b.Post("/rules/"+id, form); r.Status != 303 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	if r := b.Post("/rules/"+id+"/apply", nil); r.Status != 303 {
		t.Fatalf("apply: %d %s", r.Status, r.Body)
	}
	runs, n, _ := e.Store.RuleRuns(ctx, e.Alpha.Family.ID, models.RuleRunFilter{}, models.Page{Number: 1, Size: 5})
	if n != 1 || runs[0].Status != models.RuleRunPending || *runs[0].RuleName != "Coffee shops" {
		t.Fatalf("runs: %+v", runs)
	}
	if r := b.Get("/rules"); !strings.Contains(string(r.Body), "0 of 4") {
		t.Fatalf("runs table: %s", r.Body)
	}

	// Another family's rule.
	other := &models.Rule{FamilyID: e.Beta.Family.ID, Active: true,
		Conditions: []models.RuleCondition{{ConditionType: models.CondName, Operator: "like", Value: ptrTo("x")}},
		Actions:    []models.RuleAction{{ActionType: models.ActExclude}}}
	if err := e.Store.CreateRule(ctx, other); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/rules/" + other.ID.String() + "/edit"} {
		if r := b.Get(path); r.Status != 404 {
			t.Fatalf("%s: %d", path, r.Status)
		}
	}
	if r := b.Post("/rules/"+other.ID.String()+"/delete", nil); r.Status != 404 {
		t.Fatalf("foreign delete: %d", r.Status)
	}
	if r := b.Post("/rules/"+id+"/delete", nil); r.Status != 303 {
		t.Fatalf("delete: %d", r.Status)
	}
	if rules, _ := e.Store.OrderedRules(ctx, e.Alpha.Family.ID); len(rules) != 0 {
		t.Fatal("not deleted")
	}
}

func ptrTo(s string) *string { return &s }

// TestBrowserRules adds a rule in Chromium with the plain form, previews
// it, saves it and applies it, at phone width.
func TestBrowserRules(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	cat, _ := apitest.RuleFixtures(t, e)
	c := apitest.NewChrome(t)
	c.Run("phone", chromedp.EmulateViewport(390, 844))
	c.SignIn(base, e.Alpha.User.Email)
	c.Run("new rule",
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
	if got := c.Text("#preview h2"); got != "Preview: 2 existing transactions would change" {
		t.Fatalf("preview: %q", got)
	}
	c.Shoot("rules-form-preview")
	c.Run("save", chromedp.Click(chromedp.CSS(`button[value=save]`)), chromedp.WaitVisible(chromedp.ID("rules")))
	c.Run("apply", chromedp.Click(chromedp.CSS(`#rules form[action$="/apply"] button`)), chromedp.WaitVisible(chromedp.ID("rule-runs")))
	if got := c.Text("#rule-runs"); !strings.Contains(got, "Coffee") || !strings.Contains(got, "Waiting") {
		t.Fatalf("runs: %q", got)
	}
	if got := c.Text("p.flash"); !strings.Contains(got, "Applying rule Coffee to 4 transactions") {
		t.Fatalf("flash: %q", got)
	}
	c.Shoot("rules-phone")
}

// The rules list moves a rule up or down the order they run in, and
// "Apply all" queues one run of every active rule.
func TestRulesOrderScreen(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	for _, name := range []string{"First", "Second"} {
		b.Get("/rules/new")
		r := b.Post("/rules", url.Values{"name": {name}, "match": {"any"}, "active": {"on"},
			"cond_type_0": {"transaction_name"}, "cond_op_0": {"like"}, "cond_value_0": {name},
			"act_type_0": {"set_transaction_name"}, "act_value_0": {name + "!"}})
		if r.Status != 303 {
			t.Fatalf("create %s: %d %s", name, r.Status, r.Body)
		}
	}
	rules, err := e.Store.OrderedRules(t.Context(), e.Alpha.Family.ID)
	if err != nil || len(rules) != 2 || *rules[0].Name != "First" {
		t.Fatalf("rules: %+v %v", rules, err)
	}
	page := string(b.Get("/rules").Body)
	if !strings.Contains(page, `aria-label="Move Second up"`) || strings.Contains(page, `aria-label="Move First up"`) ||
		!strings.Contains(page, `action="/rules/apply_all"`) {
		t.Fatalf("rules page: %s", page)
	}
	if r := b.Post("/rules/"+rules[1].ID.String()+"/move", url.Values{"direction": {"up"}}); r.Status != 303 {
		t.Fatalf("move: %d", r.Status)
	}
	if rules, _ = e.Store.OrderedRules(t.Context(), e.Alpha.Family.ID); *rules[0].Name != "Second" {
		t.Fatalf("after the move: %s first", *rules[0].Name)
	}
	if r := b.Post("/rules/"+e.Beta.Account.ID.String()+"/move", url.Values{"direction": {"up"}}); r.Status != 404 {
		t.Fatalf("move something not a rule of the family: %d", r.Status)
	}
	if r := b.Post("/rules/apply_all", nil); r.Status != 303 {
		t.Fatalf("apply all: %d %s", r.Status, r.Body)
	}
	runs, n, err := e.Store.RuleRuns(t.Context(), e.Alpha.Family.ID, models.RuleRunFilter{}, models.Page{Number: 1, Size: 5})
	if err != nil || n != 1 || !runs[0].AllRules {
		t.Fatalf("runs: %+v %d %v", runs, n, err)
	}
}
