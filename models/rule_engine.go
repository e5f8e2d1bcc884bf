package models

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"coffer/models/civil"
	"coffer/models/money"
)

// Condition types, operators and action types of rules, with the
// reference implementation's names (regex is ours; matches_regex is the
// reference's spelling of it).
const (
	CondName     = "transaction_name"
	CondNotes    = "transaction_notes"
	CondAmount   = "transaction_amount"
	CondType     = "transaction_type"
	CondMerchant = "transaction_merchant"
	CondCategory = "transaction_category"
	CondAccount  = "transaction_account"
	CondDate     = "transaction_date"
	CondCompound = "compound"

	ActSetCategory = "set_transaction_category"
	ActSetMerchant = "set_transaction_merchant"
	ActAddTag      = "set_transaction_tags"
	ActRename      = "set_transaction_name"
	ActTransfer    = "set_as_transfer_or_payment"
	ActExclude     = "exclude_transaction"
)

// RuleConditionTypes lists the condition types, in the order a form offers them.
var RuleConditionTypes = []string{CondName, CondNotes, CondAmount, CondType, CondMerchant, CondCategory, CondAccount, CondDate, CondCompound}

// RuleActionTypes lists the action types, in the order a form offers them.
var RuleActionTypes = []string{ActSetCategory, ActSetMerchant, ActAddTag, ActRename, ActTransfer, ActExclude}

var (
	textOps   = []string{"like", "not_like", "starts_with", "ends_with", "=", "!=", "regex", "matches_regex", "is_null", "is_not_null"}
	numberOps = []string{">", ">=", "<", "<=", "=", "!="}
	selectOps = []string{"=", "!=", "is_null", "is_not_null"}
)

// RuleOperators returns the operators a condition type accepts.
func RuleOperators(conditionType string) []string {
	switch conditionType {
	case CondName, CondNotes:
		return textOps
	case CondAmount, CondDate:
		return numberOps
	case CondType:
		return []string{"="}
	case CondMerchant, CondCategory, CondAccount:
		return selectOps
	case CondCompound:
		return []string{"and", "or"}
	}
	return nil
}

// RuleRow is what rules read and change of one transaction.
type RuleRow struct {
	ID         uuid.UUID
	AccountID  uuid.UUID
	Date       civil.Date
	Amount     money.Amount
	Name       string
	Notes      *string
	CategoryID *uuid.UUID
	MerchantID *uuid.UUID
	TagIDs     []uuid.UUID
	Excluded   bool
	Transfer   bool     // part of a transfer already
	Split      bool     // a part of a split: never made a transfer
	Locked     []string // fields a person set: rules leave them alone
	Reconciled bool     // locked by a finished reconciliation: rules leave the whole row alone
}

// RuleResult is what the rules did to one row: Row is the row after them;
// Changed names the fields whose value changed ("category", "merchant",
// "tags", "name", "excluded", "transfer"), RuleID the last rule that
// changed one, TransferTo the account a new transfer's other side goes to.
type RuleResult struct {
	Row        RuleRow
	Changed    []string
	RuleID     uuid.UUID
	TransferTo *uuid.UUID
	AddedTags  []uuid.UUID
	Work       int64 // units of work the row cost (see RowWorkBudget)
	Exhausted  bool  // the row's budget ran out: the rules below were skipped
	// TransferRefused says why the transfer a rule asked for was not made
	// (no exchange rate for an account of another currency); empty if it was.
	TransferRefused string
}

// changed reports whether the field changed.
func (r *RuleResult) changed(f string) bool { return slices.Contains(r.Changed, f) }

// Rule evaluation is bounded (issue 24), so that no rule, however written,
// and no text, however long, can stall a request: a text condition reads at
// most the first RuleTextBytes bytes of a name or notes; a regular
// expression compiles to at most maxRegexInsts instructions; and one row's
// evaluation does at most RowWorkBudget units of work (a text condition
// costs its text's length, times its program's size for a regular
// expression; any other condition costs one), after which the rules left
// are skipped for the row and its result says so (RuleResult.Exhausted).
// The bound is counted, not timed, so a row is filed the same way by
// every door and on every machine.
const (
	RuleTextBytes = 1024
	maxRegexInsts = 1000
	RowWorkBudget = 4_000_000
)

// RuleSet is a family's rules compiled for evaluation: regular
// expressions, amounts, dates and ids parsed once. It is read-only and safe
// to share between goroutines.
type RuleSet struct {
	rules []compiledRule
}

// Len is the number of rules in the set.
func (rs *RuleSet) Len() int {
	if rs == nil {
		return 0
	}
	return len(rs.rules)
}

type compiledRule struct {
	id        uuid.UUID
	active    bool
	effective civil.Date // "" when none
	stop      bool
	conds     []compiledCond // all must match
	actions   []compiledAction
}

type compiledCond struct {
	typ, op string
	text    string // normalized, lower case
	re      *regexp.Regexp
	insts   int64 // the size of re's program
	amount  money.Amount
	date    civil.Date
	id      uuid.UUID
	subs    []compiledCond
}

type compiledAction struct {
	typ  string
	id   uuid.UUID
	text string
}

// CompileRules compiles rules in the order given (the store gives them by
// position). A rule that does not compile is an *InvalidError naming it.
func CompileRules(rules []Rule) (*RuleSet, error) {
	rs := &RuleSet{rules: make([]compiledRule, 0, len(rules))}
	for i := range rules {
		cr, problems := compileRule(&rules[i])
		if len(problems) > 0 {
			return nil, Invalid(problems...)
		}
		rs.rules = append(rs.rules, cr)
	}
	return rs, nil
}

// ValidateRule returns a message for every part of r that cannot run: an
// unknown type or operator, a value that does not parse, an invalid
// regular expression, no conditions or no actions.
func ValidateRule(r *Rule) []string {
	_, problems := compileRule(r)
	return problems
}

func compileRule(r *Rule) (compiledRule, []string) {
	cr := compiledRule{id: r.ID, active: r.Active, stop: r.StopProcessing}
	if r.EffectiveDate != nil {
		cr.effective = *r.EffectiveDate
	}
	var problems []string
	if len(r.Conditions) == 0 {
		problems = append(problems, "Conditions can't be empty")
	}
	if len(r.Actions) == 0 {
		problems = append(problems, "Actions can't be empty")
	}
	for i := range r.Conditions {
		c, p := compileCond(&r.Conditions[i], 0)
		problems = append(problems, p...)
		cr.conds = append(cr.conds, c)
	}
	for i := range r.Actions {
		a, p := compileAction(&r.Actions[i])
		problems = append(problems, p...)
		cr.actions = append(cr.actions, a)
	}
	return cr, problems
}

func compileCond(c *RuleCondition, depth int) (compiledCond, []string) {
	out := compiledCond{typ: c.ConditionType, op: c.Operator}
	ops := RuleOperators(c.ConditionType)
	if ops == nil {
		return out, []string{fmt.Sprintf("Condition type %q is not supported", c.ConditionType)}
	}
	if !slices.Contains(ops, c.Operator) {
		return out, []string{fmt.Sprintf("Operator %q is not supported for %s (use one of: %s)", c.Operator, c.ConditionType, strings.Join(ops, ", "))}
	}
	value := ""
	if c.Value != nil {
		value = *c.Value
	}
	if c.ConditionType == CondCompound {
		if depth > 0 {
			return out, []string{"A compound condition cannot hold another compound condition"}
		}
		if len(c.SubConditions) == 0 {
			return out, []string{"A compound condition needs sub_conditions"}
		}
		var problems []string
		for i := range c.SubConditions {
			s, p := compileCond(&c.SubConditions[i], depth+1)
			problems = append(problems, p...)
			out.subs = append(out.subs, s)
		}
		return out, problems
	}
	if len(c.SubConditions) > 0 {
		return out, []string{"Only a compound condition has sub_conditions"}
	}
	if c.Operator == "is_null" || c.Operator == "is_not_null" {
		return out, nil
	}
	if strings.TrimSpace(value) == "" {
		return out, []string{fmt.Sprintf("Value of the %s condition can't be blank", c.ConditionType)}
	}
	switch c.ConditionType {
	case CondName, CondNotes:
		if c.Operator == "regex" || c.Operator == "matches_regex" {
			re, err := regexp.Compile("(?i)" + value)
			if err != nil {
				return out, []string{"Value is not a valid regular expression: " + regexErr(err)}
			}
			n, err := regexInsts(value)
			if err != nil || n > maxRegexInsts {
				return out, []string{fmt.Sprintf("Value is too large a regular expression (at most %d steps once compiled)", maxRegexInsts)}
			}
			out.re, out.insts = re, int64(n)
		} else {
			out.text = ruleText(value)
		}
	case CondAmount:
		a, err := money.ParseAmount(strings.TrimSpace(value))
		if err != nil {
			return out, []string{fmt.Sprintf("Value of the %s condition must be a number with at most 4 decimals", c.ConditionType)}
		}
		out.amount = a.Abs()
	case CondDate:
		d, err := civil.ParseDate(strings.TrimSpace(value))
		if err != nil {
			return out, []string{fmt.Sprintf("Value of the %s condition must be a date (YYYY-MM-DD)", c.ConditionType)}
		}
		out.date = d
	case CondType:
		if value != "income" && value != "expense" && value != "transfer" {
			return out, []string{"Value of the transaction_type condition must be one of: income, expense, transfer"}
		}
		out.text = value
	default: // merchant, category, account
		id, err := uuid.Parse(strings.TrimSpace(value))
		if err != nil {
			return out, []string{fmt.Sprintf("Value of the %s condition must be a UUID", c.ConditionType)}
		}
		out.id = id
	}
	return out, nil
}

// regexInsts is the size of the program a regular expression compiles to,
// which bounds the work of one match per byte of text.
func regexInsts(expr string) (int, error) {
	re, err := syntax.Parse("(?i)"+expr, syntax.Perl)
	if err != nil {
		return 0, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0, err
	}
	return len(prog.Inst), nil
}

// clipText is s cut to at most RuleTextBytes bytes, at a character's start.
func clipText(s string) string {
	if len(s) <= RuleTextBytes {
		return s
	}
	i := RuleTextBytes
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// regexErr is the part of a regexp error a person can act on.
func regexErr(err error) string {
	msg := err.Error()
	var e *syntax.Error
	if errors.As(err, &e) {
		msg = string(e.Code)
		if e.Expr != "" {
			msg += ": " + strings.TrimPrefix(e.Expr, "(?i)")
		}
	}
	if r := []rune(msg); len(r) > 200 {
		msg = string(r[:200]) + "…"
	}
	return msg
}

func compileAction(a *RuleAction) (compiledAction, []string) {
	out := compiledAction{typ: a.ActionType}
	value := ""
	if a.Value != nil {
		value = strings.TrimSpace(*a.Value)
	}
	switch a.ActionType {
	case ActExclude:
		return out, nil
	case ActRename:
		if value == "" {
			return out, []string{"Value of the set_transaction_name action can't be blank"}
		}
		if len([]rune(value)) > 255 {
			return out, []string{"Value of the set_transaction_name action is too long (maximum is 255 characters)"}
		}
		out.text = value
		return out, nil
	case ActSetCategory, ActSetMerchant, ActAddTag, ActTransfer:
		id, err := uuid.Parse(value)
		if err != nil {
			return out, []string{fmt.Sprintf("Value of the %s action must be a UUID", a.ActionType)}
		}
		out.id = id
		return out, nil
	}
	return out, []string{fmt.Sprintf("Action type %q is not supported", a.ActionType)}
}

// ruleText lowers s and collapses its runs of white space, as the
// comparisons of text conditions do on both sides.
func ruleText(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// Apply runs every active rule of the set, top to bottom, on row and
// returns what changed. The top rule wins: once a matching rule has an
// action on a field, rules further down leave that field alone, even when
// the value was already right or the field is locked; tags are additive
// and claim nothing. A matching rule with stop_processing ends the run
// for the row. Fields in row.Locked are never written, nor is a reconciled
// row.
func (rs *RuleSet) Apply(row RuleRow) RuleResult {
	return rs.apply(row, uuid.Nil)
}

// ApplyOnly runs only rule only's actions, as on its turn in a full run:
// the active rules above it still claim their fields and may stop it.
func (rs *RuleSet) ApplyOnly(row RuleRow, only uuid.UUID) RuleResult {
	return rs.apply(row, only)
}

func (rs *RuleSet) apply(row RuleRow, only uuid.UUID) RuleResult {
	res := RuleResult{Row: row}
	if rs == nil || row.Reconciled {
		return res
	}
	var claimed [6]bool // by action index in RuleActionTypes order, tags excepted
	lowerName := ""
	lowerNotes := ""
	nameLowered := false
	for ri := range rs.rules {
		r := &rs.rules[ri]
		target := only == uuid.Nil || r.id == only
		if !r.active && !(only != uuid.Nil && target) {
			continue
		}
		if r.effective != "" && res.Row.Date < r.effective {
			continue
		}
		if !nameLowered {
			lowerName, lowerNotes, nameLowered = ruleText(clipText(res.Row.Name)), "", true
			if res.Row.Notes != nil {
				lowerNotes = ruleText(clipText(*res.Row.Notes))
			}
		}
		matched := true
		for ci := range r.conds {
			if !r.conds[ci].match(&res.Row, lowerName, lowerNotes, &res.Work) {
				matched = false
				break
			}
		}
		if res.Work > RowWorkBudget {
			res.Exhausted = true
			break
		}
		if !matched {
			continue
		}
		for ai := range r.actions {
			a := &r.actions[ai]
			slot := slices.Index(RuleActionTypes, a.typ)
			if a.typ != ActAddTag && claimed[slot] {
				continue
			}
			if target && res.act(a) {
				res.RuleID = r.id
				if a.typ == ActRename {
					nameLowered = false
				}
			}
			if a.typ != ActAddTag {
				claimed[slot] = true
			}
		}
		if r.stop || (only != uuid.Nil && target) {
			break
		}
	}
	return res
}

// act performs one action on the row and reports whether a value changed.
func (res *RuleResult) act(a *compiledAction) bool {
	row := &res.Row
	locked := func(f string) bool { return slices.Contains(row.Locked, f) }
	mark := func(f string) bool {
		if !res.changed(f) {
			res.Changed = append(res.Changed, f)
		}
		return true
	}
	switch a.typ {
	case ActSetCategory:
		if locked("category") || (row.CategoryID != nil && *row.CategoryID == a.id) {
			return false
		}
		id := a.id
		row.CategoryID = &id
		return mark("category")
	case ActSetMerchant:
		if locked("merchant") || (row.MerchantID != nil && *row.MerchantID == a.id) {
			return false
		}
		id := a.id
		row.MerchantID = &id
		return mark("merchant")
	case ActAddTag:
		if locked("tags") || slices.Contains(row.TagIDs, a.id) {
			return false
		}
		row.TagIDs = append(slices.Clip(row.TagIDs), a.id)
		res.AddedTags = append(res.AddedTags, a.id)
		return mark("tags")
	case ActRename:
		if locked("name") || row.Name == a.text {
			return false
		}
		row.Name = a.text
		return mark("name")
	case ActExclude:
		if locked("excluded") || row.Excluded {
			return false
		}
		row.Excluded = true
		return mark("excluded")
	case ActTransfer:
		if row.Transfer || row.Split || row.AccountID == a.id || row.Amount == 0 {
			return false
		}
		row.Transfer = true
		id := a.id
		res.TransferTo = &id
		return mark("transfer")
	}
	return false
}

// match evaluates one condition on a row; name and notes come normalized.
// It adds its cost to work and gives up (false) once work is over
// RowWorkBudget.
func (c *compiledCond) match(row *RuleRow, name, notes string, work *int64) bool {
	switch c.typ {
	case CondCompound:
		if c.op == "or" {
			for i := range c.subs {
				if *work > RowWorkBudget {
					return false
				}
				if c.subs[i].match(row, name, notes, work) {
					return true
				}
			}
			return false
		}
		for i := range c.subs {
			if *work > RowWorkBudget || !c.subs[i].match(row, name, notes, work) {
				return false
			}
		}
		return true
	case CondName:
		*work += c.textCost(name)
		return *work <= RowWorkBudget && c.matchText(name, true)
	case CondNotes:
		*work += c.textCost(notes)
		return *work <= RowWorkBudget && c.matchText(notes, row.Notes != nil && *row.Notes != "")
	}
	*work++
	switch c.typ {
	case CondAmount:
		return compare(int64(row.Amount.Abs()), int64(c.amount), c.op)
	case CondDate:
		return compare(int64(strings.Compare(string(row.Date), string(c.date))), 0, c.op)
	case CondType:
		switch c.text {
		case "transfer":
			return row.Transfer
		case "income":
			return !row.Transfer && row.Amount < 0
		default:
			return !row.Transfer && row.Amount >= 0
		}
	case CondMerchant:
		return c.matchID(row.MerchantID)
	case CondCategory:
		return c.matchID(row.CategoryID)
	case CondAccount:
		return c.matchID(&row.AccountID)
	}
	return false
}

// textCost is the work of matching s: its length, times the program's
// size for a regular expression.
func (c *compiledCond) textCost(s string) int64 {
	n := int64(len(s)) + 1
	if c.re != nil {
		n *= c.insts
	}
	return n
}

func (c *compiledCond) matchText(s string, present bool) bool {
	switch c.op {
	case "is_null":
		return !present
	case "is_not_null":
		return present
	case "like":
		return strings.Contains(s, c.text)
	case "not_like":
		return !strings.Contains(s, c.text)
	case "starts_with":
		return strings.HasPrefix(s, c.text)
	case "ends_with":
		return strings.HasSuffix(s, c.text)
	case "=":
		return s == c.text
	case "!=":
		return s != c.text
	case "regex", "matches_regex":
		return c.re.MatchString(s)
	}
	return false
}

func (c *compiledCond) matchID(id *uuid.UUID) bool {
	switch c.op {
	case "is_null":
		return id == nil
	case "is_not_null":
		return id != nil
	case "=":
		return id != nil && *id == c.id
	case "!=":
		return id == nil || *id != c.id
	}
	return false
}

func compare(a, b int64, op string) bool {
	switch op {
	case ">":
		return a > b
	case ">=":
		return a >= b
	case "<":
		return a < b
	case "<=":
		return a <= b
	case "=":
		return a == b
	case "!=":
		return a != b
	}
	return false
}

// refersTo names the table of the record an action writes, if any.
func (a *compiledAction) refersTo() (string, bool) {
	switch a.typ {
	case ActSetCategory:
		return "categories", true
	case ActSetMerchant:
		return "merchants", true
	case ActAddTag:
		return "tags", true
	case ActTransfer:
		return "accounts", true
	}
	return "", false
}

// refersTo names the table of the record a condition compares with, if any.
func (c *compiledCond) refersTo() (string, bool) {
	if c.id == uuid.Nil {
		return "", false
	}
	switch c.typ {
	case CondCategory:
		return "categories", true
	case CondMerchant:
		return "merchants", true
	case CondAccount:
		return "accounts", true
	}
	return "", false
}
