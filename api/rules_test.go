package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/money"
)

// ruleFixtures are a category and a few transactions of alpha.
func ruleFixtures(t *testing.T, e *env) (cat *models.Category, ids []uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	cat = &models.Category{FamilyID: e.alpha.Family.ID, Name: "Coffee", Color: "#000000", Icon: "cup", Classification: "expense"}
	if err := e.store.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"Starbucks 1", "Grocer", "STARBUCKS 2", "Rent"} {
		tx := &models.Transaction{FamilyID: e.alpha.Family.ID, AccountID: e.alpha.Account.ID, Date: "2024-02-01",
			Amount: money.Amount(10000 * (i + 1)), Currency: "USD", Name: name}
		if _, _, err := e.store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tx.ID)
	}
	return cat, ids
}

func coffeeRule(catID string) map[string]any {
	return map[string]any{"rule": map[string]any{
		"name": "Coffee", "effective_date": "2024-01-01",
		"conditions": []any{map[string]any{"condition_type": "transaction_name", "operator": "like", "value": "starbucks"}},
		"actions":    []any{map[string]any{"action_type": "set_transaction_category", "value": catID}},
	}}
}

func TestRulesAPI(t *testing.T) {
	e := newEnv(t)
	cat, ids := ruleFixtures(t, e)
	key := e.alpha.Key

	created := e.do("POST", "/api/v1/rules", key, coffeeRule(cat.ID.String())).wantJSON(t, 201)["data"].(map[string]any)
	id := created["id"].(string)
	if created["resource_type"] != "transaction" || created["active"] != true || created["effective_date"] != "2024-01-01" ||
		len(created["conditions"].([]any)) != 1 || len(created["actions"].([]any)) != 1 {
		t.Fatalf("created: %v", created)
	}
	// Saving changed no transaction.
	if tx, _ := e.store.Transaction(context.Background(), e.alpha.Family.ID, ids[0]); tx.CategoryID != nil {
		t.Fatal("saving the rule categorized a transaction")
	}

	list := e.do("GET", "/api/v1/rules?active=true", key, nil).wantJSON(t, 200)
	if meta := list["meta"].(map[string]any); meta["total_count"] != 1.0 || meta["current_page"] != 1.0 || len(list["data"].([]any)) != 1 {
		t.Fatalf("list: %v", list)
	}
	if n := len(e.do("GET", "/api/v1/rules?active=0", key, nil).wantJSON(t, 200)["data"].([]any)); n != 0 {
		t.Fatalf("inactive filter: %d", n)
	}
	wantError(t, e.do("GET", "/api/v1/rules?active=maybe", key, nil), 422, "validation_failed")
	wantError(t, e.do("GET", "/api/v1/rules?resource_type=account", key, nil), 422, "validation_failed")
	if got := e.do("GET", "/api/v1/rules/"+id, key, nil).wantJSON(t, 200)["data"].(map[string]any); got["name"] != "Coffee" {
		t.Fatalf("show: %v", got)
	}

	// Another family sees nothing and can change nothing.
	wantError(t, e.do("GET", "/api/v1/rules/"+id, e.beta.Key, nil), 404, "not_found")
	wantError(t, e.do("PATCH", "/api/v1/rules/"+id, e.beta.Key, map[string]any{"rule": map[string]any{"active": false}}), 404, "not_found")
	wantError(t, e.do("POST", "/api/v1/rules/"+id+"/apply", e.beta.Key, nil), 404, "not_found")
	wantError(t, e.do("DELETE", "/api/v1/rules/"+id, e.beta.Key, nil), 404, "not_found")
	if r := wantError(t, e.do("POST", "/api/v1/rules", e.beta.Key, coffeeRule(cat.ID.String())), 422, "validation_failed"); !strings.Contains(fmt.Sprint(r["errors"]), "Category "+cat.ID.String()+" not found") {
		t.Fatalf("foreign category: %v", r)
	}
	wantError(t, e.do("POST", "/api/v1/rules", e.alpha.ReadKey, coffeeRule(cat.ID.String())), 403, "insufficient_scope")

	// Preview: which rows would change, before saving anything.
	preview := e.do("POST", "/api/v1/rules/preview", key, coffeeRule(cat.ID.String())).wantJSON(t, 200)
	if meta := preview["meta"].(map[string]any); meta["total_count"] != 2.0 || len(preview["data"].([]any)) != 2 {
		t.Fatalf("preview: %v", preview)
	}
	first := preview["data"].([]any)[0].(map[string]any)
	if first["category_id"] != cat.ID.String() || fmt.Sprint(first["changes"]) != "[category]" {
		t.Fatalf("preview item: %v", first)
	}

	// Apply: 202 with a pending run, then the job does the work.
	run := e.do("POST", "/api/v1/rules/"+id+"/apply", key, nil).wantJSON(t, 202)["data"].(map[string]any)
	if run["status"] != "pending" || run["transactions_queued"] != 4.0 || run["rule"].(map[string]any)["id"] != id {
		t.Fatalf("apply: %v", run)
	}
	runID := uuid.MustParse(run["id"].(string))
	info, err := asynq.NewInspector(e.redis).GetTaskInfo(jobs.QueueDefault, "rule:apply:"+runID.String())
	if err != nil {
		t.Fatalf("rule run not queued: %v", err)
	}
	h := &jobs.Handlers{Store: e.store, Queue: e.opts.Queue, Log: e.logger()}
	if err := h.RuleApply(context.Background(), asynq.NewTask(info.Type, info.Payload)); err != nil {
		t.Fatal(err)
	}
	done := e.do("GET", "/api/v1/rule_runs/"+runID.String(), key, nil).wantJSON(t, 200)["data"].(map[string]any)
	if done["status"] != "success" || done["transactions_processed"] != 4.0 || done["transactions_modified"] != 2.0 {
		t.Fatalf("run: %v", done)
	}
	tx := e.do("GET", "/api/v1/transactions/"+ids[2].String(), key, nil).wantJSON(t, 200)
	if c, _ := tx["category"].(map[string]any); c == nil || c["id"] != cat.ID.String() {
		t.Fatalf("transaction after apply: %v", tx)
	}
	runs := e.do("GET", "/api/v1/rule_runs?status=success&rule_id="+id, key, nil).wantJSON(t, 200)
	if len(runs["data"].([]any)) != 1 {
		t.Fatalf("runs: %v", runs)
	}
	if n := len(e.do("GET", "/api/v1/rule_runs", e.beta.Key, nil).wantJSON(t, 200)["data"].([]any)); n != 0 {
		t.Fatalf("another family sees %d runs", n)
	}
	wantError(t, e.do("GET", "/api/v1/rule_runs/"+runID.String(), e.beta.Key, nil), 404, "not_found")
	wantError(t, e.do("GET", "/api/v1/rule_runs?status=done&rule_id=x&start_executed_at=yesterday", key, nil), 422, "validation_failed")

	// PATCH: conditions given replace the set; amounts may be numbers.
	patched := e.do("PATCH", "/api/v1/rules/"+id, key, map[string]any{"rule": map[string]any{
		"stop_processing": true, "position": 2,
		"conditions": []any{map[string]any{"condition_type": "compound", "operator": "or", "sub_conditions": []any{
			map[string]any{"condition_type": "transaction_amount", "operator": ">=", "value": 400},
			map[string]any{"condition_type": "transaction_name", "operator": "regex", "value": "^rent$"},
		}}},
	}}).wantJSON(t, 200)["data"].(map[string]any)
	conds := patched["conditions"].([]any)
	subs := conds[0].(map[string]any)["sub_conditions"].([]any)
	if len(conds) != 1 || len(subs) != 2 || subs[0].(map[string]any)["value"] != "400" || patched["stop_processing"] != true ||
		len(patched["actions"].([]any)) != 1 {
		t.Fatalf("patched: %v", patched)
	}

	if r := e.do("DELETE", "/api/v1/rules/"+id, key, nil).wantJSON(t, 200); r["message"] != "Rule deleted successfully" {
		t.Fatalf("delete: %v", r)
	}
	wantError(t, e.do("GET", "/api/v1/rules/"+id, key, nil), 404, "not_found")
	if r := e.do("GET", "/api/v1/rule_runs/"+runID.String(), key, nil).wantJSON(t, 200)["data"].(map[string]any); r["rule"] != nil || r["rule_id"] != nil || r["rule_name"] != "Coffee" {
		t.Fatalf("run of a deleted rule: %v", r)
	}
}

func TestRulesAPIBadInput(t *testing.T) {
	e := newEnv(t)
	key := e.alpha.Key
	rule := func(conds, acts any) map[string]any {
		return map[string]any{"rule": map[string]any{"conditions": conds, "actions": acts}}
	}
	exclude := []any{map[string]any{"action_type": "exclude_transaction"}}
	tests := []struct {
		name string
		body any
		want string
	}{
		{"invalid regex", rule([]any{map[string]any{"condition_type": "transaction_name", "operator": "regex", "value": "(unclosed"}}, exclude),
			"Value is not a valid regular expression: missing closing ): (unclosed"},
		{"unknown operator", rule([]any{map[string]any{"condition_type": "transaction_name", "operator": "~", "value": "a"}}, exclude),
			`Operator "~" is not supported for transaction_name`},
		{"no conditions", map[string]any{"rule": map[string]any{"actions": exclude}}, "conditions is required"},
		{"empty conditions", rule([]any{}, exclude), "Conditions can't be empty"},
		{"conditions not an array", rule("everything", exclude), "conditions must be an array of objects"},
		{"condition type missing", rule([]any{map[string]any{"operator": "="}}, exclude), "conditions[0].condition_type is required"},
		{"value an object", rule([]any{map[string]any{"condition_type": "transaction_name", "operator": "like", "value": map[string]any{}}}, exclude),
			"conditions[0].value must be a string"},
		{"unknown action", rule([]any{map[string]any{"condition_type": "transaction_name", "operator": "like", "value": "a"}},
			[]any{map[string]any{"action_type": "delete_everything"}}), `Action type "delete_everything" is not supported`},
		{"bad effective date", map[string]any{"rule": map[string]any{"effective_date": "soon"}}, "effective_date"},
		{"active not a boolean", map[string]any{"rule": map[string]any{"active": "yes"}}, "active must be true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := wantError(t, e.do("POST", "/api/v1/rules", key, tt.body), 422, "validation_failed")
			if !strings.Contains(fmt.Sprint(r["errors"]), tt.want) {
				t.Fatalf("errors %v, want one containing %q", r["errors"], tt.want)
			}
		})
	}
	wantError(t, e.do("POST", "/api/v1/rules", key, "[1,2"), 400, "bad_request")
	wantError(t, e.do("POST", "/api/v1/rules", key, map[string]any{"name": "no wrapper"}), 400, "bad_request")
	wantError(t, e.do("POST", "/api/v1/rules/preview", key, rule([]any{map[string]any{"condition_type": "transaction_name", "operator": "regex", "value": "a{1001}"}}, exclude)), 422, "validation_failed")
	wantError(t, e.do("GET", "/api/v1/rules/not-a-uuid", key, nil), 404, "not_found")
	wantError(t, e.do("POST", "/api/v1/rules/"+uuid.NewString()+"/apply", key, nil), 404, "not_found")

	// A rule that matches everything: the preview counts every row.
	_, _ = ruleFixtures(t, e)
	all := rule([]any{map[string]any{"condition_type": "transaction_name", "operator": "regex", "value": ".*"}},
		[]any{map[string]any{"action_type": "set_transaction_name", "value": "Everything"}})
	if p := e.do("POST", "/api/v1/rules/preview", key, all).wantJSON(t, 200); p["meta"].(map[string]any)["total_count"] != 4.0 {
		t.Fatalf("match-all preview: %v", p)
	}
}

// TestRulesOnCreate: POST /api/v1/transactions is filed by the rules; a
// category the caller chose stays theirs, and tags add up.
func TestRulesOnCreate(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cat, _ := ruleFixtures(t, e)
	mine := &models.Category{FamilyID: e.alpha.Family.ID, Name: "Mine", Color: "#000000", Icon: "x", Classification: "expense"}
	tag := &models.Tag{FamilyID: e.alpha.Family.ID, Name: "auto", Color: "#000000"}
	if err := e.store.CreateCategory(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if err := e.store.CreateTag(ctx, tag); err != nil {
		t.Fatal(err)
	}
	body := coffeeRule(cat.ID.String())
	body["rule"].(map[string]any)["actions"] = append(body["rule"].(map[string]any)["actions"].([]any),
		map[string]any{"action_type": "set_transaction_tags", "value": tag.ID.String()})
	e.do("POST", "/api/v1/rules", e.alpha.Key, body).wantJSON(t, 201)
	create := func(name string, category *uuid.UUID) map[string]any {
		tx := map[string]any{"account_id": e.alpha.Account.ID.String(), "date": "2024-03-01", "amount": "4.50", "name": name}
		if category != nil {
			tx["category_id"] = category.String()
		}
		return e.do("POST", "/api/v1/transactions", e.alpha.Key, map[string]any{"transaction": tx}).wantJSON(t, 201)
	}
	filed := create("Starbucks #9", nil)
	if c, _ := filed["category"].(map[string]any); c == nil || c["id"] != cat.ID.String() || len(filed["tags"].([]any)) != 1 {
		t.Fatalf("not filed: %v", filed)
	}
	chosen := create("Starbucks #10", &mine.ID)
	if c, _ := chosen["category"].(map[string]any); c == nil || c["id"] != mine.ID.String() || len(chosen["tags"].([]any)) != 1 {
		t.Fatalf("the caller's category was overwritten: %v", chosen)
	}
	other := create("Bakery", nil)
	if other["category"] != nil || len(other["tags"].([]any)) != 0 {
		t.Fatalf("a non-matching row was filed: %v", other)
	}
}
