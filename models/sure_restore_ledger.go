package models

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"

	"coffer/models/importfile"
)

// The transactions of a restore, its transfers and its rules.

func (r *restore) transaction(ctx context.Context, v *importfile.SureTransaction) error {
	accountID := r.id("Account", v.AccountID)
	ra := r.accounts[accountID]
	if v.Date > ra.last {
		ra.last = v.Date
	}
	cur := v.Currency
	if cur == "" {
		cur = ra.currency
	}
	name := v.Name
	if name == "" {
		name = "Imported transaction"
	}
	source, now := SourceSureImport, r.tx.now()
	t := Transaction{ID: NewID(), FamilyID: r.familyID, AccountID: accountID, Date: v.Date, Amount: v.Amount, Currency: cur,
		Name: name, Notes: v.Notes, Source: &source, Excluded: v.Excluded, CategoryID: r.optID("Category", v.CategoryID),
		MerchantID: r.optID("Merchant", v.MerchantID), CreatedAt: now, UpdatedAt: now}
	takeFingerprint(&t)
	r.mapID("Transaction", v.ID, t.ID)
	tags := r.tagIDs(v.TagIDs)
	if len(v.Splits) == 0 {
		r.add(t, tags)
		r.sum.Created["transactions"]++
		return r.flushIfFull(ctx)
	}
	// A split: the parent stays, excluded, and its parts count (as
	// SplitTransaction leaves them); a part without tag_ids takes the
	// parent's tags, as the reference's importer.
	reason := ExcludedSplit
	t.Excluded, t.ExcludedReason = true, &reason
	r.add(t, nil)
	r.sum.Created["transactions"]++
	for _, p := range v.Splits {
		pname := p.Name
		if pname == "" {
			pname = "Imported split"
		}
		part := Transaction{ID: NewID(), FamilyID: r.familyID, AccountID: accountID, Date: v.Date, Amount: p.Amount, Currency: cur,
			Name: pname, Notes: p.Notes, Source: &source, Excluded: p.Excluded, CategoryID: r.optID("Category", p.CategoryID),
			MerchantID: r.optID("Merchant", p.MerchantID), SplitParentID: &t.ID, CreatedAt: now, UpdatedAt: now}
		takeFingerprint(&part)
		if p.ID != "" {
			r.mapID("Transaction", p.ID, part.ID)
		}
		ptags := tags
		if p.HasTagIDs {
			ptags = r.tagIDs(p.TagIDs)
		}
		r.add(part, ptags)
		r.sum.Created["transactions"]++
	}
	return r.flushIfFull(ctx)
}

func (r *restore) tagIDs(old []string) []uuid.UUID {
	var out []uuid.UUID
	for _, o := range old {
		id := r.id("Tag", o)
		dup := false
		for _, x := range out {
			dup = dup || x == id
		}
		if !dup {
			out = append(out, id)
		}
	}
	return out
}

func (r *restore) add(t Transaction, tags []uuid.UUID) {
	r.txs = append(r.txs, t)
	for _, id := range tags {
		r.tags = append(r.tags, TransactionTag{TransactionID: t.ID, TagID: id, FamilyID: r.familyID})
	}
}

func (r *restore) flushIfFull(ctx context.Context) error {
	if len(r.txs) < restoreBatch {
		return nil
	}
	return r.flushRows(ctx)
}

// flushRows writes the transactions read so far, parents before parts.
func (r *restore) flushRows(ctx context.Context) error {
	if len(r.txs) > 0 {
		if _, err := r.tx.db.NewInsert().Model(&r.txs).Exec(ctx); err != nil {
			return dbErr("restore transactions", err)
		}
		r.txs = r.txs[:0]
	}
	for len(r.tags) > 0 {
		n := min(len(r.tags), 1000)
		batch := r.tags[:n]
		if _, err := r.tx.db.NewInsert().Model(&batch).Exec(ctx); err != nil {
			return dbErr("restore taggings", err)
		}
		r.sum.Created["taggings"] += n
		r.tags = r.tags[n:]
	}
	r.tags = nil
	return nil
}

// flush ends the second reading: the last transactions, then the
// balances of the accounts.
func (r *restore) flush(ctx context.Context) error {
	if err := r.flushRows(ctx); err != nil {
		return err
	}
	return r.valueAccounts(ctx)
}

func (r *restore) transfer(ctx context.Context, typ string, v *importfile.SureTransfer) error {
	in, okIn := r.ids["Transaction"][v.InflowID]
	out, okOut := r.ids["Transaction"][v.OutflowID]
	now := r.tx.now()
	if typ == "RejectedTransfer" {
		if !okIn || !okOut {
			r.sum.Skipped["rejected_transfers"]++
			return nil
		}
		_, err := r.tx.db.NewInsert().Model(&RejectedTransfer{FamilyID: r.familyID, InflowTransactionID: in,
			OutflowTransactionID: out, CreatedAt: now}).On("CONFLICT DO NOTHING").Exec(ctx)
		r.sum.Created["rejected_transfers"]++
		return dbErr("restore rejected transfer", err)
	}
	status := "confirmed"
	if v.Status == "pending" {
		status = "pending"
	}
	tr := &Transfer{ID: NewID(), FamilyID: r.familyID, InflowTransactionID: in, OutflowTransactionID: out, Status: status,
		Notes: v.Notes, CreatedAt: now, UpdatedAt: now}
	if _, err := r.tx.db.NewInsert().Model(tr).Exec(ctx); err != nil {
		if isConflict(err) {
			return problem("a transaction of this transfer is already one side of another")
		}
		return dbErr("restore transfer", err)
	}
	r.sum.Created["transfers"]++
	return nil
}

func isConflict(err error) bool {
	e := dbErr("", err)
	return e != nil && errors.Is(e, ErrConflict)
}

// finish ends the last reading: the balances of the accounts change.
func (r *restore) finish(ctx context.Context) error { return nil }

// ruleValue resolves a rule's operand that names a category, merchant or
// tag: the record of the file its value_ref names, else the family's of
// its name. ok is false when neither is found.
func (r *restore) ruleValue(kind string, value *string, refs []importfile.SureRef) (string, bool) {
	for _, ref := range refs {
		if id, ok := r.ids[kind][ref.ID]; ok {
			return id.String(), true
		}
		if id, ok := r.names[kind][strings.ToLower(ref.Name)]; ok {
			return id.String(), true
		}
	}
	if value == nil {
		return "", false
	}
	if id, ok := r.names[kind][strings.ToLower(*value)]; ok {
		return id.String(), true
	}
	if id, ok := r.ids[kind][*value]; ok {
		return id.String(), true
	}
	return "", false
}

func refKind(t string) string {
	switch t {
	case CondCategory, ActSetCategory:
		return "Category"
	case CondMerchant, ActSetMerchant:
		return "Merchant"
	case ActAddTag:
		return "Tag"
	}
	return ""
}

func (r *restore) conditions(list []importfile.SureCondition, pos *int) ([]RuleCondition, bool) {
	var out []RuleCondition
	for _, c := range list {
		rc := RuleCondition{ConditionType: c.ConditionType, Operator: c.Operator, Value: c.Value, Position: *pos}
		*pos++
		if kind := refKind(c.ConditionType); kind != "" && c.Value != nil && *c.Value != "" {
			v, ok := r.ruleValue(kind, c.Value, c.Refs)
			if !ok {
				return nil, false
			}
			rc.Value = &v
		}
		if len(c.SubConditions) > 0 {
			subs, ok := r.conditions(c.SubConditions, pos)
			if !ok {
				return nil, false
			}
			rc.SubConditions = subs
		}
		out = append(out, rc)
	}
	return out, true
}

// rule writes a rule coffer can run; one that names a record neither the
// file nor the family holds, or that coffer's rules cannot express (a
// condition on tags), is left out and counted as skipped.
func (r *restore) rule(ctx context.Context, line int, v *importfile.SureRule) error {
	rule := &Rule{FamilyID: r.familyID, Name: v.Name, ResourceType: v.ResourceType, Active: v.Active, EffectiveDate: v.EffectiveDate}
	pos := 0
	conds, ok := r.conditions(v.Conditions, &pos)
	rule.Conditions = conds
	for i, a := range v.Actions {
		if !ok {
			break
		}
		kind := refKind(a.ActionType)
		if kind == "" || a.Value == nil {
			rule.Actions = append(rule.Actions, RuleAction{ActionType: a.ActionType, Value: a.Value, Position: i})
			continue
		}
		if a.ActionType == ActAddTag { // a list of tags: one action each here
			names := strings.Split(*a.Value, ",")
			if len(a.Refs) > 0 {
				names = names[:0]
				for _, ref := range a.Refs {
					names = append(names, ref.Name)
				}
			}
			for _, n := range names {
				n = strings.TrimSpace(n)
				val, found := r.ruleValue("Tag", &n, nil)
				ok = ok && found
				rule.Actions = append(rule.Actions, RuleAction{ActionType: a.ActionType, Value: &val, Position: len(rule.Actions)})
			}
			continue
		}
		val, found := r.ruleValue(kind, a.Value, a.Refs)
		ok = ok && found
		rule.Actions = append(rule.Actions, RuleAction{ActionType: a.ActionType, Value: &val, Position: len(rule.Actions)})
	}
	if !ok {
		r.sum.Skipped["rules"]++
		return nil
	}
	if err := r.tx.CreateRule(ctx, rule); err != nil {
		var inv *InvalidError
		if errors.As(err, &inv) {
			r.sum.Skipped["rules"]++
			return nil
		}
		return err
	}
	r.mapID("Rule", v.ID, rule.ID)
	r.sum.Created["rules"]++
	return nil
}
