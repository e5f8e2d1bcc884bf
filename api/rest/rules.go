package rest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/jobs"
	"coffer/models"
	"coffer/models/money"
)

// The rules API answers with the reference's envelopes: {data, meta} for a
// list, {data} for one rule.

type ruleConditionJSON struct {
	ID            string              `json:"id"`
	ConditionType string              `json:"condition_type"`
	Operator      string              `json:"operator"`
	Value         *string             `json:"value"`
	SubConditions []ruleConditionJSON `json:"sub_conditions"`
	CreatedAt     string              `json:"created_at"`
	UpdatedAt     string              `json:"updated_at"`
}

type ruleActionJSON struct {
	ID         string  `json:"id"`
	ActionType string  `json:"action_type"`
	Value      *string `json:"value"`
	CreatedAt  string  `json:"created_at"`
	UpdatedAt  string  `json:"updated_at"`
}

type ruleJSON struct {
	ID             string              `json:"id"`
	Name           *string             `json:"name"`
	ResourceType   string              `json:"resource_type"`
	Active         bool                `json:"active"`
	EffectiveDate  *string             `json:"effective_date"`
	Position       int                 `json:"position"`
	StopProcessing bool                `json:"stop_processing"`
	Conditions     []ruleConditionJSON `json:"conditions"`
	Actions        []ruleActionJSON    `json:"actions"`
	CreatedAt      string              `json:"created_at"`
	UpdatedAt      string              `json:"updated_at"`
}

func renderRuleCondition(c *models.RuleCondition) ruleConditionJSON {
	return ruleConditionJSON{ID: c.ID.String(), ConditionType: c.ConditionType, Operator: c.Operator, Value: c.Value,
		SubConditions: renderAll(c.SubConditions, renderRuleCondition), CreatedAt: timestamp(c.CreatedAt), UpdatedAt: timestamp(c.UpdatedAt)}
}

func renderRuleAction(a *models.RuleAction) ruleActionJSON {
	return ruleActionJSON{ID: a.ID.String(), ActionType: a.ActionType, Value: a.Value, CreatedAt: timestamp(a.CreatedAt), UpdatedAt: timestamp(a.UpdatedAt)}
}

func renderRule(r *models.Rule) ruleJSON {
	out := ruleJSON{ID: r.ID.String(), Name: r.Name, ResourceType: r.ResourceType, Active: r.Active, Position: r.Position,
		StopProcessing: r.StopProcessing, Conditions: renderAll(r.Conditions, renderRuleCondition),
		Actions: renderAll(r.Actions, renderRuleAction), CreatedAt: timestamp(r.CreatedAt), UpdatedAt: timestamp(r.UpdatedAt)}
	if r.EffectiveDate != nil {
		d := string(*r.EffectiveDate)
		out.EffectiveDate = &d
	}
	return out
}

// boolQuery reads a true/false/1/0 query parameter, as the reference does.
func boolQuery(c *fiber.Ctx, name string) (*bool, error) {
	switch strings.ToLower(c.Query(name)) {
	case "":
		return nil, nil
	case "true", "1":
		v := true
		return &v, nil
	case "false", "0":
		v := false
		return &v, nil
	}
	return nil, httperr.Invalid([]string{name + " must be one of: true, false, 1, 0"})
}

func (h *Handler) listRules(c *fiber.Ctx) error {
	if rt := c.Query("resource_type"); rt != "" && rt != "transaction" {
		return httperr.Invalid([]string{"resource_type must be one of: transaction"})
	}
	active, err := boolQuery(c, "active")
	if err != nil {
		return err
	}
	p, err := parsePage(c)
	if err != nil {
		return err
	}
	rules, total, err := h.store.ListRules(c.UserContext(), KeyOf(c).FamilyID, models.RuleFilter{Active: active}, p)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": renderAll(rules, renderRule), "meta": metaOf(p, total)})
}

func (h *Handler) showRule(c *fiber.Ctx) error {
	r, err := byPathID(c, h.store.Rule)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": renderRule(r)})
}

func (h *Handler) createRule(c *fiber.Ctx) error {
	f, err := decodeObject(c, "rule")
	if err != nil {
		return err
	}
	r := &models.Rule{FamilyID: KeyOf(c).FamilyID, Active: true, ResourceType: "transaction"}
	ruleFields(f, r, true)
	if err := f.err(); err != nil {
		return err
	}
	if err := h.store.CreateRule(c.UserContext(), r); err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"data": renderRule(r)})
}

func (h *Handler) updateRule(c *fiber.Ctx) error {
	id, f, err := idAndObject(c, "rule")
	if err != nil {
		return err
	}
	r, err := h.store.Rule(c.UserContext(), KeyOf(c).FamilyID, id)
	if err != nil {
		return err
	}
	conds, acts := ruleFields(f, r, false)
	if err := f.err(); err != nil {
		return err
	}
	if err := h.store.UpdateRule(c.UserContext(), r, conds, acts); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": renderRule(r)})
}

func (h *Handler) deleteRule(c *fiber.Ctx) error {
	return deleteOne(c, h.store.DeleteRule, "Rule")
}

// previewLimit is how many transactions a preview lists; the total counts all.
const previewLimit = 100

type rulePreviewJSON struct {
	TransactionID     string   `json:"transaction_id"`
	Date              string   `json:"date"`
	Name              string   `json:"name"`
	Amount            string   `json:"amount"`
	Currency          string   `json:"currency"`
	Changes           []string `json:"changes"`
	NewName           *string  `json:"new_name,omitempty"`
	CategoryID        *string  `json:"category_id,omitempty"`
	MerchantID        *string  `json:"merchant_id,omitempty"`
	AddedTagIDs       []string `json:"added_tag_ids,omitempty"`
	Excluded          *bool    `json:"excluded,omitempty"`
	TransferAccountID *string  `json:"transfer_account_id,omitempty"`
}

func renderRuleChange(ch *models.RuleChange) rulePreviewJSON {
	t := &ch.Transaction
	out := rulePreviewJSON{TransactionID: t.ID.String(), Date: string(t.Date), Name: t.Name,
		Amount: t.Amount.Format(money.MustCurrency(t.Currency)), Currency: t.Currency, Changes: ch.Changed}
	for _, f := range ch.Changed {
		switch f {
		case "name":
			out.NewName = &ch.After.Name
		case "category":
			out.CategoryID = optID(ch.After.CategoryID)
		case "merchant":
			out.MerchantID = optID(ch.After.MerchantID)
		case "tags":
			for _, id := range ch.AddedTags {
				out.AddedTagIDs = append(out.AddedTagIDs, id.String())
			}
		case "excluded":
			v := true
			out.Excluded = &v
		case "transfer":
			out.TransferAccountID = optID(ch.TransferTo)
		}
	}
	return out
}

// previewRule answers which existing transactions the rule in the body
// would change if it were saved and applied; it saves nothing.
func (h *Handler) previewRule(c *fiber.Ctx) error {
	f, err := decodeObject(c, "rule")
	if err != nil {
		return err
	}
	r := &models.Rule{FamilyID: KeyOf(c).FamilyID, Active: true, ResourceType: "transaction"}
	ruleFields(f, r, true)
	if err := f.err(); err != nil {
		return err
	}
	p, err := h.store.PreviewRule(c.UserContext(), r, previewLimit)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": renderAll(p.Changes, renderRuleChange),
		"meta": fiber.Map{"total_count": p.Total, "limit": previewLimit}})
}

// applyRule starts a rule run over the family's existing transactions:
// 202 with the pending run, which the rule:apply job carries out.
func (h *Handler) applyRule(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	fam := KeyOf(c).FamilyID
	run, err := h.store.CreateRuleRun(c.UserContext(), fam, id, "manual")
	if err != nil {
		return err
	}
	if err := enqueueRuleRun(c, h, fam, run.ID); err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"data": renderRuleRun(run)})
}

// enqueueRuleRun queues the job of a committed run. A failed enqueue leaves
// the run pending; the queue rebuild (or another apply) picks it up, so
// the client still gets its 202.
func enqueueRuleRun(c *fiber.Ctx, h *Handler, familyID, runID uuid.UUID) error {
	task, err := jobs.NewRuleApplyTask(familyID, runID)
	if err != nil {
		return err
	}
	if _, err := h.queue.EnqueueContext(c.UserContext(), task); err != nil {
		h.log.Warn("rule run not queued", "rule_run_id", runID, "error", err)
	}
	return nil
}

// ruleFields reads a rule's members into r and reports whether the
// conditions and the actions were given (and so replace the stored ones).
// The reference's nested-attributes names are accepted too.
func ruleFields(f *fields, r *models.Rule, create bool) (conds, acts bool) {
	if f.has("name") {
		if f.isNull("name") {
			r.Name = nil
		} else if s, ok := f.str("name", maxName, true); ok {
			r.Name = &s
		}
	}
	if rt, ok := f.oneOf("resource_type", "transaction"); ok {
		r.ResourceType = rt
	}
	if v, ok := f.boolean("active"); ok {
		r.Active = v
	}
	if v, ok := f.boolean("stop_processing"); ok {
		r.StopProcessing = v
	}
	if f.has("effective_date") {
		if f.isNull("effective_date") {
			r.EffectiveDate = nil
		} else if d, ok := f.date("effective_date"); ok {
			r.EffectiveDate = &d
		}
	}
	if f.has("position") {
		var n int
		if err := json.Unmarshal(f.raw["position"], &n); err != nil || n < 0 || n > 1_000_000 {
			f.add("position must be a whole number from 0 to 1000000")
		} else {
			r.Position = n
		}
	}
	for _, name := range []string{"conditions", "conditions_attributes"} {
		if f.has(name) {
			r.Conditions, conds = parseConditions(f, name, f.raw[name], 0), true
		}
	}
	for _, name := range []string{"actions", "actions_attributes"} {
		if f.has(name) {
			r.Actions, acts = parseActions(f, name, f.raw[name]), true
		}
	}
	if create && (!conds || !acts) {
		if !conds {
			f.add("conditions is required")
		}
		if !acts {
			f.add("actions is required")
		}
	}
	return conds, acts
}

// ruleParts is how many conditions (with sub-conditions) or actions one
// rule may have: plenty for a person, a bound for a body.
const ruleParts = 50

// ruleItems reads raw, member name of f, as an array of at most ruleParts
// objects; a problem goes on f.
func ruleItems(f *fields, name string, raw json.RawMessage) ([]map[string]json.RawMessage, bool) {
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		f.add(name + " must be an array of objects")
		return nil, false
	}
	if len(items) > ruleParts {
		f.add(name + " has more than " + strconv.Itoa(ruleParts) + " items")
		return nil, false
	}
	return items, true
}

// parseConditions reads an array of condition objects.
func parseConditions(f *fields, name string, raw json.RawMessage, depth int) []models.RuleCondition {
	items, ok := ruleItems(f, name, raw)
	if !ok {
		return nil
	}
	out := make([]models.RuleCondition, 0, len(items))
	for i, item := range items {
		at := name + "[" + strconv.Itoa(i) + "]"
		sub := &fields{raw: item}
		c := models.RuleCondition{ConditionType: sub.required("condition_type", 64), Operator: sub.required("operator", 32)}
		c.Value = ruleValue(sub)
		for _, subName := range []string{"sub_conditions", "sub_conditions_attributes"} {
			if sub.has(subName) && !sub.isNull(subName) {
				if depth > 0 {
					sub.add(subName + " cannot be nested further")
				} else {
					c.SubConditions = parseConditions(sub, subName, item[subName], depth+1)
				}
			}
		}
		for _, p := range sub.problems {
			f.add(at + "." + p)
		}
		out = append(out, c)
	}
	return out
}

// parseActions reads an array of action objects.
func parseActions(f *fields, name string, raw json.RawMessage) []models.RuleAction {
	items, ok := ruleItems(f, name, raw)
	if !ok {
		return nil
	}
	out := make([]models.RuleAction, 0, len(items))
	for i, item := range items {
		sub := &fields{raw: item}
		a := models.RuleAction{ActionType: sub.required("action_type", 64)}
		a.Value = ruleValue(sub)
		for _, p := range sub.problems {
			f.add(name + "[" + strconv.Itoa(i) + "]." + p)
		}
		out = append(out, a)
	}
	return out
}

// ruleValue reads a condition's or action's value: a string, a number (kept
// as written) or null.
func ruleValue(f *fields) *string {
	raw, ok := f.raw["value"]
	if !ok || f.isNull("value") {
		return nil
	}
	if t := bytes.TrimSpace(raw); len(t) > 0 && (t[0] == '-' || (t[0] >= '0' && t[0] <= '9')) {
		var n json.Number
		if json.Unmarshal(t, &n) == nil {
			s := n.String()
			return &s
		}
	}
	s, ok := f.str("value", 1000, false)
	if !ok {
		return nil
	}
	return &s
}

// boolean returns a JSON true or false member; absent or null gives ok false.
func (f *fields) boolean(name string) (v, ok bool) {
	raw, present := f.raw[name]
	if !present || f.isNull(name) {
		return false, false
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		f.add(name + " must be true or false")
		return false, false
	}
	return v, true
}
