package models

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
)

// ndjsonWriter writes one JSON value a line, lines joined by "\n" as the
// reference joins them (no newline after the last).
type ndjsonWriter struct {
	w     io.Writer
	lines int
}

func (n *ndjsonWriter) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("models: export line: %w", err)
	}
	if n.lines > 0 {
		if _, err := io.WriteString(n.w, "\n"); err != nil {
			return err
		}
	}
	n.lines++
	_, err = n.w.Write(b)
	return err
}

func (n *ndjsonWriter) typed(typ string, data any) error {
	return n.line(exportLine{Type: typ, Data: data})
}

// ndjson writes all.ndjson in the reference's order: accounts,
// categories, tags, merchants, recurring transactions, transactions (a split's parts as its
// split_lines), transfers, rejected transfers, valuations, budgets, budget
// categories, rules; then our chats and their messages.
func (x *exporter) ndjson(w io.Writer) error {
	n := &ndjsonWriter{w: w}
	for i := range x.accounts {
		if err := n.typed("Account", exportAccountOf(&x.accounts[i])); err != nil {
			return err
		}
	}
	for i := range x.categories {
		c := &x.categories[i]
		if err := n.typed("Category", exportCategory{ID: c.ID, Name: c.Name, Color: c.Color, FamilyID: c.FamilyID,
			CreatedAt: exportTime(c.CreatedAt), UpdatedAt: exportTime(c.UpdatedAt), ParentID: c.ParentID,
			ClassificationUnused: c.Classification, LucideIcon: lucideIcon(c)}); err != nil {
			return err
		}
	}
	for i := range x.tags {
		t := &x.tags[i]
		if err := n.typed("Tag", exportTag{ID: t.ID, Name: t.Name, Color: t.Color, FamilyID: t.FamilyID,
			CreatedAt: exportTime(t.CreatedAt), UpdatedAt: exportTime(t.UpdatedAt)}); err != nil {
			return err
		}
	}
	for i := range x.merchants {
		m := &x.merchants[i]
		if err := n.typed("Merchant", exportMerchant{ID: m.ID, Name: m.Name, Color: merchantColor, FamilyID: m.FamilyID,
			CreatedAt: exportTime(m.CreatedAt), UpdatedAt: exportTime(m.UpdatedAt), Type: "FamilyMerchant"}); err != nil {
			return err
		}
	}
	for _, step := range []func(*ndjsonWriter) error{x.recurringLines, x.transactionLines, x.transferLines, x.valuationLines,
		x.budgetLines, x.ruleLines, x.chatLines} {
		if err := step(n); err != nil {
			return err
		}
	}
	return nil
}

// transactionLines writes the rows no split made (a split's parts travel
// in their parent's split_lines), a batch at a time.
func (x *exporter) transactionLines(n *ndjsonWriter) error {
	filter := func(q *bun.SelectQuery) *bun.SelectQuery {
		return liveTransactions(q).Where("t.split_parent_id IS NULL")
	}
	return eachBatch(x, "t", filter, func(t *Transaction) uuid.UUID { return t.ID }, func(ts []Transaction) error {
		ids := make([]uuid.UUID, len(ts))
		for i := range ts {
			ids[i] = ts[i].ID
		}
		var parts []Transaction
		err := x.s.db.NewSelect().Model(&parts).Where("t.family_id = ?", x.familyID).Where("t.deleted_at IS NULL").
			Where("t.split_parent_id IN (?)", bun.List(ids)).OrderExpr("t.created_at, t.id").Scan(x.ctx)
		if err != nil {
			return dbErr("export split parts", err)
		}
		tags, err := x.tagsOf(append(append([]Transaction{}, ts...), parts...))
		if err != nil {
			return err
		}
		kinds, err := x.transferKinds(ids)
		if err != nil {
			return err
		}
		partsOf := map[uuid.UUID][]exportSplitLine{}
		for i := range parts {
			p := &parts[i]
			partsOf[*p.SplitParentID] = append(partsOf[*p.SplitParentID], exportSplitLine{ID: p.ID, EntryID: p.ID,
				Amount: exportDecimal(p.Amount), Currency: p.Currency, Name: p.Name, Notes: p.Notes, Excluded: p.Excluded,
				CategoryID: p.CategoryID, MerchantID: p.MerchantID, TagIDs: nonNil(tags[p.ID]), Kind: "standard",
				CreatedAt: exportTime(p.CreatedAt), UpdatedAt: exportTime(p.UpdatedAt)})
		}
		for i := range ts {
			t := &ts[i]
			kind := kinds[t.ID]
			if kind == "" {
				kind = "standard"
			}
			if err := n.typed("Transaction", exportTransaction{ID: t.ID, EntryID: t.ID, AccountID: t.AccountID,
				Date: t.Date, Amount: exportDecimal(t.Amount), Currency: t.Currency, Name: t.Name, Notes: t.Notes,
				Excluded: t.Excluded, CategoryID: t.CategoryID, MerchantID: t.MerchantID, TagIDs: nonNil(tags[t.ID]),
				Kind: kind, CreatedAt: exportTime(t.CreatedAt), UpdatedAt: exportTime(t.UpdatedAt),
				SplitLines: partsOf[t.ID]}); err != nil {
				return err
			}
		}
		return nil
	})
}

func nonNil(ids []uuid.UUID) []uuid.UUID {
	if ids == nil {
		return []uuid.UUID{}
	}
	return ids
}

// transferKinds is the reference's kind of each of ids that is a side of
// a transfer: the inflow moves funds; the outflow pays a loan or a card,
// contributes to an investment, or moves funds.
func (x *exporter) transferKinds(ids []uuid.UUID) (map[uuid.UUID]string, error) {
	var trs []Transfer
	err := x.s.db.NewSelect().Model(&trs).Relation("Inflow").Relation("Outflow").Where("tr.family_id = ?", x.familyID).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("tr.inflow_transaction_id IN (?)", bun.List(ids)).WhereOr("tr.outflow_transaction_id IN (?)", bun.List(ids))
		}).Scan(x.ctx)
	if err != nil {
		return nil, dbErr("export transfer kinds", err)
	}
	out := map[uuid.UUID]string{}
	for _, tr := range trs {
		out[tr.InflowTransactionID] = "funds_movement"
		kind := "funds_movement"
		if tr.Inflow != nil && tr.Outflow != nil {
			to, from := x.accountsBy[tr.Inflow.AccountID], x.accountsBy[tr.Outflow.AccountID]
			switch {
			case to == nil || from == nil:
			case to.AccountType == "loan":
				kind = "loan_payment"
			case Liability(to.AccountType):
				kind = "cc_payment"
			case investing(to.AccountType) && !investing(from.AccountType):
				kind = "investment_contribution"
			}
		}
		out[tr.OutflowTransactionID] = kind
	}
	return out, nil
}

func investing(accountType string) bool {
	return accountType == "investment" || accountType == "crypto"
}

func (x *exporter) transferLines(n *ndjsonWriter) error {
	err := eachBatch(x, "tr", nil, func(t *Transfer) uuid.UUID { return t.ID }, func(trs []Transfer) error {
		for _, tr := range trs {
			if err := n.typed("Transfer", exportTransfer{ID: tr.ID, InflowTransactionID: tr.InflowTransactionID,
				OutflowTransactionID: tr.OutflowTransactionID, Status: tr.Status, Notes: tr.Notes,
				CreatedAt: exportTime(tr.CreatedAt), UpdatedAt: exportTime(tr.UpdatedAt)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Rejected pairs have no id of their own; they are few, read at once.
	var rejected []RejectedTransfer
	if err := x.s.db.NewSelect().Model(&rejected).Where("rt.family_id = ?", x.familyID).
		OrderExpr("rt.created_at, rt.inflow_transaction_id").Scan(x.ctx); err != nil {
		return dbErr("export rejected transfers", err)
	}
	for _, r := range rejected {
		id := derivedID(r.InflowTransactionID, "rejected:"+r.OutflowTransactionID.String())
		if err := n.typed("RejectedTransfer", exportRejectedTransfer{ID: id, InflowTransactionID: r.InflowTransactionID,
			OutflowTransactionID: r.OutflowTransactionID, CreatedAt: exportTime(r.CreatedAt),
			UpdatedAt: exportTime(r.CreatedAt)}); err != nil {
			return err
		}
	}
	return nil
}

// valuationDate is a valuation's day; an undated opening balance's is the
// day before its account's first transaction or dated valuation (the day
// it was recorded when there is neither), so that it opens the account.
func (x *exporter) valuationDate(v *Valuation) civil.Date {
	if v.Date != nil {
		return *v.Date
	}
	if first, ok := x.firstDate[v.AccountID]; ok {
		return civil.DateOf(first.Time().AddDate(0, 0, -1))
	}
	return civil.DateOf(v.CreatedAt)
}

func (x *exporter) valuationLines(n *ndjsonWriter) error {
	return eachBatch(x, "v", nil, func(v *Valuation) uuid.UUID { return v.ID }, func(vs []Valuation) error {
		for i := range vs {
			v := &vs[i]
			currency := ""
			if a := x.accountsBy[v.AccountID]; a != nil {
				currency = a.Currency
			}
			if err := n.typed("Valuation", exportValuation{ID: v.ID, EntryID: v.ID, AccountID: v.AccountID,
				Date: x.valuationDate(v), Amount: exportDecimal(v.Amount), Currency: currency, Name: valuationName(v),
				Kind: valuationKind(v.Kind), CreatedAt: exportTime(v.CreatedAt), UpdatedAt: exportTime(v.UpdatedAt)}); err != nil {
				return err
			}
		}
		return nil
	})
}

func (x *exporter) budgetLines(n *ndjsonWriter) error {
	err := eachBatch(x, "b", nil, func(b *Budget) uuid.UUID { return b.ID }, func(bs []Budget) error {
		for i := range bs {
			b := &bs[i]
			if err := n.typed("Budget", exportBudget{ID: b.ID, FamilyID: b.FamilyID, StartDate: b.StartDate,
				EndDate: b.EndDate, BudgetedSpending: decimalPtr(b.BudgetedSpending),
				ExpectedIncome: decimalPtr(b.ExpectedIncome), Currency: b.Currency,
				CreatedAt: exportTime(b.CreatedAt), UpdatedAt: exportTime(b.UpdatedAt)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return eachBatch(x, "bc", nil, func(b *BudgetCategory) uuid.UUID { return b.ID }, func(bs []BudgetCategory) error {
		for i := range bs {
			b := &bs[i]
			if err := n.typed("BudgetCategory", exportBudgetCategory{ID: b.ID, BudgetID: b.BudgetID,
				CategoryID: b.CategoryID, BudgetedSpending: exportDecimal(b.BudgetedSpending), Currency: b.Currency,
				CreatedAt: exportTime(b.CreatedAt), UpdatedAt: exportTime(b.UpdatedAt)}); err != nil {
				return err
			}
		}
		return nil
	})
}

// eachRule hands each of the family's rules, in the order they run, to
// fn in the reference's shape: a category, merchant or tag operand as its
// name, with a value_ref naming the record.
func (x *exporter) eachRule(fn func(exportRule) error) error {
	rules, err := x.s.OrderedRules(x.ctx, x.familyID)
	if err != nil {
		return err
	}
	for i := range rules {
		r := &rules[i]
		out := exportRule{ID: r.ID, Name: r.Name, ResourceType: r.ResourceType, Active: r.Active,
			EffectiveDate: r.EffectiveDate, Conditions: []exportCondition{}, Actions: []exportAction{}}
		for _, c := range r.Conditions {
			out.Conditions = append(out.Conditions, x.exportCondition(c))
		}
		for _, a := range r.Actions {
			value, ref := x.operand(a.Value, map[string]string{ActSetCategory: "Category", ActSetMerchant: "Merchant",
				ActAddTag: "Tag"}[a.ActionType])
			out.Actions = append(out.Actions, exportAction{ActionType: a.ActionType, Value: value, ValueRef: ref})
		}
		if err := fn(out); err != nil {
			return err
		}
	}
	return nil
}

func (x *exporter) exportCondition(c RuleCondition) exportCondition {
	value, ref := x.operand(c.Value, map[string]string{CondCategory: "Category", CondMerchant: "Merchant",
		"transaction_tag": "Tag"}[c.ConditionType])
	out := exportCondition{ConditionType: c.ConditionType, Operator: c.Operator, Value: value, ValueRef: ref}
	for _, sub := range c.SubConditions {
		out.SubConditions = append(out.SubConditions, x.exportCondition(sub))
	}
	return out
}

// operand is a rule value as the reference exports it: the id of a
// category, merchant or tag (typ) becomes its name and a reference to it.
func (x *exporter) operand(value *string, typ string) (*string, *exportValueRef) {
	if value == nil || *value == "" || typ == "" {
		return value, nil
	}
	id, err := uuid.Parse(*value)
	if err != nil {
		return value, nil
	}
	var name string
	switch typ {
	case "Category":
		if c := x.catsBy[id]; c != nil {
			name = c.Name
		}
	case "Merchant":
		if m := x.merchBy[id]; m != nil {
			name = m.Name
		}
	case "Tag":
		if t := x.tagsBy[id]; t != nil {
			name = t.Name
		}
	}
	if name == "" {
		return value, nil
	}
	return &name, &exportValueRef{Type: typ, ID: id, Name: name}
}

func (x *exporter) ruleLines(n *ndjsonWriter) error {
	return x.eachRule(func(r exportRule) error {
		return n.line(exportVersionedLine{Type: "Rule", Version: 1, Data: r})
	})
}

// recurringLines writes the family's recurring transactions, every
// status: a suggestion a person dismissed (ended) is kept, so that the
// detector does not suggest it again after a restore.
func (x *exporter) recurringLines(n *ndjsonWriter) error {
	return eachBatch(x, "rt", nil, func(r *RecurringTransaction) uuid.UUID { return r.ID }, func(rs []RecurringTransaction) error {
		for i := range rs {
			r := &rs[i]
			line := exportRecurring{ID: r.ID, AccountID: r.AccountID, MerchantID: r.MerchantID, Amount: exportDecimal(r.Amount),
				Currency: r.Currency, ExpectedDay: r.ExpectedDay, LastDate: r.LastDate, NextDate: r.NextDate, Status: r.Status,
				Occurrences: r.Occurrences, Manual: r.Manual, AmountMin: decimalPtr(r.AmountMin), AmountMax: decimalPtr(r.AmountMax),
				CreatedAt: exportTime(r.CreatedAt), UpdatedAt: exportTime(r.UpdatedAt), Cadence: r.Cadence,
				PreviousAmount: decimalPtr(r.PreviousAmount), Autopay: r.Autopay, Notes: r.Notes}
			if r.Name != "" {
				line.Name = &r.Name
			}
			if r.AmountMin != nil && r.AmountMax != nil {
				avg := (*r.AmountMin + *r.AmountMax) / 2
				line.AmountAvg = decimalPtr(&avg)
			}
			if err := n.typed("RecurringTransaction", line); err != nil {
				return err
			}
		}
		return nil
	})
}

func (x *exporter) chatLines(n *ndjsonWriter) error {
	err := eachBatch(x, "ch", nil, func(c *Chat) uuid.UUID { return c.ID }, func(cs []Chat) error {
		for i := range cs {
			c := &cs[i]
			if err := n.typed("Chat", exportChat{ID: c.ID, UserID: c.UserID, Title: c.Title, Error: c.Error,
				CreatedAt: exportTime(c.CreatedAt), UpdatedAt: exportTime(c.UpdatedAt)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return eachBatch(x, "msg", nil, func(m *Message) uuid.UUID { return m.ID }, func(ms []Message) error {
		for i := range ms {
			m := &ms[i]
			if err := n.typed("Message", exportMessage{ID: m.ID, ChatID: m.ChatID, Type: messageType(m.Type),
				Status: "complete", Content: m.Content, AIModel: m.Model, CreatedAt: exportTime(m.CreatedAt),
				UpdatedAt: exportTime(m.UpdatedAt)}); err != nil {
				return err
			}
		}
		return nil
	})
}
