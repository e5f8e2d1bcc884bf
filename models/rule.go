package models

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
)

// Rule files transactions: when its conditions all match, its actions set
// fields. Rules run by Position, then creation.
type Rule struct {
	bun.BaseModel `bun:"table:rules,alias:ru"`

	ID             uuid.UUID   `bun:"id,pk"`
	FamilyID       uuid.UUID   `bun:"family_id"`
	Name           *string     `bun:"name"`
	ResourceType   string      `bun:"resource_type"`
	Active         bool        `bun:"active"`
	EffectiveDate  *civil.Date `bun:"effective_date"` // rows dated before it are left alone
	Position       int         `bun:"position"`
	StopProcessing bool        `bun:"stop_processing"` // a row it matches is not touched by rules below
	CreatedAt      time.Time   `bun:"created_at"`
	UpdatedAt      time.Time   `bun:"updated_at"`

	Conditions []RuleCondition `bun:"-"` // top level; compound ones hold SubConditions
	Actions    []RuleAction    `bun:"-"`
}

// RuleCondition is one test of a rule; a compound one (operator "and" or
// "or") combines its SubConditions.
type RuleCondition struct {
	bun.BaseModel `bun:"table:rule_conditions,alias:rc"`

	ID            uuid.UUID  `bun:"id,pk"`
	FamilyID      uuid.UUID  `bun:"family_id"`
	RuleID        uuid.UUID  `bun:"rule_id"`
	ParentID      *uuid.UUID `bun:"parent_id"`
	ConditionType string     `bun:"condition_type"`
	Operator      string     `bun:"operator"`
	Value         *string    `bun:"value"`
	Position      int        `bun:"position"`
	CreatedAt     time.Time  `bun:"created_at"`
	UpdatedAt     time.Time  `bun:"updated_at"`

	SubConditions []RuleCondition `bun:"-"`
}

// RuleAction is one change a rule makes.
type RuleAction struct {
	bun.BaseModel `bun:"table:rule_actions,alias:ra"`

	ID         uuid.UUID `bun:"id,pk"`
	FamilyID   uuid.UUID `bun:"family_id"`
	RuleID     uuid.UUID `bun:"rule_id"`
	ActionType string    `bun:"action_type"`
	Value      *string   `bun:"value"`
	Position   int       `bun:"position"`
	CreatedAt  time.Time `bun:"created_at"`
	UpdatedAt  time.Time `bun:"updated_at"`
}

// RuleFilter narrows a list of rules; nil fields do not filter.
type RuleFilter struct {
	Active *bool
}

// ListRules lists a page of the family's rules in creation order, as the
// reference does, with their conditions and actions.
func (s *Store) ListRules(ctx context.Context, familyID uuid.UUID, f RuleFilter, p Page) ([]Rule, int, error) {
	rules := []Rule{}
	q := s.db.NewSelect().Model(&rules).Where("ru.family_id = ?", familyID).OrderExpr("ru.created_at, ru.id")
	if f.Active != nil {
		q.Where("ru.active = ?", *f.Active)
	}
	n, err := p.scan(ctx, q)
	if err != nil {
		return nil, 0, dbErr("list rules", err)
	}
	return rules, n, s.loadRuleParts(ctx, familyID, rules)
}

// OrderedRules returns every rule of the family in the order they run.
func (s *Store) OrderedRules(ctx context.Context, familyID uuid.UUID) ([]Rule, error) {
	rules := []Rule{}
	err := s.db.NewSelect().Model(&rules).Where("ru.family_id = ?", familyID).
		OrderExpr("ru.position, ru.created_at, ru.id").Scan(ctx)
	if err != nil {
		return nil, dbErr("list rules", err)
	}
	return rules, s.loadRuleParts(ctx, familyID, rules)
}

// Rule returns one rule of the family with its conditions and actions.
func (s *Store) Rule(ctx context.Context, familyID, id uuid.UUID) (*Rule, error) {
	r, err := oneOf[Rule](ctx, s, familyID, id, "get rule")
	if err != nil {
		return nil, err
	}
	rules := []Rule{*r}
	if err := s.loadRuleParts(ctx, familyID, rules); err != nil {
		return nil, err
	}
	return &rules[0], nil
}

// loadRuleParts fills the conditions and actions of rules in two queries.
func (s *Store) loadRuleParts(ctx context.Context, familyID uuid.UUID, rules []Rule) error {
	if len(rules) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(rules))
	for i := range rules {
		ids[i] = rules[i].ID
		rules[i].Conditions, rules[i].Actions = []RuleCondition{}, []RuleAction{}
	}
	var conds []RuleCondition
	if err := s.db.NewSelect().Model(&conds).Where("rc.family_id = ?", familyID).Where("rc.rule_id IN (?)", bun.List(ids)).
		OrderExpr("rc.position, rc.created_at, rc.id").Scan(ctx); err != nil {
		return dbErr("get rule conditions", err)
	}
	var acts []RuleAction
	if err := s.db.NewSelect().Model(&acts).Where("ra.family_id = ?", familyID).Where("ra.rule_id IN (?)", bun.List(ids)).
		OrderExpr("ra.position, ra.created_at, ra.id").Scan(ctx); err != nil {
		return dbErr("get rule actions", err)
	}
	subs := map[uuid.UUID][]RuleCondition{}
	for _, c := range conds {
		if c.ParentID != nil {
			subs[*c.ParentID] = append(subs[*c.ParentID], c)
		}
	}
	byRule := make(map[uuid.UUID]*Rule, len(rules))
	for i := range rules {
		byRule[rules[i].ID] = &rules[i]
	}
	for _, c := range conds {
		if c.ParentID != nil {
			continue
		}
		c.SubConditions = subs[c.ID]
		if c.SubConditions == nil {
			c.SubConditions = []RuleCondition{}
		}
		r := byRule[c.RuleID]
		r.Conditions = append(r.Conditions, c)
	}
	for _, a := range acts {
		r := byRule[a.RuleID]
		r.Actions = append(r.Actions, a)
	}
	return nil
}

// checkRule refuses a rule that cannot run or whose actions or conditions
// name records that are not the family's.
func (s *Store) checkRule(ctx context.Context, r *Rule) error {
	problems := ValidateRule(r)
	if len(problems) > 0 {
		return Invalid(problems...)
	}
	rs, err := CompileRules([]Rule{*r})
	if err != nil {
		return err
	}
	missing, err := s.missingRuleRefs(ctx, r.FamilyID, rs)
	if err != nil {
		return err
	}
	for _, m := range missing {
		problems = append(problems, m.what+" "+m.id.String()+" not found")
	}
	if len(problems) > 0 {
		return Invalid(problems...)
	}
	return nil
}

// CreateRule validates r and inserts it with its conditions and actions.
// Saving a rule changes no transaction; applying it does.
func (s *Store) CreateRule(ctx context.Context, r *Rule) error {
	r.ID = NewID()
	r.CreatedAt = s.now()
	r.UpdatedAt = r.CreatedAt
	if r.ResourceType == "" {
		r.ResourceType = "transaction"
	}
	if err := s.checkRule(ctx, r); err != nil {
		return err
	}
	return s.RunInTx(ctx, func(tx *Store) error {
		if _, err := tx.db.NewInsert().Model(r).Exec(ctx); err != nil {
			return dbErr("create rule", err)
		}
		if err := tx.insertRuleParts(ctx, r); err != nil {
			return err
		}
		return tx.rulesChanged(ctx)
	})
}

// UpdateRule validates r and writes its fields; replaceConditions and
// replaceActions replace those sets with r's.
func (s *Store) UpdateRule(ctx context.Context, r *Rule, replaceConditions, replaceActions bool) error {
	r.UpdatedAt = s.now()
	if err := s.checkRule(ctx, r); err != nil {
		return err
	}
	return s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.updateOne(ctx, r, r.FamilyID, r.ID, "update rule",
			"name", "active", "effective_date", "position", "stop_processing"); err != nil {
			return err
		}
		if replaceConditions {
			// Sub-conditions go with their parents (ON DELETE CASCADE).
			if _, err := tx.db.NewDelete().Model((*RuleCondition)(nil)).Where("family_id = ?", r.FamilyID).
				Where("rule_id = ?", r.ID).Where("parent_id IS NULL").Exec(ctx); err != nil {
				return dbErr("replace rule conditions", err)
			}
		}
		if replaceActions {
			if _, err := tx.db.NewDelete().Model((*RuleAction)(nil)).Where("family_id = ?", r.FamilyID).
				Where("rule_id = ?", r.ID).Exec(ctx); err != nil {
				return dbErr("replace rule actions", err)
			}
		}
		keep := *r
		if !replaceConditions {
			keep.Conditions = nil
		}
		if !replaceActions {
			keep.Actions = nil
		}
		if err := tx.insertRuleParts(ctx, &keep); err != nil {
			return err
		}
		return tx.rulesChanged(ctx)
	})
}

// MoveRule moves a rule by places up (negative) or down the family's
// order and numbers every position from 1, so that the order a person sees
// is the order the rules run in, with no ties.
func (s *Store) MoveRule(ctx context.Context, familyID, id uuid.UUID, by int) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		var rules []Rule
		q := tx.db.NewSelect().Model(&rules).Column("id", "position").Where("ru.family_id = ?", familyID).
			OrderExpr("ru.position, ru.created_at, ru.id")
		if tx.Postgres() {
			q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return dbErr("list rules", err)
		}
		i := slices.IndexFunc(rules, func(r Rule) bool { return r.ID == id })
		if i < 0 {
			return ErrNotFound
		}
		j := min(max(i+by, 0), len(rules)-1)
		moved := rules[i]
		rules = slices.Insert(slices.Delete(rules, i, i+1), j, moved)
		for k, r := range rules {
			if r.Position == k+1 {
				continue
			}
			if _, err := tx.db.NewUpdate().Model((*Rule)(nil)).Set("position = ?", k+1).Set("updated_at = ?", tx.now()).
				Where("family_id = ?", familyID).Where("id = ?", r.ID).Exec(ctx); err != nil {
				return dbErr("move rule", err)
			}
		}
		return tx.rulesChanged(ctx)
	})
}

// insertRuleParts inserts r's conditions (sub-conditions after their
// parent) and actions, giving each its id and position.
func (s *Store) insertRuleParts(ctx context.Context, r *Rule) error {
	var conds []*RuleCondition
	for i := range r.Conditions {
		c := &r.Conditions[i]
		c.ID, c.FamilyID, c.RuleID, c.ParentID, c.Position = NewID(), r.FamilyID, r.ID, nil, i
		c.CreatedAt, c.UpdatedAt = r.UpdatedAt, r.UpdatedAt
		conds = append(conds, c)
		for j := range c.SubConditions {
			sc := &c.SubConditions[j]
			parent := c.ID
			sc.ID, sc.FamilyID, sc.RuleID, sc.ParentID, sc.Position = NewID(), r.FamilyID, r.ID, &parent, j
			sc.CreatedAt, sc.UpdatedAt = r.UpdatedAt, r.UpdatedAt
			if sc.SubConditions == nil {
				sc.SubConditions = []RuleCondition{}
			}
			conds = append(conds, sc)
		}
		if c.SubConditions == nil {
			c.SubConditions = []RuleCondition{}
		}
	}
	if len(conds) > 0 {
		if _, err := s.db.NewInsert().Model(&conds).Exec(ctx); err != nil {
			return dbErr("create rule conditions", err)
		}
	}
	for i := range r.Actions {
		a := &r.Actions[i]
		a.ID, a.FamilyID, a.RuleID, a.Position = NewID(), r.FamilyID, r.ID, i
		a.CreatedAt, a.UpdatedAt = r.UpdatedAt, r.UpdatedAt
	}
	if len(r.Actions) > 0 {
		if _, err := s.db.NewInsert().Model(&r.Actions).Exec(ctx); err != nil {
			return dbErr("create rule actions", err)
		}
	}
	return nil
}

// DeleteRule removes a rule with its conditions and actions; its runs
// stay, with the rule's name, and transactions it changed keep the values.
func (s *Store) DeleteRule(ctx context.Context, familyID, id uuid.UUID) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.deleteOne(ctx, (*Rule)(nil), familyID, id, "delete rule"); err != nil {
			return err
		}
		return tx.rulesChanged(ctx)
	})
}

// ruleRef is an id an action or condition names that is not the family's.
type ruleRef struct {
	what string
	id   uuid.UUID
}

// missingRuleRefs returns the ids the set's actions and conditions name
// that are not records of the family, one query per kind of record.
func (s *Store) missingRuleRefs(ctx context.Context, familyID uuid.UUID, rs *RuleSet) ([]ruleRef, error) {
	want := map[string]map[uuid.UUID]bool{}
	add := func(table string, id uuid.UUID) {
		if want[table] == nil {
			want[table] = map[uuid.UUID]bool{}
		}
		want[table][id] = true
	}
	for _, r := range rs.rules {
		for _, a := range r.actions {
			if table, ok := a.refersTo(); ok {
				add(table, a.id)
			}
		}
		for _, c := range r.conds {
			for _, cc := range append([]compiledCond{c}, c.subs...) {
				if table, ok := cc.refersTo(); ok {
					add(table, cc.id)
				}
			}
		}
	}
	var missing []ruleRef
	for _, table := range []string{"accounts", "categories", "merchants", "tags"} {
		ids := want[table]
		if len(ids) == 0 {
			continue
		}
		list := make([]uuid.UUID, 0, len(ids))
		for id := range ids {
			list = append(list, id)
		}
		var found []uuid.UUID
		if err := s.db.NewSelect().Table(table).Column("id").Where("family_id = ?", familyID).
			Where("id IN (?)", bun.List(list)).Scan(ctx, &found); err != nil {
			return nil, dbErr("check rule references", err)
		}
		for _, id := range found {
			delete(ids, id)
		}
		for _, id := range list {
			if ids[id] {
				missing = append(missing, ruleRef{what: refName[table], id: id})
			}
		}
	}
	return missing, nil
}

var refName = map[string]string{"accounts": "Account", "categories": "Category", "merchants": "Merchant", "tags": "Tag"}

// ActiveRules loads the family's rules, compiled in the order they run,
// once per batch of rows. Inactive rules are in the set, skipped by Apply,
// so that ApplyOnly can run one on request. Actions whose category, merchant, tag or account
// was deleted since the rule was saved are dropped: the rest of the rule
// still runs. A stored rule that no longer compiles (it cannot be saved so)
// is skipped.
func (s *Store) ActiveRules(ctx context.Context, familyID uuid.UUID) (*RuleSet, error) {
	rules, err := s.OrderedRules(ctx, familyID)
	if err != nil {
		return nil, err
	}
	rs := &RuleSet{}
	for i := range rules {
		if cr, problems := compileRule(&rules[i]); len(problems) == 0 {
			rs.rules = append(rs.rules, cr)
		}
	}
	missing, err := s.missingRuleRefs(ctx, familyID, rs)
	if err != nil || len(missing) == 0 {
		return rs, err
	}
	gone := map[uuid.UUID]bool{}
	for _, m := range missing {
		gone[m.id] = true
	}
	for i := range rs.rules {
		r := &rs.rules[i]
		r.actions = slices.DeleteFunc(r.actions, func(a compiledAction) bool {
			_, refers := a.refersTo()
			return refers && gone[a.id]
		})
	}
	return rs, nil
}
