package rest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/models"
)

func coffeeRule(catID string) map[string]any {
	return map[string]any{"rule": map[string]any{
		"name": "Coffee", "effective_date": "2024-01-01",
		"conditions": []any{map[string]any{"condition_type": "transaction_name", "operator": "like", "value": "starbucks"}},
		"actions":    []any{map[string]any{"action_type": "set_transaction_category", "value": catID}},
	}}
}

func TestRulesAPI(t *testing.T) {
	e := apitest.NewEnv(t)
	cat, ids := apitest.RuleFixtures(t, e)
	key := e.Alpha.Key

	created := e.Do("POST", "/api/v1/rules", key, coffeeRule(cat.ID.String())).WantJSON(t, 201)["data"].(map[string]any)
	id := created["id"].(string)
	if created["resource_type"] != "transaction" || created["active"] != true || created["effective_date"] != "2024-01-01" ||
		len(created["conditions"].([]any)) != 1 || len(created["actions"].([]any)) != 1 {
		t.Fatalf("created: %v", created)
	}
	// Saving changed no transaction.
	if tx, _ := e.Store.Transaction(context.Background(), e.Alpha.Family.ID, ids[0]); tx.CategoryID != nil {
		t.Fatal("saving the rule categorized a transaction")
	}

	list := e.Do("GET", "/api/v1/rules?active=true", key, nil).WantJSON(t, 200)
	if meta := list["meta"].(map[string]any); meta["total_count"] != 1.0 || meta["current_page"] != 1.0 || len(list["data"].([]any)) != 1 {
		t.Fatalf("list: %v", list)
	}
	if n := len(e.Do("GET", "/api/v1/rules?active=0", key, nil).WantJSON(t, 200)["data"].([]any)); n != 0 {
		t.Fatalf("inactive filter: %d", n)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/rules?active=maybe", key, nil), 422, "validation_failed")
	apitest.WantError(t, e.Do("GET", "/api/v1/rules?resource_type=account", key, nil), 422, "validation_failed")
	if got := e.Do("GET", "/api/v1/rules/"+id, key, nil).WantJSON(t, 200)["data"].(map[string]any); got["name"] != "Coffee" {
		t.Fatalf("show: %v", got)
	}

	// Another family sees nothing and can change nothing.
	apitest.WantError(t, e.Do("GET", "/api/v1/rules/"+id, e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("PATCH", "/api/v1/rules/"+id, e.Beta.Key, map[string]any{"rule": map[string]any{"active": false}}), 404, "not_found")
	apitest.WantError(t, e.Do("POST", "/api/v1/rules/"+id+"/apply", e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("DELETE", "/api/v1/rules/"+id, e.Beta.Key, nil), 404, "not_found")
	if r := apitest.WantError(t, e.Do("POST", "/api/v1/rules", e.Beta.Key, coffeeRule(cat.ID.String())), 422, "validation_failed"); !strings.Contains(fmt.Sprint(r["errors"]), "Category "+cat.ID.String()+" not found") {
		t.Fatalf("foreign category: %v", r)
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/rules", e.Alpha.ReadKey, coffeeRule(cat.ID.String())), 403, "insufficient_scope")

	// Preview: which rows would change, before saving anything.
	preview := e.Do("POST", "/api/v1/rules/preview", key, coffeeRule(cat.ID.String())).WantJSON(t, 200)
	if meta := preview["meta"].(map[string]any); meta["total_count"] != 2.0 || len(preview["data"].([]any)) != 2 {
		t.Fatalf("preview: %v", preview)
	}
	first := preview["data"].([]any)[0].(map[string]any)
	if first["category_id"] != cat.ID.String() || fmt.Sprint(first["changes"]) != "[category]" {
		t.Fatalf("preview item: %v", first)
	}

	// Apply: 202 with a pending run, then the job does the work.
	run := e.Do("POST", "/api/v1/rules/"+id+"/apply", key, nil).WantJSON(t, 202)["data"].(map[string]any)
	if run["status"] != "pending" || run["transactions_queued"] != 4.0 || run["rule"].(map[string]any)["id"] != id {
		t.Fatalf("apply: %v", run)
	}
	runID := uuid.MustParse(run["id"].(string))
	info, err := asynq.NewInspector(e.Redis).GetTaskInfo(jobs.QueueDefault, "rule:apply:"+runID.String())
	if err != nil {
		t.Fatalf("rule run not queued: %v", err)
	}
	h := &jobs.Handlers{Store: e.Store, Queue: e.Opts.Queue, Log: e.Logger()}
	if err := h.RuleApply(context.Background(), asynq.NewTask(info.Type, info.Payload)); err != nil {
		t.Fatal(err)
	}
	done := e.Do("GET", "/api/v1/rule_runs/"+runID.String(), key, nil).WantJSON(t, 200)["data"].(map[string]any)
	if done["status"] != "success" || done["transactions_processed"] != 4.0 || done["transactions_modified"] != 2.0 {
		t.Fatalf("run: %v", done)
	}
	tx := e.Do("GET", "/api/v1/transactions/"+ids[2].String(), key, nil).WantJSON(t, 200)
	if c, _ := tx["category"].(map[string]any); c == nil || c["id"] != cat.ID.String() {
		t.Fatalf("transaction after apply: %v", tx)
	}
	runs := e.Do("GET", "/api/v1/rule_runs?status=success&rule_id="+id, key, nil).WantJSON(t, 200)
	if len(runs["data"].([]any)) != 1 {
		t.Fatalf("runs: %v", runs)
	}
	if n := len(e.Do("GET", "/api/v1/rule_runs", e.Beta.Key, nil).WantJSON(t, 200)["data"].([]any)); n != 0 {
		t.Fatalf("another family sees %d runs", n)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/rule_runs/"+runID.String(), e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("GET", "/api/v1/rule_runs?status=done&rule_id=x&start_executed_at=yesterday", key, nil), 422, "validation_failed")

	// PATCH: conditions given replace the set; amounts may be numbers.
	patched := e.Do("PATCH", "/api/v1/rules/"+id, key, map[string]any{"rule": map[string]any{
		"stop_processing": true, "position": 2,
		"conditions": []any{map[string]any{"condition_type": "compound", "operator": "or", "sub_conditions": []any{
			map[string]any{"condition_type": "transaction_amount", "operator": ">=", "value": 400},
			map[string]any{"condition_type": "transaction_name", "operator": "regex", "value": "^rent$"},
		}}},
	}}).WantJSON(t, 200)["data"].(map[string]any)
	conds := patched["conditions"].([]any)
	subs := conds[0].(map[string]any)["sub_conditions"].([]any)
	if len(conds) != 1 || len(subs) != 2 || subs[0].(map[string]any)["value"] != "400" || patched["stop_processing"] != true ||
		len(patched["actions"].([]any)) != 1 {
		t.Fatalf("patched: %v", patched)
	}

	if r := e.Do("DELETE", "/api/v1/rules/"+id, key, nil).WantJSON(t, 200); r["message"] != "Rule deleted successfully" {
		t.Fatalf("delete: %v", r)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/rules/"+id, key, nil), 404, "not_found")
	if r := e.Do("GET", "/api/v1/rule_runs/"+runID.String(), key, nil).WantJSON(t, 200)["data"].(map[string]any); r["rule"] != nil || r["rule_id"] != nil || r["rule_name"] != "Coffee" {
		t.Fatalf("run of a deleted rule: %v", r)
	}
}

func TestRulesAPIBadInput(t *testing.T) {
	e := apitest.NewEnv(t)
	key := e.Alpha.Key
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
			r := apitest.WantError(t, e.Do("POST", "/api/v1/rules", key, tt.body), 422, "validation_failed")
			if !strings.Contains(fmt.Sprint(r["errors"]), tt.want) {
				t.Fatalf("errors %v, want one containing %q", r["errors"], tt.want)
			}
		})
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/rules", key, "[1,2"), 400, "bad_request")
	apitest.WantError(t, e.Do("POST", "/api/v1/rules", key, map[string]any{"name": "no wrapper"}), 400, "bad_request")
	apitest.WantError(t, e.Do("POST", "/api/v1/rules/preview", key, rule([]any{map[string]any{"condition_type": "transaction_name", "operator": "regex", "value": "a{1001}"}}, exclude)), 422, "validation_failed")
	apitest.WantError(t, e.Do("GET", "/api/v1/rules/not-a-uuid", key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("POST", "/api/v1/rules/"+uuid.NewString()+"/apply", key, nil), 404, "not_found")

	// A rule that matches everything: the preview counts every row.
	_, _ = apitest.RuleFixtures(t, e)
	all := rule([]any{map[string]any{"condition_type": "transaction_name", "operator": "regex", "value": ".*"}},
		[]any{map[string]any{"action_type": "set_transaction_name", "value": "Everything"}})
	if p := e.Do("POST", "/api/v1/rules/preview", key, all).WantJSON(t, 200); p["meta"].(map[string]any)["total_count"] != 4.0 {
		t.Fatalf("match-all preview: %v", p)
	}
}

// TestRulesOnCreate: POST /api/v1/transactions is filed by the rules; a
// category the caller chose stays theirs, and tags add up.
func TestRulesOnCreate(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := context.Background()
	cat, _ := apitest.RuleFixtures(t, e)
	mine := &models.Category{FamilyID: e.Alpha.Family.ID, Name: "Mine", Color: "#000000", Icon: "x", Classification: "expense"}
	tag := &models.Tag{FamilyID: e.Alpha.Family.ID, Name: "auto", Color: "#000000"}
	if err := e.Store.CreateCategory(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.CreateTag(ctx, tag); err != nil {
		t.Fatal(err)
	}
	body := coffeeRule(cat.ID.String())
	body["rule"].(map[string]any)["actions"] = append(body["rule"].(map[string]any)["actions"].([]any),
		map[string]any{"action_type": "set_transaction_tags", "value": tag.ID.String()})
	e.Do("POST", "/api/v1/rules", e.Alpha.Key, body).WantJSON(t, 201)
	create := func(name string, category *uuid.UUID) map[string]any {
		tx := map[string]any{"account_id": e.Alpha.Account.ID.String(), "date": "2024-03-01", "amount": "4.50", "name": name}
		if category != nil {
			tx["category_id"] = category.String()
		}
		return e.Do("POST", "/api/v1/transactions", e.Alpha.Key, map[string]any{"transaction": tx}).WantJSON(t, 201)
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
