package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/money"
)

// ExcludedByRule is the excluded_reason of a row a rule excluded.
const ExcludedByRule = "rule"

// RuleRowOf is what rules see of a transaction not written yet: the
// category and merchant its author chose are theirs, so rules leave them.
func RuleRowOf(t *Transaction, tagIDs []uuid.UUID) RuleRow {
	row := RuleRow{ID: t.ID, AccountID: t.AccountID, Date: t.Date, Amount: t.Amount, Name: t.Name, Notes: t.Notes,
		CategoryID: t.CategoryID, MerchantID: t.MerchantID, TagIDs: tagIDs, Excluded: t.Excluded, Locked: t.LockedFields}
	if t.CategoryID != nil {
		row.Locked = append(slices.Clip(row.Locked), "category")
	}
	if t.MerchantID != nil {
		row.Locked = append(slices.Clip(row.Locked), "merchant")
	}
	return row
}

// ApplyTo copies the result onto a transaction not written yet and
// returns its tags with the rules' added.
func (r *RuleResult) ApplyTo(t *Transaction, tagIDs []uuid.UUID) []uuid.UUID {
	if len(r.Changed) == 0 {
		return tagIDs
	}
	t.CategoryID, t.MerchantID, t.Name = r.Row.CategoryID, r.Row.MerchantID, r.Row.Name
	if r.changed("excluded") {
		reason := ExcludedByRule
		t.Excluded, t.ExcludedReason = true, &reason
	}
	id := r.RuleID
	t.RuleID = &id
	return append(slices.Clip(tagIDs), r.AddedTags...)
}

// ruleRowColumns are the columns rules read of a stored transaction.
var ruleRowColumns = []string{"id", "account_id", "date", "amount", "currency", "name", "notes", "category_id",
	"merchant_id", "excluded", "locked_fields", "split_parent_id", "reconciliation_id"}

// ruleRows reads the family's live transactions for rules: those after
// the id after (uuid.Nil: from the first), in id order, at most limit;
// or, with ids set, those ids. Tags and transfer membership come in one
// query each.
func (s *Store) ruleRows(ctx context.Context, familyID, after uuid.UUID, limit int, ids []uuid.UUID) ([]RuleRow, []Transaction, error) {
	var ts []Transaction
	// A split parent is never seen: its parts stand for it, and a rule
	// must not re-categorise it, nor make it a transfer.
	q := s.db.NewSelect().Model(&ts).Column(ruleRowColumns...).
		Where("t.family_id = ?", familyID).Where("t.deleted_at IS NULL").Where(notSplitParentSQL)
	if ids != nil {
		q.Where("t.id IN (?)", bun.List(ids))
	} else {
		if after != uuid.Nil {
			q.Where("t.id > ?", after)
		}
		q.OrderExpr("t.id").Limit(int64(limit))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, nil, dbErr("read transactions for rules", err)
	}
	if len(ts) == 0 {
		return nil, nil, nil
	}
	got := make([]uuid.UUID, len(ts))
	for i := range ts {
		got[i] = ts[i].ID
	}
	var links []TransactionTag
	if err := s.db.NewSelect().Model(&links).Where("tt.family_id = ?", familyID).
		Where("tt.transaction_id IN (?)", bun.List(got)).Scan(ctx); err != nil {
		return nil, nil, dbErr("read tags for rules", err)
	}
	tags := map[uuid.UUID][]uuid.UUID{}
	for _, l := range links {
		tags[l.TransactionID] = append(tags[l.TransactionID], l.TagID)
	}
	var trs []Transfer
	if err := s.db.NewSelect().Model(&trs).Column("inflow_transaction_id", "outflow_transaction_id").
		Where("tr.family_id = ?", familyID).
		Where("(tr.inflow_transaction_id IN (?) OR tr.outflow_transaction_id IN (?))", bun.List(got), bun.List(got)).
		Scan(ctx); err != nil {
		return nil, nil, dbErr("read transfers for rules", err)
	}
	inTransfer := map[uuid.UUID]bool{}
	for _, tr := range trs {
		inTransfer[tr.InflowTransactionID], inTransfer[tr.OutflowTransactionID] = true, true
	}
	rows := make([]RuleRow, len(ts))
	for i := range ts {
		t := &ts[i]
		rows[i] = RuleRow{ID: t.ID, AccountID: t.AccountID, Date: t.Date, Amount: t.Amount, Name: t.Name, Notes: t.Notes,
			CategoryID: t.CategoryID, MerchantID: t.MerchantID, TagIDs: tags[t.ID], Excluded: t.Excluded,
			Transfer: inTransfer[t.ID], Split: t.SplitParentID != nil, Locked: t.LockedFields, Reconciled: t.Reconciled()}
	}
	return rows, ts, nil
}

// ApplyRules runs rule set rs over rows (see RuleSet.Apply): the seam
// every door that brings transactions in uses on its batch of new rows.
func ApplyRules(rs *RuleSet, rows []RuleRow) []RuleResult {
	out := make([]RuleResult, len(rows))
	for i := range rows {
		out[i] = rs.Apply(rows[i])
	}
	return out
}

// FamilyRules is the pipeline's rules step (see RulesStep), the Store's
// default: it loads the family's active rules once for the batch and files
// each row not written yet with them. A category or merchant the row came
// with is its author's and stays; so does every locked field. A transfer a
// rule makes is written by the pipeline once the row is.
func FamilyRules(ctx context.Context, tx *Store, familyID uuid.UUID, rows []*NewTransaction) error {
	rs, err := tx.familyRules(ctx, familyID)
	if err != nil || rs.Len() == 0 {
		return err
	}
	in := make([]RuleRow, len(rows))
	for i, r := range rows {
		in[i] = RuleRowOf(r.Row, r.TagIDs)
	}
	for i, res := range ApplyRules(rs, in) {
		r := rows[i]
		r.TagIDs = res.ApplyTo(r.Row, r.TagIDs)
		if res.TransferTo != nil {
			r.transfer = &res
		}
	}
	return nil
}

// ApplyRulesTo runs the family's rules over the stored transactions ids
// (rows an import just wrote) and writes what they changed. It returns
// the accounts whose balances changed.
func (s *Store) ApplyRulesTo(ctx context.Context, familyID uuid.UUID, ids []uuid.UUID) ([]uuid.UUID, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rs, err := s.ActiveRules(ctx, familyID)
	if err != nil || rs.Len() == 0 {
		return nil, err
	}
	var accounts []uuid.UUID
	for start := 0; start < len(ids); start += 1000 {
		rows, _, err := s.ruleRows(ctx, familyID, uuid.Nil, 0, ids[start:min(start+1000, len(ids))])
		if err != nil {
			return nil, err
		}
		_, acc, err := s.writeRuleResults(ctx, familyID, ApplyRules(rs, rows))
		if err != nil {
			return nil, err
		}
		accounts = append(accounts, acc...)
	}
	return accounts, nil
}

// ruleUpdateSQL writes a batch of rule changes in one statement: the CTE
// holds, per changed row, the new values and which of them to set (%s is
// the rows). Joining on the primary key keeps the plan the same whatever
// the table's statistics say.
const ruleUpdateSQL = `
WITH v (id, category_id, merchant_id, name, excluded, rule_id, set_category, set_merchant, set_name) AS (VALUES %s)
UPDATE transactions AS t SET
    category_id = CASE WHEN v.set_category THEN v.category_id ELSE t.category_id END,
    merchant_id = CASE WHEN v.set_merchant THEN v.merchant_id ELSE t.merchant_id END,
    name = CASE WHEN v.set_name THEN v.name ELSE t.name END,
    excluded_reason = CASE WHEN v.excluded AND NOT t.excluded THEN ? ELSE t.excluded_reason END,
    excluded = t.excluded OR v.excluded,
    rule_id = v.rule_id,
    updated_at = ?
FROM v WHERE t.family_id = ? AND t.id = v.id AND COALESCE(t.excluded_reason, '') <> 'split' AND t.reconciliation_id IS NULL`

// writeRuleResults writes what rules changed: one UPDATE per batch of
// changed rows (never a reconciled one, should it have been locked since
// it was read), one INSERT of the new tag links, and for each new transfer
// its other side. It returns how many rows changed and the accounts whose
// balances changed (an exclusion, a transfer's new side), and reports
// those (see OnBalanceChange).
func (s *Store) writeRuleResults(ctx context.Context, familyID uuid.UUID, results []RuleResult) (modified int, accounts []uuid.UUID, err error) {
	row := "(?, ?, ?, ?, ?, ?, ?, ?, ?)"
	if s.Postgres() { // VALUES are text until cast
		row = "(?::uuid, ?::uuid, ?::uuid, ?, ?::boolean, ?::uuid, ?::boolean, ?::boolean, ?::boolean)"
	}
	var links []TransactionTag
	var transfers []*RuleResult
	now := s.now()
	seenAccount := map[uuid.UUID]bool{}
	touch := func(id uuid.UUID) {
		if !seenAccount[id] {
			seenAccount[id] = true
			accounts = append(accounts, id)
		}
	}
	var rows []string
	var args []any
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		q := fmt.Sprintf(ruleUpdateSQL, strings.Join(rows, ", "))
		_, err := s.db.NewRaw(q, append(args, ExcludedByRule, now, familyID)...).Exec(ctx)
		rows, args = rows[:0], args[:0]
		return dbErr("write rule changes", err)
	}
	for i := range results {
		r := &results[i]
		if len(r.Changed) == 0 {
			continue
		}
		modified++
		if r.changed("excluded") {
			touch(r.Row.AccountID)
		}
		rows = append(rows, row)
		args = append(args, r.Row.ID, r.Row.CategoryID, r.Row.MerchantID, r.Row.Name, r.changed("excluded"), r.RuleID,
			r.changed("category"), r.changed("merchant"), r.changed("name"))
		if len(rows) == 1000 {
			if err := flush(); err != nil {
				return 0, nil, err
			}
		}
		for _, tag := range r.AddedTags {
			links = append(links, TransactionTag{TransactionID: r.Row.ID, TagID: tag, FamilyID: familyID})
		}
		if r.TransferTo != nil {
			transfers = append(transfers, r)
		}
	}
	if err := flush(); err != nil {
		return 0, nil, err
	}
	for start := 0; start < len(links); start += 1000 {
		batch := links[start:min(start+1000, len(links))]
		if _, err := s.db.NewInsert().Model(&batch).On("CONFLICT (transaction_id, tag_id) DO NOTHING").Exec(ctx); err != nil {
			return 0, nil, dbErr("write rule tags", err)
		}
	}
	for _, r := range transfers {
		to, err := s.ruleTransfer(ctx, familyID, r, nil)
		if err != nil {
			return 0, nil, err
		}
		if to != uuid.Nil {
			touch(to)
		}
	}
	s.balanceChange(ctx, familyID, accounts...)
	return modified, accounts, nil
}

// ruleTransfer makes a transaction one side of a transfer to (or from)
// the account the rule names. When that account holds the other side
// already (see otherSide: an imported card payment, say), it pairs the
// two and writes no row; only when it holds none does it write the other
// side there, as the reference does: at the family's rate of the day when
// that account is in another currency (without one, r.TransferRefused
// says so and nothing is written). An account no longer active is left
// alone; so is a row that became part of a
// transfer since it was read. It returns the account whose balance the
// new side changed, or uuid.Nil (pairing changes no balance). importID,
// when set, is the file import writing the row: the other side is the
// import's too, so that its revert removes both.
func (s *Store) ruleTransfer(ctx context.Context, familyID uuid.UUID, r *RuleResult, importID *uuid.UUID) (uuid.UUID, error) {
	var t Transaction
	if err := s.db.NewSelect().Model(&t).Column("id", "account_id", "date", "amount", "currency", "name").
		Where("t.family_id = ?", familyID).Where("t.id = ?", r.Row.ID).Scan(ctx); err != nil {
		return uuid.Nil, dbErr("read transfer side", err)
	}
	other, err := s.Account(ctx, familyID, *r.TransferTo)
	if err != nil || other.Status != AccountActive {
		return uuid.Nil, ignoreMissing(err)
	}
	n, err := s.db.NewSelect().Model((*Transfer)(nil)).Where("family_id = ?", familyID).
		Where("(inflow_transaction_id = ? OR outflow_transaction_id = ?)", t.ID, t.ID).Count(ctx)
	if err != nil || n > 0 {
		return uuid.Nil, dbErr("check transfer", err)
	}
	existing, err := s.otherSide(ctx, familyID, other.ID, &t)
	if err != nil {
		return uuid.Nil, err
	}
	if existing != nil { // the other account holds it already: pair, write no row
		in, out := existing.ID, t.ID
		if t.Amount < 0 {
			in, out = t.ID, existing.ID
		}
		return uuid.Nil, s.linkTransfer(ctx, familyID, NewID(), in, out)
	}
	from, err := s.Account(ctx, familyID, t.AccountID)
	if err != nil {
		return uuid.Nil, err
	}
	// Into an account of another currency, the other side is t's amount
	// at the family's rate of t's day; without one the rule refuses, and
	// says why, rather than guess 1:1.
	arrived := t.Amount
	if other.Currency != t.Currency {
		q, ok, err := s.Quote(ctx, familyID, t.Currency, other.Currency, t.Date)
		if err != nil {
			return uuid.Nil, err
		}
		if ok {
			arrived, err = money.Convert(t.Amount, q.Rate)
		}
		if !ok || err != nil || arrived == 0 {
			r.TransferRefused = fmt.Sprintf("Transfer of %q to %s not made: no %s rate in %s on or before %s; set one on the exchange rates screen",
				t.Name, other.Name, t.Currency, other.Currency, t.Date)
			return uuid.Nil, nil
		}
	}
	now := s.now()
	mirror := &Transaction{ID: NewID(), FamilyID: familyID, AccountID: other.ID, Date: t.Date, Amount: -arrived,
		Currency: other.Currency, RuleID: &r.RuleID, CreatedAt: now, UpdatedAt: now}
	tr := &Transfer{ID: NewID(), FamilyID: familyID, Status: "confirmed", CreatedAt: now, UpdatedAt: now}
	if t.Amount > 0 { // money out of t's account: the mirror is the inflow
		mirror.Name = "Transfer from " + from.Name
		tr.OutflowTransactionID, tr.InflowTransactionID = t.ID, mirror.ID
	} else {
		mirror.Name = "Transfer to " + from.Name
		tr.OutflowTransactionID, tr.InflowTransactionID = mirror.ID, t.ID
	}
	madeFingerprint(mirror)
	if _, err := s.db.NewInsert().Model(mirror).Exec(ctx); err != nil {
		return uuid.Nil, dbErr("create transfer side", err)
	}
	if importID != nil {
		if _, err := s.db.NewUpdate().Model((*Transaction)(nil)).Set("import_id = ?", *importID).
			Where("family_id = ?", familyID).Where("id = ?", mirror.ID).Exec(ctx); err != nil {
			return uuid.Nil, dbErr("mark transfer side imported", err)
		}
	}
	if _, err := s.db.NewInsert().Model(tr).Exec(ctx); err != nil {
		return uuid.Nil, dbErr("create transfer", err)
	}
	return other.ID, nil
}

// ignoreMissing is err, or nil when err is ErrNotFound.
func ignoreMissing(err error) error {
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// RuleChange is one existing transaction a rule would change, for a
// preview: the row as it is and the fields with their new values.
type RuleChange struct {
	Transaction Transaction
	Changed     []string
	After       RuleRow
	AddedTags   []uuid.UUID
	TransferTo  *uuid.UUID
}

// RulePreview is what a preview found: the first changes, how many rows
// the rule would change, and how many rows were evaluated.
type RulePreview struct {
	Changes   []RuleChange
	Total     int
	Evaluated int
}

// PreviewWorkBudget bounds the work of one preview (see RowWorkBudget):
// a preview that would cost more stops and says how far it got.
const PreviewWorkBudget = 200 * RowWorkBudget

// PreviewRule lists the family's transactions that rule r (saved or not)
// would change if applied now on its own, at most limit of them, and how
// many there are in all. It writes nothing. The request's deadline is
// checked before every row, and its work is bounded by
// PreviewWorkBudget; when either ends it, the preview so far comes back
// with the error (the context's, or an *InvalidError).
func (s *Store) PreviewRule(ctx context.Context, r *Rule, limit int) (*RulePreview, error) {
	if err := s.checkRule(ctx, r); err != nil {
		return nil, err
	}
	preview := *r
	preview.Active = true
	if preview.ID == uuid.Nil {
		preview.ID = NewID()
	}
	rs, err := CompileRules([]Rule{preview})
	if err != nil {
		return nil, err
	}
	out := &RulePreview{Changes: []RuleChange{}}
	var work int64
	after := uuid.Nil
	for {
		rows, ts, err := s.ruleRows(ctx, r.FamilyID, after, ruleBatch, nil)
		if err != nil {
			return nil, err
		}
		for i := range rows {
			if err := ctx.Err(); err != nil {
				return out, fmt.Errorf("models: preview rule: %w", err)
			}
			if work > PreviewWorkBudget {
				return out, Invalid(fmt.Sprintf("The rule is too costly to preview: it stopped after %d transactions", out.Evaluated))
			}
			res := rs.Apply(rows[i])
			out.Evaluated++
			work += res.Work
			if len(res.Changed) == 0 {
				continue
			}
			out.Total++
			if len(out.Changes) < limit {
				out.Changes = append(out.Changes, RuleChange{Transaction: ts[i], Changed: res.Changed, After: res.Row,
					AddedTags: res.AddedTags, TransferTo: res.TransferTo})
			}
		}
		if len(rows) < ruleBatch {
			break
		}
		after = rows[len(rows)-1].ID
	}
	return out, nil
}

// ruleBatch is how many transactions a rule run reads, changes and commits
// at once.
const ruleBatch = 1000
