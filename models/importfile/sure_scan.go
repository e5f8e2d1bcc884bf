package importfile

import (
	"bytes"
	"encoding/json"
)

// SureScan is what a whole reading of a restore's file found.
type SureScan struct {
	Counts map[string]int // the lines of each type, those a restore leaves out too
	Lines  int            // lines with a record
}

// sniffType is the type of a line written as the exporter writes it
// ({"type":"Account",…}), without decoding the line; "" when it is
// written otherwise.
func sniffType(line []byte) string {
	const prefix = `{"type":"`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return ""
	}
	rest := line[len(prefix):]
	end := bytes.IndexByte(rest, '"')
	if end <= 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return ""
	}
	return string(rest[:end])
}

// EachSure calls fn with every record of the file whose type want accepts
// (nil: all), decoded, in the file's order. A line that is not a record,
// or a record that does not read, stops it with a *SureError.
func EachSure(file []byte, want func(typ string) bool, fn func(SureRecord) error) error {
	return eachLine(file, func(n int, line []byte) error {
		if want != nil {
			if t := sniffType(line); t != "" && !want(t) {
				return nil
			}
		}
		var top struct {
			Type *string         `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(line, &top); err != nil || top.Type == nil || null(top.Data) {
			return lineErr(n, "the line is not a JSON object with a type and data")
		}
		if want != nil && !want(*top.Type) {
			return nil
		}
		v, problem := decodeSure(*top.Type, top.Data)
		if problem != "" {
			return lineErr(n, "%s: %s", *top.Type, problem)
		}
		return fn(SureRecord{Line: n, Type: *top.Type, Value: v})
	})
}

// ids are the records' ids of one kind, with the line each is on.
type ids map[string]int

// pendingRef is a reference to a record not read yet.
type pendingRef struct {
	line       int
	typ, field string
	kind, id   string
}

// refChecker checks that each id is named once in its kind, and that
// each reference names a record of the file.
type refChecker struct {
	seen    map[string]ids
	pending []pendingRef
}

func (c *refChecker) define(line int, kind, id string) error {
	if id == "" {
		return nil
	}
	m := c.seen[kind]
	if m == nil {
		m = ids{}
		c.seen[kind] = m
	}
	if first, ok := m[id]; ok {
		return lineErr(line, "%s id %s is already the id of line %d", kind, id, first)
	}
	m[id] = line
	return nil
}

func (c *refChecker) ref(line int, typ, field, kind string, id *string) {
	if id == nil || *id == "" {
		return
	}
	if _, ok := c.seen[kind][*id]; ok {
		return
	}
	c.pending = append(c.pending, pendingRef{line: line, typ: typ, field: field, kind: kind, id: *id})
}

func (c *refChecker) refs(line int, typ, field, kind string, list []string) {
	for i := range list {
		c.ref(line, typ, field, kind, &list[i])
	}
}

// ScanSure reads the whole file, a line at a time, and checks it as a
// restore needs it: every line a record that reads, no id twice in its
// kind, every reference to a record of the file. It counts the lines by
// type, as the reference's dry run.
func ScanSure(file []byte) (*SureScan, error) {
	s := &SureScan{Counts: map[string]int{}}
	c := &refChecker{seen: map[string]ids{}}
	err := EachSure(file, nil, func(r SureRecord) error {
		s.Lines++
		s.Counts[r.Type]++
		return c.check(r)
	})
	if err != nil {
		return nil, err
	}
	for _, p := range c.pending {
		if _, ok := c.seen[p.kind][p.id]; !ok {
			return nil, lineErr(p.line, "%s %s names %s %s, which the file does not hold", p.typ, p.field, p.kind, p.id)
		}
	}
	if s.Lines == 0 {
		return nil, &SureError{Reason: "the file holds no records"}
	}
	return s, nil
}

func (c *refChecker) check(r SureRecord) error {
	n := r.Line
	switch v := r.Value.(type) {
	case *SureAccount:
		return c.define(n, "Account", v.ID)
	case *SureBalance:
		c.ref(n, r.Type, "account_id", "Account", &v.AccountID)
		return c.define(n, "Balance", v.ID)
	case *SureValuation:
		c.ref(n, r.Type, "account_id", "Account", &v.AccountID)
		return c.define(n, "Valuation", v.ID)
	case *SureCategory:
		c.ref(n, r.Type, "parent_id", "Category", v.ParentID)
		return c.define(n, "Category", v.ID)
	case *SureTag:
		return c.define(n, "Tag", v.ID)
	case *SureMerchant:
		return c.define(n, "Merchant", v.ID)
	case *SureTransaction:
		c.ref(n, r.Type, "account_id", "Account", &v.AccountID)
		c.ref(n, r.Type, "category_id", "Category", v.CategoryID)
		c.ref(n, r.Type, "merchant_id", "Merchant", v.MerchantID)
		c.refs(n, r.Type, "tag_ids", "Tag", v.TagIDs)
		if err := c.define(n, "Transaction", v.ID); err != nil {
			return err
		}
		for _, p := range v.Splits {
			c.ref(n, r.Type, "split_lines category_id", "Category", p.CategoryID)
			c.ref(n, r.Type, "split_lines merchant_id", "Merchant", p.MerchantID)
			c.refs(n, r.Type, "split_lines tag_ids", "Tag", p.TagIDs)
			if err := c.define(n, "Transaction", p.ID); err != nil {
				return err
			}
		}
	case *SureTransfer:
		if r.Type == "Transfer" { // a rejected one whose side is gone is left out, as the reference
			c.ref(n, r.Type, "inflow_transaction_id", "Transaction", &v.InflowID)
			c.ref(n, r.Type, "outflow_transaction_id", "Transaction", &v.OutflowID)
		}
		return c.define(n, r.Type, v.ID)
	case *SureBudget:
		return c.define(n, "Budget", v.ID)
	case *SureBudgetCategory:
		c.ref(n, r.Type, "budget_id", "Budget", &v.BudgetID)
		c.ref(n, r.Type, "category_id", "Category", &v.CategoryID)
		return c.define(n, "BudgetCategory", v.ID)
	case *SureRule:
		return c.define(n, "Rule", v.ID)
	case *SureRecurring:
		// Not its merchant: the reference exports only the family's own
		// merchants, and a series may be of a provider's (see restore).
		c.ref(n, r.Type, "account_id", "Account", v.AccountID)
		return c.define(n, "RecurringTransaction", v.ID)
	case *SureChat:
		return c.define(n, "Chat", v.ID)
	case *SureMessage:
		c.ref(n, r.Type, "chat_id", "Chat", &v.ChatID)
		return c.define(n, "Message", v.ID)
	}
	return nil
}
