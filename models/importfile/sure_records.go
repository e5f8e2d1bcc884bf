package importfile

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"coffer/models/civil"
	"coffer/models/money"
)

// The records of the reference's export that a restore reads, with the
// fields its exporter writes (Rails as_json for accounts, categories,
// tags, merchants, budgets and budget categories; the hashes of
// data_exporter.rb for the rest). Amounts come as JSON strings or numbers
// ("1234.5"), dates as YYYY-MM-DD, ids as the reference's UUIDs, kept here
// only as text to be mapped to new ids.

// SureAccount is an "Account" line.
type SureAccount struct {
	ID                string
	Name              string
	AccountableType   string // Depository, CreditCard, …
	Subtype           *string
	Balance           money.Amount
	Currency          string
	Status            string
	InstitutionName   *string
	InstitutionDomain *string
}

// SureBalance is a "Balance" line: a day's balance of an account.
type SureBalance struct {
	ID        string
	AccountID string
	Date      civil.Date
	Balance   money.Amount
}

// SureValuation is a "Valuation" line: an account's value on a day.
type SureValuation struct {
	ID        string
	AccountID string
	Date      civil.Date
	Amount    money.Amount
	Name      string
	Kind      string // opening_anchor, current_anchor, reconciliation
}

// SureCategory is a "Category" line.
type SureCategory struct {
	ID             string
	Name           string
	Color          string
	Icon           string // lucide_icon
	Classification string // income or expense
	ParentID       *string
}

// SureTag is a "Tag" line.
type SureTag struct {
	ID    string
	Name  string
	Color string
}

// SureMerchant is a "Merchant" line.
type SureMerchant struct {
	ID   string
	Name string
}

// SureTransaction is a "Transaction" line, with its split parts.
type SureTransaction struct {
	ID         string
	AccountID  string
	Date       civil.Date
	Amount     money.Amount // positive is money out, as in the ledger
	Currency   string
	Name       string
	Notes      *string
	Excluded   bool
	CategoryID *string
	MerchantID *string
	TagIDs     []string
	Kind       string
	Splits     []SureSplit
}

// SureSplit is one of a transaction's split_lines.
type SureSplit struct {
	ID         string
	Amount     money.Amount
	Name       string
	Notes      *string
	Excluded   bool
	CategoryID *string
	MerchantID *string
	TagIDs     []string
	HasTagIDs  bool // tag_ids given; without them the part takes its parent's tags
}

// SureTransfer is a "Transfer" line, or a "RejectedTransfer" one.
type SureTransfer struct {
	ID        string
	InflowID  string
	OutflowID string
	Status    string
	Notes     *string
}

// SureBudget is a "Budget" line: a month.
type SureBudget struct {
	ID               string
	StartDate        civil.Date
	EndDate          civil.Date
	BudgetedSpending *money.Amount
	ExpectedIncome   *money.Amount
	Currency         string
}

// SureBudgetCategory is a "BudgetCategory" line.
type SureBudgetCategory struct {
	ID               string
	BudgetID         string
	CategoryID       string
	BudgetedSpending money.Amount
	Currency         string
}

// SureRecurring is a "RecurringTransaction" line: the reference's keys
// (a monthly series: it has no cadence) and coffer's own, which its
// importer ignores: cadence, previous_amount, autopay and notes.
type SureRecurring struct {
	ID             string
	AccountID      *string
	MerchantID     *string
	Name           string
	Amount         money.Amount
	Currency       string
	ExpectedDay    int // 0 when absent: the next date's day
	LastDate       *civil.Date
	NextDate       civil.Date
	Status         string
	Occurrences    int
	Manual         bool
	AmountMin      *money.Amount
	AmountMax      *money.Amount
	Cadence        string // "" when absent: monthly
	PreviousAmount *money.Amount
	Autopay        bool
	Notes          *string
}

// SureChat is a "Chat" line: coffer's own (the reference exports no
// chats, and its importer skips the type). CreatedAt is nil when the line
// has no time.
type SureChat struct {
	ID        string
	Title     string
	CreatedAt *time.Time
}

// SureMessage is a "Message" line of a chat: Type is the reference's class
// name (UserMessage, AssistantMessage).
type SureMessage struct {
	ID        string
	ChatID    string
	Type      string
	Content   string
	AIModel   *string
	CreatedAt *time.Time
}

// SureRule is a "Rule" line; rules name categories, merchants and tags by
// name (value) and by the record in the file (value_ref).
type SureRule struct {
	ID            string
	Name          *string
	ResourceType  string
	Active        bool
	EffectiveDate *civil.Date
	Conditions    []SureCondition
	Actions       []SureAction
}

// SureCondition is one condition of a rule.
type SureCondition struct {
	ConditionType string
	Operator      string
	Value         *string
	Refs          []SureRef
	SubConditions []SureCondition
}

// SureAction is one action of a rule.
type SureAction struct {
	ActionType string
	Value      *string
	Refs       []SureRef
}

// SureRef is a value_ref: the record of the file a rule's value names.
type SureRef struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// SureRecord is one line of the file, decoded: Value is one of the Sure…
// types above (a pointer), or nil for a type a restore does not write
// (trades, holdings, the bills' occurrences and allocations).
type SureRecord struct {
	Line  int
	Type  string
	Value any
}

// SureTypes are the types a restore writes, in the order it writes them.
var SureTypes = []string{"Account", "Category", "Tag", "Merchant", "Budget", "Balance", "Valuation", "RecurringTransaction", "Transaction",
	"Transfer", "RejectedTransfer", "BudgetCategory", "Rule", "Chat", "Message"}

// fields reads a record's data, remembering the first problem.
type fields struct {
	m       map[string]json.RawMessage
	problem string
}

func (f *fields) fail(format string) {
	if f.problem == "" {
		f.problem = format
	}
}

func null(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// str is a text field; required ones must be there and not empty.
func (f *fields) str(name string, required bool) string {
	s := f.optStr(name)
	if s == nil || *s == "" {
		if required {
			f.fail(name + " is required")
		}
		return ""
	}
	return *s
}

func (f *fields) optStr(name string) *string {
	raw := f.m[name]
	if null(raw) {
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		f.fail(name + " must be a string")
		return nil
	}
	return &s
}

// optTime is an RFC 3339 time; nil when absent or null.
func (f *fields) optTime(name string) *time.Time {
	s := f.optStr(name)
	if s == nil || *s == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		f.fail(name + " must be a time in RFC 3339 form")
		return nil
	}
	t = t.UTC()
	return &t
}

// id is a reference to another record: nil when absent or empty.
func (f *fields) id(name string) *string {
	s := f.optStr(name)
	if s == nil || *s == "" {
		return nil
	}
	return s
}

func (f *fields) amount(name string) money.Amount {
	a := f.optAmount(name)
	if a == nil {
		f.fail(name + " is required")
		return 0
	}
	return *a
}

func (f *fields) optAmount(name string) *money.Amount {
	raw := f.m[name]
	if null(raw) {
		return nil
	}
	a, err := money.ParseAmountJSON(raw)
	if err != nil {
		f.fail(name + " must be a decimal amount with at most 4 decimals")
		return nil
	}
	return &a
}

func (f *fields) date(name string) civil.Date {
	s := f.str(name, true)
	if s == "" {
		return ""
	}
	d, err := civil.ParseDate(s)
	if err != nil {
		f.fail(name + " must be a date, YYYY-MM-DD")
	}
	return d
}

func (f *fields) optDate(name string) *civil.Date {
	if null(f.m[name]) {
		return nil
	}
	d := f.date(name)
	return &d
}

func (f *fields) boolean(name string) bool {
	raw := f.m[name]
	if null(raw) {
		return false
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		f.fail(name + " must be true or false")
	}
	return b
}

// integer is a whole number; 0 when absent or null.
func (f *fields) integer(name string) int {
	raw := f.m[name]
	if null(raw) {
		return 0
	}
	var n int32
	if err := json.Unmarshal(raw, &n); err != nil {
		f.fail(name + " must be a whole number")
	}
	return int(n)
}

func (f *fields) ids(name string) []string {
	raw := f.m[name]
	if null(raw) {
		return nil
	}
	var out []string
	if err := json.Unmarshal(raw, &out); err != nil {
		f.fail(name + " must be a list of ids")
	}
	return out
}

// text is a rule operand: a string, a number, a boolean or null.
func text(raw json.RawMessage) *string {
	if null(raw) {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return &s
	}
	s = strings.TrimSpace(string(raw))
	return &s
}

// refs reads a value_ref: one object or a list of them.
func refs(raw json.RawMessage) ([]SureRef, bool) {
	if null(raw) {
		return nil, true
	}
	var one SureRef
	if json.Unmarshal(raw, &one) == nil {
		return []SureRef{one}, true
	}
	var many []SureRef
	if json.Unmarshal(raw, &many) == nil {
		return many, true
	}
	return nil, false
}

// decodeSure reads one record's data by its type.
func decodeSure(typ string, data json.RawMessage) (any, string) {
	f := &fields{}
	if err := json.Unmarshal(data, &f.m); err != nil || f.m == nil {
		return nil, "data must be a JSON object"
	}
	var v any
	switch typ {
	case "Account":
		a := &SureAccount{ID: f.str("id", true), Name: f.str("name", true), AccountableType: f.str("accountable_type", true),
			Subtype: f.optStr("subtype"), Currency: f.str("currency", false), Status: f.str("status", false),
			InstitutionName: f.optStr("institution_name"), InstitutionDomain: f.optStr("institution_domain")}
		if b := f.optAmount("balance"); b != nil {
			a.Balance = *b
		}
		v = a
	case "Balance":
		v = &SureBalance{ID: f.str("id", false), AccountID: f.str("account_id", true), Date: f.date("date"), Balance: f.amount("balance")}
	case "Valuation":
		v = &SureValuation{ID: f.str("id", true), AccountID: f.str("account_id", true), Date: f.date("date"),
			Amount: f.amount("amount"), Name: f.str("name", false), Kind: f.str("kind", false)}
	case "Category":
		v = &SureCategory{ID: f.str("id", true), Name: f.str("name", true), Color: f.str("color", false),
			Icon: f.str("lucide_icon", false), Classification: f.str("classification_unused", false), ParentID: f.id("parent_id")}
		if c := v.(*SureCategory); c.Classification == "" {
			c.Classification = f.str("classification", false) // before the reference renamed it
		}
	case "Tag":
		v = &SureTag{ID: f.str("id", true), Name: f.str("name", true), Color: f.str("color", false)}
	case "Merchant":
		v = &SureMerchant{ID: f.str("id", true), Name: f.str("name", true)}
	case "Transaction":
		v = decodeTransaction(f)
	case "Transfer", "RejectedTransfer":
		v = &SureTransfer{ID: f.str("id", false), InflowID: f.str("inflow_transaction_id", true),
			OutflowID: f.str("outflow_transaction_id", true), Status: f.str("status", false), Notes: f.optStr("notes")}
	case "Budget":
		v = &SureBudget{ID: f.str("id", true), StartDate: f.date("start_date"), EndDate: f.date("end_date"),
			BudgetedSpending: f.optAmount("budgeted_spending"), ExpectedIncome: f.optAmount("expected_income"), Currency: f.str("currency", false)}
	case "BudgetCategory":
		v = &SureBudgetCategory{ID: f.str("id", false), BudgetID: f.str("budget_id", true), CategoryID: f.str("category_id", true),
			BudgetedSpending: f.amount("budgeted_spending"), Currency: f.str("currency", false)}
	case "Rule":
		v = decodeRule(f)
	case "RecurringTransaction":
		v = &SureRecurring{ID: f.str("id", true), AccountID: f.id("account_id"), MerchantID: f.id("merchant_id"),
			Name: f.str("name", false), Amount: f.amount("amount"), Currency: f.str("currency", true),
			ExpectedDay: f.integer("expected_day_of_month"), LastDate: f.optDate("last_occurrence_date"),
			NextDate: f.date("next_expected_date"), Status: f.str("status", false), Occurrences: f.integer("occurrence_count"),
			Manual: f.boolean("manual"), AmountMin: f.optAmount("expected_amount_min"), AmountMax: f.optAmount("expected_amount_max"),
			Cadence: f.str("cadence", false), PreviousAmount: f.optAmount("previous_amount"), Autopay: f.boolean("autopay"),
			Notes: f.optStr("notes")}
	case "Chat":
		v = &SureChat{ID: f.str("id", true), Title: f.str("title", false), CreatedAt: f.optTime("created_at")}
	case "Message":
		m := &SureMessage{ID: f.str("id", true), ChatID: f.str("chat_id", true), Type: f.str("type", true),
			Content: f.str("content", false), AIModel: f.optStr("ai_model"), CreatedAt: f.optTime("created_at")}
		if m.Type != "" && m.Type != "UserMessage" && m.Type != "AssistantMessage" {
			f.fail("type must be UserMessage or AssistantMessage")
		}
		v = m
	default:
		return nil, ""
	}
	return v, f.problem
}

func decodeTransaction(f *fields) *SureTransaction {
	t := &SureTransaction{ID: f.str("id", true), AccountID: f.str("account_id", true), Date: f.date("date"), Amount: f.amount("amount"),
		Currency: f.str("currency", false), Name: f.str("name", false), Notes: f.optStr("notes"), Excluded: f.boolean("excluded"),
		CategoryID: f.id("category_id"), MerchantID: f.id("merchant_id"), TagIDs: f.ids("tag_ids"), Kind: f.str("kind", false)}
	if null(f.m["split_lines"]) {
		return t
	}
	var parts []map[string]json.RawMessage
	if err := json.Unmarshal(f.m["split_lines"], &parts); err != nil {
		f.fail("split_lines must be a list of objects")
		return t
	}
	for _, m := range parts {
		p := &fields{m: m}
		_, hasTags := m["tag_ids"]
		t.Splits = append(t.Splits, SureSplit{ID: p.str("id", false), Amount: p.amount("amount"), Name: p.str("name", false),
			Notes: p.optStr("notes"), Excluded: p.boolean("excluded"), CategoryID: p.id("category_id"),
			MerchantID: p.id("merchant_id"), TagIDs: p.ids("tag_ids"), HasTagIDs: hasTags && !null(m["tag_ids"])})
		if p.problem != "" {
			f.fail("split_lines: " + p.problem)
		}
	}
	return t
}

func decodeRule(f *fields) *SureRule {
	r := &SureRule{ID: f.str("id", true), Name: f.optStr("name"), ResourceType: f.str("resource_type", false),
		Active: f.boolean("active"), EffectiveDate: f.optDate("effective_date")}
	var conds, acts []map[string]json.RawMessage
	if !null(f.m["conditions"]) && json.Unmarshal(f.m["conditions"], &conds) != nil {
		f.fail("conditions must be a list of objects")
	}
	if !null(f.m["actions"]) && json.Unmarshal(f.m["actions"], &acts) != nil {
		f.fail("actions must be a list of objects")
	}
	r.Conditions = decodeConditions(f, conds, 0)
	for _, m := range acts {
		a := &fields{m: m}
		rs, ok := refs(m["value_ref"])
		if !ok {
			f.fail("an action's value_ref must be an object or a list of them")
		}
		r.Actions = append(r.Actions, SureAction{ActionType: a.str("action_type", true), Value: text(m["value"]), Refs: rs})
		if a.problem != "" {
			f.fail("actions: " + a.problem)
		}
	}
	return r
}

func decodeConditions(f *fields, list []map[string]json.RawMessage, depth int) []SureCondition {
	var out []SureCondition
	for _, m := range list {
		c := &fields{m: m}
		rs, ok := refs(m["value_ref"])
		if !ok {
			f.fail("a condition's value_ref must be an object or a list of them")
		}
		cond := SureCondition{ConditionType: c.str("condition_type", true), Operator: c.str("operator", false), Value: text(m["value"]), Refs: rs}
		if !null(m["sub_conditions"]) {
			var subs []map[string]json.RawMessage
			if depth > 0 || json.Unmarshal(m["sub_conditions"], &subs) != nil {
				f.fail("sub_conditions must be a list of conditions, one level deep")
			}
			cond.SubConditions = decodeConditions(f, subs, depth+1)
		}
		if c.problem != "" {
			f.fail("conditions: " + c.problem)
		}
		out = append(out, cond)
	}
	return out
}
