package screens

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/jobs"
	"coffer/models"
	"coffer/models/civil"
)

// The rules screens: the list with each rule's latest runs, and one form
// to add or edit a rule that works without JavaScript. The form has a
// fixed number of condition and action rows (blank rows are ignored); a
// condition's value is typed, or picked from the family's records for the
// kinds that name one. "Preview" shows what the rule would change without
// saving; "Apply" starts a rule run.

// ruleRow is one condition or action row of the form.
type ruleRow struct {
	Type, Operator, Value, Ref string
}

type rulesData struct {
	Rules   []models.Rule
	Runs    []models.RuleRun
	Names   map[uuid.UUID]string // categories, merchants, tags and accounts by id
	Rule    *models.Rule         // on the edit form
	Form    *form
	Conds   []ruleRow
	Acts    []ruleRow
	Refs    ruleRefs
	Preview []models.RuleChange
	Total   int // rows the previewed rule would change
	Shown   bool
	Complex bool // the rule has groups the form cannot show
}

type ruleRefs struct {
	Accounts, Categories, Merchants, Tags []option
}

type option struct {
	ID   uuid.UUID
	Name string
}

// Labels of the form's choices, for people.
var (
	conditionLabels = map[string]string{models.CondName: "Name", models.CondNotes: "Notes", models.CondAmount: "Amount (either sign)",
		models.CondType: "Kind (income, expense, transfer)", models.CondMerchant: "Merchant", models.CondCategory: "Category",
		models.CondAccount: "Account", models.CondDate: "Date (YYYY-MM-DD)"}
	operatorLabels = [][2]string{{"like", "contains"}, {"not_like", "does not contain"}, {"starts_with", "starts with"},
		{"ends_with", "ends with"}, {"=", "is"}, {"!=", "is not"}, {"regex", "matches the regular expression"},
		{">", "is more than / after"}, {">=", "is at least / on or after"}, {"<", "is less than / before"},
		{"<=", "is at most / on or before"}, {"is_null", "is empty"}, {"is_not_null", "is not empty"}}
	actionLabels = map[string]string{models.ActSetCategory: "Set category", models.ActSetMerchant: "Set merchant",
		models.ActAddTag: "Add tag", models.ActRename: "Rename to", models.ActTransfer: "Mark as transfer with account",
		models.ActExclude: "Exclude from budgets and reports"}
)

// refKinds are the condition and action types whose value is a record.
var refKinds = map[string]bool{models.CondMerchant: true, models.CondCategory: true, models.CondAccount: true, models.CondType: true,
	models.ActSetCategory: true, models.ActSetMerchant: true, models.ActAddTag: true, models.ActTransfer: true}

func (h *Handler) rulesData(c *fiber.Ctx, d *rulesData) error {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	d.Names = map[uuid.UUID]string{}
	add := func(dst *[]option, id uuid.UUID, name string) {
		*dst = append(*dst, option{ID: id, Name: name})
		d.Names[id] = name
	}
	accounts, _, err := h.store.Accounts(ctx, fam, models.Page{Number: 1, Size: 1000})
	if err != nil {
		return err
	}
	for _, a := range accounts {
		add(&d.Refs.Accounts, a.ID, a.Name)
	}
	cats, _, err := h.store.Categories(ctx, fam, models.Page{Number: 1, Size: 1000})
	if err != nil {
		return err
	}
	for _, x := range cats {
		add(&d.Refs.Categories, x.ID, x.Name)
	}
	merchants, err := h.store.Merchants(ctx, fam)
	if err != nil {
		return err
	}
	for _, x := range merchants {
		add(&d.Refs.Merchants, x.ID, x.Name)
	}
	tags, err := h.store.Tags(ctx, fam)
	if err != nil {
		return err
	}
	for _, x := range tags {
		add(&d.Refs.Tags, x.ID, x.Name)
	}
	return nil
}

func (h *Handler) listRules(c *fiber.Ctx) error {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	d := rulesData{}
	var err error
	if d.Rules, err = h.store.OrderedRules(ctx, fam); err != nil {
		return err
	}
	if d.Runs, _, err = h.store.RuleRuns(ctx, fam, models.RuleRunFilter{}, models.Page{Number: 1, Size: 20}); err != nil {
		return err
	}
	if err := h.rulesData(c, &d); err != nil {
		return err
	}
	return h.pages.Render(c, fiber.StatusOK, "rules", web.Page{Title: "Rules", Data: d})
}

// ruleForm renders the form with rows for r's conditions and actions and
// a few blank ones.
func (h *Handler) ruleForm(c *fiber.Ctx, status int, d rulesData) error {
	if err := h.rulesData(c, &d); err != nil {
		return err
	}
	for len(d.Conds) < 3 || d.Conds[len(d.Conds)-1] != (ruleRow{}) {
		d.Conds = append(d.Conds, ruleRow{})
	}
	for len(d.Acts) < 2 || d.Acts[len(d.Acts)-1] != (ruleRow{}) {
		d.Acts = append(d.Acts, ruleRow{})
	}
	title := "New rule"
	if d.Rule != nil {
		title = "Edit rule"
	}
	return h.pages.Render(c, status, "rule_form", web.Page{Title: title, Data: d})
}

func (h *Handler) newRule(c *fiber.Ctx) error {
	f := newForm(c)
	f.Values["active"], f.Values["match"] = "on", "all"
	return h.ruleForm(c, fiber.StatusOK, rulesData{Form: f})
}

func (h *Handler) familyRule(c *fiber.Ctx) (*models.Rule, error) {
	id, err := httperr.PathID(c)
	if err != nil {
		return nil, err
	}
	return h.store.Rule(c.UserContext(), web.SessionOf(c).User.FamilyID, id)
}

func (h *Handler) editRule(c *fiber.Ctx) error {
	r, err := h.familyRule(c)
	if err != nil {
		return err
	}
	f := newForm(c)
	f.Values = map[string]string{"name": deref(r.Name), "position": strconv.Itoa(r.Position), "match": "all"}
	if r.Active {
		f.Values["active"] = "on"
	}
	if r.StopProcessing {
		f.Values["stop_processing"] = "on"
	}
	if r.EffectiveDate != nil {
		f.Values["effective_date"] = string(*r.EffectiveDate)
	}
	d := rulesData{Rule: r, Form: f}
	conds := r.Conditions
	if len(conds) == 1 && conds[0].ConditionType == models.CondCompound && conds[0].Operator == "or" {
		f.Values["match"], conds = "any", conds[0].SubConditions
	}
	for _, cd := range conds {
		if cd.ConditionType == models.CondCompound {
			d.Complex = true
		}
		row := ruleRow{Type: cd.ConditionType, Operator: cd.Operator}
		if refKinds[cd.ConditionType] {
			row.Ref = deref(cd.Value)
		} else {
			row.Value = deref(cd.Value)
		}
		d.Conds = append(d.Conds, row)
	}
	for _, a := range r.Actions {
		row := ruleRow{Type: a.ActionType}
		if refKinds[a.ActionType] {
			row.Ref = deref(a.Value)
		} else {
			row.Value = deref(a.Value)
		}
		d.Acts = append(d.Acts, row)
	}
	return h.ruleForm(c, fiber.StatusOK, d)
}

// readRule reads the form into r and returns the rows as typed.
func readRule(f *form, r *models.Rule) (conds, acts []ruleRow) {
	if name := f.text("name", "Name", maxName, false); name != "" {
		r.Name = &name
	} else {
		r.Name = nil
	}
	r.Active = f.value("active") != ""
	r.StopProcessing = f.value("stop_processing") != ""
	r.EffectiveDate = nil
	if v := f.value("effective_date"); v != "" {
		if d, err := civil.ParseDate(v); err != nil {
			f.fail("effective_date", "Apply from must be a date such as 2024-01-31.")
		} else {
			r.EffectiveDate = &d
		}
	}
	r.Position = 0
	if v := f.value("position"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1_000_000 {
			f.fail("position", "Order must be a whole number from 0 to 1000000.")
		}
		r.Position = n
	}
	var list []models.RuleCondition
	for i := 0; i < 50; i++ {
		k := strconv.Itoa(i)
		row := ruleRow{Type: f.value("cond_type_" + k), Operator: f.value("cond_op_" + k),
			Value: f.text("cond_value_"+k, "Value", 1000, false), Ref: f.value("cond_ref_" + k)}
		if row.Type == "" {
			continue
		}
		conds = append(conds, row)
		value := row.Value
		if refKinds[row.Type] {
			value = row.Ref
		}
		cd := models.RuleCondition{ConditionType: row.Type, Operator: row.Operator}
		if value != "" {
			cd.Value = &value
		}
		list = append(list, cd)
	}
	r.Conditions = list
	if f.value("match") == "any" && len(list) > 1 {
		r.Conditions = []models.RuleCondition{{ConditionType: models.CondCompound, Operator: "or", SubConditions: list}}
	}
	r.Actions = nil
	for i := 0; i < 50; i++ {
		k := strconv.Itoa(i)
		row := ruleRow{Type: f.value("act_type_" + k), Value: f.text("act_value_"+k, "Value", maxName, false), Ref: f.value("act_ref_" + k)}
		if row.Type == "" {
			continue
		}
		acts = append(acts, row)
		value := row.Value
		if refKinds[row.Type] {
			value = row.Ref
		}
		a := models.RuleAction{ActionType: row.Type}
		if value != "" {
			a.Value = &value
		}
		r.Actions = append(r.Actions, a)
	}
	return conds, acts
}

// saveRule creates (r.ID nil) or updates a rule from the form, or, when
// the Preview button was pressed, shows what it would change.
func (h *Handler) saveRule(c *fiber.Ctx, r *models.Rule) error {
	f := newForm(c)
	conds, acts := readRule(f, r)
	d := rulesData{Form: f, Conds: conds, Acts: acts}
	if r.ID != uuid.Nil {
		d.Rule = r
	}
	if f.ok() {
		var err error
		switch {
		case f.value("intent") == "preview":
			var p *models.RulePreview
			if p, err = h.store.PreviewRule(c.UserContext(), r, 100); err == nil {
				d.Preview, d.Total, d.Shown = p.Changes, p.Total, true
			}
		case r.ID == uuid.Nil:
			err = h.store.CreateRule(c.UserContext(), r)
		default:
			err = h.store.UpdateRule(c.UserContext(), r, true, true)
		}
		var inv *models.InvalidError
		if errors.As(err, &inv) {
			f.fail("form", strings.Join(inv.Problems, " "))
		} else if err != nil {
			return err
		}
	}
	if !f.ok() || d.Shown {
		status := fiber.StatusOK
		if !f.ok() {
			status = fiber.StatusUnprocessableEntity
		}
		return h.ruleForm(c, status, d)
	}
	return h.site.Redirect(c, "/rules", "Saved rule "+ruleName(r)+". It applies to new transactions; use Apply to change existing ones.")
}

func ruleName(r *models.Rule) string {
	if r.Name != nil && *r.Name != "" {
		return *r.Name
	}
	return "without a name"
}

func (h *Handler) createRule(c *fiber.Ctx) error {
	return h.saveRule(c, &models.Rule{FamilyID: web.SessionOf(c).User.FamilyID, ResourceType: "transaction"})
}

func (h *Handler) updateRule(c *fiber.Ctx) error {
	r, err := h.familyRule(c)
	if err != nil {
		return err
	}
	return h.saveRule(c, r)
}

func (h *Handler) applyRule(c *fiber.Ctx) error {
	r, err := h.familyRule(c)
	if err != nil {
		return err
	}
	run, err := h.store.CreateRuleRun(c.UserContext(), r.FamilyID, r.ID, "manual")
	if err != nil {
		return err
	}
	h.queueRuleRun(c, run)
	return h.site.Redirect(c, "/rules", "Applying rule "+ruleName(r)+" to "+strconv.Itoa(run.TransactionsQueued)+" transactions; the runs below show how far it got.")
}

// applyAllRules runs every active rule, in order, over the existing
// transactions, as they run on a new one.
func (h *Handler) applyAllRules(c *fiber.Ctx) error {
	run, err := h.store.CreateAllRulesRun(c.UserContext(), web.SessionOf(c).User.FamilyID)
	if err != nil {
		return err
	}
	h.queueRuleRun(c, run)
	return h.site.Redirect(c, "/rules", "Applying every active rule to "+strconv.Itoa(run.TransactionsQueued)+" transactions; the runs below show how far it got.")
}

func (h *Handler) queueRuleRun(c *fiber.Ctx, run *models.RuleRun) {
	task, err := jobs.NewRuleApplyTask(run.FamilyID, run.ID)
	if err == nil {
		_, err = h.queue.EnqueueContext(c.UserContext(), task)
	}
	if err != nil {
		// The run stays pending; the queue rebuild picks it up.
		h.log.Warn("rule run not queued", "request_id", httperr.RequestID(c), "rule_run_id", run.ID, "error", err)
	}
}

// moveRule moves a rule one place up or down the order the rules run in.
func (h *Handler) moveRule(c *fiber.Ctx) error {
	r, err := h.familyRule(c)
	if err != nil {
		return err
	}
	by := 1
	if c.FormValue("direction") == "up" {
		by = -1
	}
	if err := h.store.MoveRule(c.UserContext(), r.FamilyID, r.ID, by); err != nil {
		return err
	}
	return h.site.Redirect(c, "/rules", "Moved rule "+ruleName(r)+".")
}

func (h *Handler) deleteRule(c *fiber.Ctx) error {
	r, err := h.familyRule(c)
	if err != nil {
		return err
	}
	if err := h.store.DeleteRule(c.UserContext(), r.FamilyID, r.ID); err != nil {
		return err
	}
	return h.site.Redirect(c, "/rules", "Deleted rule "+ruleName(r)+". Transactions keep what it set.")
}

// refName is the name of the record a value names, or the value itself.
func refName(names map[uuid.UUID]string, value *string) string {
	if value == nil {
		return ""
	}
	if id, err := uuid.Parse(*value); err == nil {
		if n, ok := names[id]; ok {
			return n
		}
	}
	return *value
}

func labelOr(labels map[string]string, key string) string {
	if l, ok := labels[key]; ok {
		return l
	}
	return key
}

func operatorLabel(op string) string {
	for _, l := range operatorLabels {
		if l[0] == op {
			return l[1]
		}
	}
	if op == "matches_regex" {
		return "matches the regular expression"
	}
	return op
}
