package models_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

func cond(typ, op, value string, subs ...models.RuleCondition) models.RuleCondition {
	c := models.RuleCondition{ConditionType: typ, Operator: op, SubConditions: subs}
	if value != "" {
		c.Value = &value
	}
	return c
}

func action(typ, value string) models.RuleAction {
	a := models.RuleAction{ActionType: typ}
	if value != "" {
		a.Value = &value
	}
	return a
}

func TestRuleConditions(t *testing.T) {
	acct, other := uuid.New(), uuid.New()
	cat, merch := uuid.New(), uuid.New()
	notes := "Paid  with CARD"
	row := models.RuleRow{ID: uuid.New(), AccountID: acct, Date: "2024-03-10", Amount: 125000, Name: "  Starbucks   Coffee #42 ",
		Notes: &notes, CategoryID: &cat}
	income := row
	income.Amount = -500000
	transfer := row
	transfer.Transfer = true
	tests := []struct {
		name string
		c    models.RuleCondition
		row  models.RuleRow
		want bool
	}{
		{"like", cond(models.CondName, "like", "starbucks"), row, true},
		{"like whitespace", cond(models.CondName, "like", "STARBUCKS COFFEE"), row, true},
		{"like miss", cond(models.CondName, "like", "tea"), row, false},
		{"not_like", cond(models.CondName, "not_like", "tea"), row, true},
		{"starts_with", cond(models.CondName, "starts_with", "starb"), row, true},
		{"starts_with miss", cond(models.CondName, "starts_with", "coffee"), row, false},
		{"ends_with", cond(models.CondName, "ends_with", "#42"), row, true},
		{"equals", cond(models.CondName, "=", "starbucks coffee #42"), row, true},
		{"equals miss", cond(models.CondName, "=", "starbucks"), row, false},
		{"not equals", cond(models.CondName, "!=", "starbucks"), row, true},
		{"regex", cond(models.CondName, "regex", `^star\w+ coffee #\d+$`), row, true},
		{"matches_regex", cond(models.CondName, "matches_regex", `COFFEE`), row, true},
		{"regex miss", cond(models.CondName, "regex", `^coffee`), row, false},
		{"name is_null", cond(models.CondName, "is_null", ""), row, false},
		{"notes like", cond(models.CondNotes, "like", "with card"), row, true},
		{"notes is_not_null", cond(models.CondNotes, "is_not_null", ""), row, true},
		{"notes is_null", cond(models.CondNotes, "is_null", ""), models.RuleRow{Name: "x"}, true},
		{"amount >", cond(models.CondAmount, ">", "12"), row, true},
		{"amount > equal", cond(models.CondAmount, ">", "12.5"), row, false},
		{"amount >=", cond(models.CondAmount, ">=", "12.50"), row, true},
		{"amount <", cond(models.CondAmount, "<", "12.5001"), row, true},
		{"amount <=", cond(models.CondAmount, "<=", "12.4999"), row, false},
		{"amount =", cond(models.CondAmount, "=", "12.5"), row, true},
		{"amount = abs", cond(models.CondAmount, "=", "50"), income, true},
		{"amount !=", cond(models.CondAmount, "!=", "12.5"), row, false},
		{"type expense", cond(models.CondType, "=", "expense"), row, true},
		{"type income", cond(models.CondType, "=", "income"), income, true},
		{"type income miss", cond(models.CondType, "=", "income"), row, false},
		{"type transfer", cond(models.CondType, "=", "transfer"), transfer, true},
		{"type expense not transfer", cond(models.CondType, "=", "expense"), transfer, false},
		{"account =", cond(models.CondAccount, "=", acct.String()), row, true},
		{"account !=", cond(models.CondAccount, "!=", other.String()), row, true},
		{"category =", cond(models.CondCategory, "=", cat.String()), row, true},
		{"category is_not_null", cond(models.CondCategory, "is_not_null", ""), row, true},
		{"merchant is_null", cond(models.CondMerchant, "is_null", ""), row, true},
		{"merchant =", cond(models.CondMerchant, "=", merch.String()), row, false},
		{"merchant != null", cond(models.CondMerchant, "!=", merch.String()), row, true},
		{"date >=", cond(models.CondDate, ">=", "2024-03-10"), row, true},
		{"date <", cond(models.CondDate, "<", "2024-03-10"), row, false},
		{"date =", cond(models.CondDate, "=", "2024-03-10"), row, true},
		{"date <=", cond(models.CondDate, "<=", "2024-12-31"), row, true},
		{"date >", cond(models.CondDate, ">", "2024-12-31"), row, false},
		{"date !=", cond(models.CondDate, "!=", "2024-12-31"), row, true},
		{"compound or", cond(models.CondCompound, "or", "", cond(models.CondName, "like", "tea"), cond(models.CondAmount, ">", "10")), row, true},
		{"compound or miss", cond(models.CondCompound, "or", "", cond(models.CondName, "like", "tea"), cond(models.CondAmount, ">", "100")), row, false},
		{"compound and", cond(models.CondCompound, "and", "", cond(models.CondName, "like", "star"), cond(models.CondAmount, ">", "10")), row, true},
		{"compound and miss", cond(models.CondCompound, "and", "", cond(models.CondName, "like", "star"), cond(models.CondAmount, ">", "100")), row, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := models.Rule{ID: uuid.New(), Active: true, Conditions: []models.RuleCondition{tt.c},
				Actions: []models.RuleAction{action(models.ActExclude, "")}}
			rs, err := models.CompileRules([]models.Rule{r})
			if err != nil {
				t.Fatal(err)
			}
			res := rs.Apply(tt.row)
			if got := len(res.Changed) > 0; got != tt.want {
				t.Fatalf("matched %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRuleActions(t *testing.T) {
	acct, savings := uuid.New(), uuid.New()
	cat, cat2, merch, tag, tag2 := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	base := models.RuleRow{ID: uuid.New(), AccountID: acct, Date: "2024-03-10", Amount: 1000, Name: "Shop", TagIDs: []uuid.UUID{tag2}}
	locked := base
	locked.Locked = []string{"category", "merchant", "name", "excluded", "tags"}
	tests := []struct {
		name    string
		a       models.RuleAction
		row     models.RuleRow
		changed string // "" when nothing changes
		check   func(models.RuleResult) bool
	}{
		{"category", action(models.ActSetCategory, cat.String()), base, "category", func(r models.RuleResult) bool { return *r.Row.CategoryID == cat }},
		{"merchant", action(models.ActSetMerchant, merch.String()), base, "merchant", func(r models.RuleResult) bool { return *r.Row.MerchantID == merch }},
		{"tag added", action(models.ActAddTag, tag.String()), base, "tags", func(r models.RuleResult) bool {
			return slices.Equal(r.Row.TagIDs, []uuid.UUID{tag2, tag}) && slices.Equal(r.AddedTags, []uuid.UUID{tag})
		}},
		{"tag already there", action(models.ActAddTag, tag2.String()), base, "", nil},
		{"rename", action(models.ActRename, "Corner shop"), base, "name", func(r models.RuleResult) bool { return r.Row.Name == "Corner shop" }},
		{"rename same", action(models.ActRename, "Shop"), base, "", nil},
		{"exclude", action(models.ActExclude, ""), base, "excluded", func(r models.RuleResult) bool { return r.Row.Excluded }},
		{"transfer", action(models.ActTransfer, savings.String()), base, "transfer", func(r models.RuleResult) bool { return *r.TransferTo == savings }},
		{"transfer to itself", action(models.ActTransfer, acct.String()), base, "", nil},
		{"locked category", action(models.ActSetCategory, cat2.String()), locked, "", nil},
		{"locked merchant", action(models.ActSetMerchant, merch.String()), locked, "", nil},
		{"locked name", action(models.ActRename, "x"), locked, "", nil},
		{"locked excluded", action(models.ActExclude, ""), locked, "", nil},
		{"locked tags", action(models.ActAddTag, tag.String()), locked, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := models.Rule{ID: uuid.New(), Active: true, Conditions: []models.RuleCondition{cond(models.CondName, "like", "shop")},
				Actions: []models.RuleAction{tt.a}}
			rs, err := models.CompileRules([]models.Rule{r})
			if err != nil {
				t.Fatal(err)
			}
			res := rs.Apply(tt.row)
			if tt.changed == "" {
				if len(res.Changed) != 0 {
					t.Fatalf("changed %v, want nothing", res.Changed)
				}
				return
			}
			if !slices.Equal(res.Changed, []string{tt.changed}) || res.RuleID != r.ID || !tt.check(res) {
				t.Fatalf("got %+v", res)
			}
		})
	}
}

func TestRuleOrderStopAndClaims(t *testing.T) {
	cat1, cat2, tag1, tag2 := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	mk := func(name string, stop, active bool, acts ...models.RuleAction) models.Rule {
		return models.Rule{ID: uuid.New(), Name: &name, Active: active, StopProcessing: stop,
			Conditions: []models.RuleCondition{cond(models.CondName, "like", "coffee")}, Actions: acts}
	}
	row := models.RuleRow{ID: uuid.New(), Date: "2024-01-01", Amount: 500, Name: "Coffee"}

	// The top rule claims the category; the second still adds its tag.
	top := mk("top", false, true, action(models.ActSetCategory, cat1.String()), action(models.ActAddTag, tag1.String()))
	below := mk("below", false, true, action(models.ActSetCategory, cat2.String()), action(models.ActAddTag, tag2.String()))
	rs, _ := models.CompileRules([]models.Rule{top, below})
	res := rs.Apply(row)
	if *res.Row.CategoryID != cat1 || !slices.Equal(res.AddedTags, []uuid.UUID{tag1, tag2}) || res.RuleID != below.ID {
		t.Fatalf("claims: %+v", res)
	}
	// Applying only the rule below: it keeps its turn, the category stays claimed.
	res = rs.ApplyOnly(row, below.ID)
	if res.Row.CategoryID != nil || !slices.Equal(res.AddedTags, []uuid.UUID{tag2}) {
		t.Fatalf("apply only: %+v", res)
	}
	// stop_processing on the top rule: the one below never runs.
	stop := mk("stop", true, true, action(models.ActAddTag, tag1.String()))
	rs, _ = models.CompileRules([]models.Rule{stop, below})
	if res := rs.Apply(row); res.Row.CategoryID != nil || res.RuleID != stop.ID {
		t.Fatalf("stop: %+v", res)
	}
	// An inactive rule does not run, unless applied on its own.
	off := mk("off", false, false, action(models.ActSetCategory, cat1.String()))
	rs, _ = models.CompileRules([]models.Rule{off})
	if res := rs.Apply(row); len(res.Changed) != 0 {
		t.Fatalf("inactive ran: %+v", res)
	}
	if res := rs.ApplyOnly(row, off.ID); *res.Row.CategoryID != cat1 {
		t.Fatalf("inactive applied on request: %+v", res)
	}
	// A row dated before the effective date is left alone.
	eff := mk("eff", false, true, action(models.ActSetCategory, cat1.String()))
	d := civil.Date("2024-06-01")
	eff.EffectiveDate = &d
	rs, _ = models.CompileRules([]models.Rule{eff})
	if res := rs.Apply(row); len(res.Changed) != 0 {
		t.Fatalf("before effective date: %+v", res)
	}
	// A rule that matches everything changes every row once, then nothing.
	all := mk("all", false, true, action(models.ActSetCategory, cat1.String()))
	all.Conditions = []models.RuleCondition{cond(models.CondName, "regex", ".*")}
	rs, _ = models.CompileRules([]models.Rule{all})
	res = rs.Apply(models.RuleRow{Name: ""})
	if len(res.Changed) != 1 {
		t.Fatalf("match everything: %+v", res)
	}
	if again := rs.Apply(res.Row); len(again.Changed) != 0 {
		t.Fatalf("second pass changed %v", again.Changed)
	}
}

func TestValidateRule(t *testing.T) {
	id := uuid.New().String()
	tests := []struct {
		name string
		c    models.RuleCondition
		a    models.RuleAction
		want string // part of a message; "" for valid
	}{
		{"valid", cond(models.CondName, "regex", `^a(b|c)+$`), action(models.ActSetCategory, id), ""},
		{"invalid regex", cond(models.CondName, "regex", `(unclosed`), action(models.ActExclude, ""), "not a valid regular expression: missing closing )"},
		{"backreference", cond(models.CondName, "matches_regex", `(a)\1`), action(models.ActExclude, ""), "not a valid regular expression"},
		{"unknown type", cond("transaction_color", "=", "red"), action(models.ActExclude, ""), `Condition type "transaction_color" is not supported`},
		{"bad operator", cond(models.CondAmount, "like", "1"), action(models.ActExclude, ""), `Operator "like" is not supported`},
		{"bad amount", cond(models.CondAmount, ">", "1e5"), action(models.ActExclude, ""), "must be a number"},
		{"bad date", cond(models.CondDate, ">", "yesterday"), action(models.ActExclude, ""), "must be a date"},
		{"bad type", cond(models.CondType, "=", "gift"), action(models.ActExclude, ""), "income, expense, transfer"},
		{"bad id", cond(models.CondAccount, "=", "nope"), action(models.ActExclude, ""), "must be a UUID"},
		{"blank value", cond(models.CondName, "like", ""), action(models.ActExclude, ""), "can't be blank"},
		{"nested compound", cond(models.CondCompound, "or", "", cond(models.CondCompound, "and", "", cond(models.CondName, "like", "a"))), action(models.ActExclude, ""), "cannot hold another compound"},
		{"empty compound", cond(models.CondCompound, "or", ""), action(models.ActExclude, ""), "needs sub_conditions"},
		{"unknown action", cond(models.CondName, "like", "a"), action("send_email", "x"), `Action type "send_email" is not supported`},
		{"rename blank", cond(models.CondName, "like", "a"), action(models.ActRename, " "), "can't be blank"},
		{"category not an id", cond(models.CondName, "like", "a"), action(models.ActSetCategory, "Food"), "must be a UUID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &models.Rule{Conditions: []models.RuleCondition{tt.c}, Actions: []models.RuleAction{tt.a}}
			problems := models.ValidateRule(r)
			if tt.want == "" {
				if len(problems) != 0 {
					t.Fatalf("problems %v", problems)
				}
				return
			}
			if len(problems) == 0 || !strings.Contains(strings.Join(problems, "; "), tt.want) {
				t.Fatalf("problems %v, want one containing %q", problems, tt.want)
			}
		})
	}
	if p := models.ValidateRule(&models.Rule{}); len(p) != 2 {
		t.Fatalf("empty rule: %v", p)
	}
}

// FuzzRuleConditions compiles any condition and evaluates it on any row:
// it never panics, and a condition that compiles gives the same answer
// twice.
func FuzzRuleConditions(f *testing.F) {
	f.Add("transaction_name", "regex", `^a+(b|c)*$`, "aab", int64(100), "2024-01-01")
	f.Add("transaction_name", "like", "coffee", "Coffee shop", int64(-5), "2024-02-29")
	f.Add("transaction_amount", ">=", "12.5", "x", int64(125000), "2024-01-01")
	f.Add("transaction_date", "<", "2024-01-02", "x", int64(0), "2024-01-01")
	f.Add("transaction_type", "=", "income", "x", int64(-1), "2024-01-01")
	f.Add("transaction_account", "=", "not-a-uuid", "x", int64(1), "2024-01-01")
	f.Fuzz(func(t *testing.T, typ, op, value, name string, amount int64, date string) {
		r := models.Rule{ID: uuid.New(), Active: true, Conditions: []models.RuleCondition{cond(typ, op, value)},
			Actions: []models.RuleAction{action(models.ActRename, "renamed")}}
		rs, err := models.CompileRules([]models.Rule{r})
		if err != nil {
			return
		}
		row := models.RuleRow{Name: name, Amount: money.Amount(amount), Date: civil.Date(date), Notes: &value}
		a, b := rs.Apply(row), rs.Apply(row)
		if !slices.Equal(a.Changed, b.Changed) {
			t.Fatalf("not deterministic: %v vs %v", a.Changed, b.Changed)
		}
	})
}
