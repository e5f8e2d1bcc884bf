package models

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/money"
)

// ExcludedSplit is the excluded_reason of a split parent. The parent stays
// in the ledger, excluded, and its parts (rows naming it in
// split_parent_id) count in its place: every sum that leaves out excluded
// rows counts the parts and never both.
const ExcludedSplit = "split"

// MaxSplitParts is the most parts one transaction may be split into.
const MaxSplitParts = 100

// Messages of a refused split, worded as the reference words them.
const (
	MsgNotSplittable = "Transaction cannot be split (it is pending, a transfer, excluded, or already split)"
	MsgNotSplit      = "Transaction is not split"
	MsgSplitEmpty    = "At least one split is required"
	MsgSplitPartEdit = "A split part's amount, date, currency and account follow the transaction it was split from: change the split instead"
	MsgSplitDelete   = "A split part cannot be deleted on its own: change the split, or delete the transaction it was split from"
	MsgSplitParent   = "A split transaction's amount, date, currency and account cannot be changed: remove the split first"
)

// notSplitSQL holds for a transaction t that is neither a split parent
// nor a part of one: what transfers pair and suggest.
const notSplitSQL = "t.split_parent_id IS NULL AND COALESCE(t.excluded_reason, '') <> 'split'"

// notSplitParentSQL holds for a transaction t that is not a split parent:
// the rows the API's lists and the rules see (a parent's parts stand for it).
const notSplitParentSQL = "COALESCE(t.excluded_reason, '') <> 'split'"

// IsSplitParent reports whether t was split into parts.
func (t *Transaction) IsSplitParent() bool {
	return t.Excluded && t.ExcludedReason != nil && *t.ExcludedReason == ExcludedSplit
}

// SplitPart is one part of a split as a person gives it. Amount is signed
// as the parent's is stored (positive is money out). Notes and TagIDs nil
// take the parent's.
type SplitPart struct {
	Name       string
	Amount     money.Amount
	CategoryID *uuid.UUID
	Excluded   bool
	Notes      *string
	TagIDs     []uuid.UUID
}

// splitRow is what a split reads of the row named.
type splitRow struct {
	bun.BaseModel `bun:"table:transactions,alias:t"`

	ID             uuid.UUID    `bun:"id"`
	AccountID      uuid.UUID    `bun:"account_id"`
	Amount         money.Amount `bun:"amount"`
	Currency       string       `bun:"currency"`
	Pending        bool         `bun:"pending"`
	Excluded       bool         `bun:"excluded"`
	ExcludedReason *string      `bun:"excluded_reason"`
	SplitParentID  *uuid.UUID   `bun:"split_parent_id"`
	// ReconciliationID locks the row: a reconciled row is neither split
	// nor has its split changed (ErrReconciled).
	ReconciliationID *uuid.UUID `bun:"reconciliation_id"`
}

func (r *splitRow) parent() bool { return r.Excluded && deref(r.ExcludedReason) == ExcludedSplit }

// lockSplitRow reads (locking it on PostgreSQL) the live row id of the
// family. With resolve, a part's id resolves to its parent.
func (s *Store) lockSplitRow(ctx context.Context, familyID, id uuid.UUID, resolve bool) (*splitRow, error) {
	r := new(splitRow)
	q := s.db.NewSelect().Model(r).Where("t.family_id = ?", familyID).Where("t.id = ?", id).Where("t.deleted_at IS NULL")
	if s.Postgres() {
		q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, dbErr("get transaction to split", err)
	}
	if resolve && r.SplitParentID != nil {
		return s.lockSplitRow(ctx, familyID, *r.SplitParentID, false)
	}
	if r.ReconciliationID != nil {
		return nil, ErrReconciled
	}
	return r, nil
}

// SplitTransaction splits transaction id of the family into parts that
// add up exactly to its amount, in one database transaction: the parts are
// written as rows of the same account, day and currency, and the parent is
// excluded (ExcludedSplit). A pending row, a transfer leg, an excluded row,
// a part or a row already split is refused, as are parts that do not add
// up (the message says by how much), none, more than MaxSplitParts, or a
// category or tag that is not the family's. It returns the parent's id.
func (s *Store) SplitTransaction(ctx context.Context, familyID, id uuid.UUID, parts []SplitPart) (uuid.UUID, error) {
	var parentID uuid.UUID
	err := s.RunInTx(ctx, func(tx *Store) error {
		p, err := tx.lockSplitRow(ctx, familyID, id, false)
		if err != nil {
			return err
		}
		parentID = p.ID
		if p.Pending || p.Excluded || p.SplitParentID != nil {
			return Invalid(MsgNotSplittable)
		}
		if in, err := tx.paired(ctx, familyID, p.ID); err != nil || in {
			if err != nil {
				return err
			}
			return Invalid(MsgNotSplittable)
		}
		return tx.writeSplit(ctx, familyID, p, parts)
	})
	return parentID, err
}

// ReplaceSplit replaces the parts of split transaction id (or of the
// parent of part id) with parts, checked as SplitTransaction checks them,
// and clears its review mark. It returns the parent's id.
func (s *Store) ReplaceSplit(ctx context.Context, familyID, id uuid.UUID, parts []SplitPart) (uuid.UUID, error) {
	var parentID uuid.UUID
	err := s.RunInTx(ctx, func(tx *Store) error {
		p, err := tx.lockSplitRow(ctx, familyID, id, true)
		if err != nil {
			return err
		}
		parentID = p.ID
		if !p.parent() {
			return Invalid(MsgNotSplit)
		}
		if err := tx.deleteParts(ctx, familyID, p.ID); err != nil {
			return err
		}
		return tx.writeSplit(ctx, familyID, p, parts)
	})
	return parentID, err
}

// Unsplit deletes the parts of split transaction id (or of the parent of
// part id) and counts the parent again. It returns the parent's id.
func (s *Store) Unsplit(ctx context.Context, familyID, id uuid.UUID) (uuid.UUID, error) {
	var parentID uuid.UUID
	err := s.RunInTx(ctx, func(tx *Store) error {
		p, err := tx.lockSplitRow(ctx, familyID, id, true)
		if err != nil {
			return err
		}
		parentID = p.ID
		if !p.parent() {
			return Invalid(MsgNotSplit)
		}
		if err := tx.deleteParts(ctx, familyID, p.ID); err != nil {
			return err
		}
		res, err := tx.db.NewUpdate().Model((*Transaction)(nil)).
			Set("excluded = ?", false).Set("excluded_reason = NULL").Set("split_needs_review = ?", false).
			Set("updated_at = ?", tx.now()).
			Where("family_id = ?", familyID).Where("id = ?", p.ID).Exec(ctx)
		if err := affectedOne(res, err, "unsplit transaction"); err != nil {
			return err
		}
		tx.balanceChange(ctx, familyID, p.AccountID)
		return nil
	})
	return parentID, err
}

// CheckSplitParts returns one message per problem of parts as the split
// of a transaction of amount total in currency cur, without references.
func CheckSplitParts(parts []SplitPart, total money.Amount, cur string) []string {
	switch {
	case len(parts) == 0:
		return []string{MsgSplitEmpty}
	case len(parts) > MaxSplitParts:
		return []string{fmt.Sprintf("A transaction can be split into at most %d parts, not %d", MaxSplitParts, len(parts))}
	}
	var sum money.Amount
	for _, p := range parts {
		sum += p.Amount
	}
	if sum == total {
		return nil
	}
	c := money.MustCurrency(cur)
	short := "short"
	if (total-sum < 0) != (total < 0) { // past the amount, whichever way it goes
		short = "over"
	}
	return []string{fmt.Sprintf("Splits must add up to the transaction's amount of %s: they add up to %s, %s %s",
		total.Format(c), sum.Format(c), (total - sum).Abs().Format(c), short)}
}

// writeSplit checks parts against parent p and writes them, with the
// parent's exclusion, inside the caller's transaction.
func (s *Store) writeSplit(ctx context.Context, familyID uuid.UUID, p *splitRow, parts []SplitPart) error {
	problems := CheckSplitParts(parts, p.Amount, p.Currency)
	if len(problems) > 0 {
		return Invalid(problems...)
	}
	var parent Transaction
	if err := s.db.NewSelect().Model(&parent).Where("t.family_id = ?", familyID).Where("t.id = ?", p.ID).Scan(ctx); err != nil {
		return dbErr("get split parent", err)
	}
	var parentTags []uuid.UUID
	if err := s.db.NewSelect().Model((*TransactionTag)(nil)).Column("tag_id").
		Where("family_id = ?", familyID).Where("transaction_id = ?", p.ID).Scan(ctx, &parentTags); err != nil {
		return dbErr("get split parent tags", err)
	}
	// Every reference is checked at once, so that one answer names them all.
	seen := map[uuid.UUID]bool{}
	var refs TransactionRefs
	for _, part := range parts {
		if part.CategoryID != nil && !seen[*part.CategoryID] {
			seen[*part.CategoryID] = true
			problems = append(problems, s.checkCategory(ctx, familyID, *part.CategoryID)...)
		}
		refs.TagIDs = append(refs.TagIDs, part.TagIDs...)
	}
	if len(refs.TagIDs) > 0 {
		more, err := s.CheckTransactionRefs(ctx, familyID, refs)
		if err != nil {
			return err
		}
		problems = append(problems, more...)
	}
	if len(problems) > 0 {
		return Invalid(problems...)
	}
	now := s.now()
	rows := make([]Transaction, len(parts))
	var links []TransactionTag
	for i, part := range parts {
		name := part.Name
		if name == "" {
			name = parent.Name
		}
		notes := part.Notes
		if notes == nil {
			notes = parent.Notes
		}
		// A person wrote the part: the rules leave what they chose.
		locked := []string{"name"}
		if part.CategoryID != nil {
			locked = append(locked, "category")
		}
		if part.Excluded {
			locked = append(locked, "excluded")
		}
		pid := p.ID
		rows[i] = Transaction{ID: NewID(), FamilyID: familyID, AccountID: parent.AccountID, Date: parent.Date,
			Amount: part.Amount, Currency: parent.Currency, Name: name, Notes: notes, CategoryID: part.CategoryID,
			MerchantID: parent.MerchantID, Excluded: part.Excluded, LockedFields: locked, SplitParentID: &pid,
			CreatedAt: now, UpdatedAt: now}
		tags := part.TagIDs
		if tags == nil {
			tags = parentTags
		}
		for _, tag := range tags {
			if !containsLink(links, rows[i].ID, tag) {
				links = append(links, TransactionTag{TransactionID: rows[i].ID, TagID: tag, FamilyID: familyID})
			}
		}
	}
	if _, err := s.db.NewInsert().Model(&rows).
		Column("id", "family_id", "account_id", "date", "amount", "currency", "name", "notes", "category_id",
			"merchant_id", "excluded", "locked_fields", "split_parent_id", "created_at", "updated_at").
		Exec(ctx); err != nil {
		return dbErr("insert split parts", err)
	}
	if err := s.insertTags(ctx, links); err != nil {
		return err
	}
	res, err := s.db.NewUpdate().Model((*Transaction)(nil)).
		Set("excluded = ?", true).Set("excluded_reason = ?", ExcludedSplit).Set("split_needs_review = ?", false).
		Set("updated_at = ?", now).
		Where("family_id = ?", familyID).Where("id = ?", p.ID).Exec(ctx)
	if err := affectedOne(res, err, "mark split parent"); err != nil {
		return err
	}
	s.balanceChange(ctx, familyID, p.AccountID)
	return nil
}

func containsLink(links []TransactionTag, id, tag uuid.UUID) bool {
	for _, l := range links {
		if l.TransactionID == id && l.TagID == tag {
			return true
		}
	}
	return false
}

// checkCategory is the message of a category that is not the family's.
func (s *Store) checkCategory(ctx context.Context, familyID, id uuid.UUID) []string {
	problems, err := s.CheckTransactionRefs(ctx, familyID, TransactionRefs{CategoryID: &id})
	if err != nil {
		return []string{"Category " + id.String() + " could not be checked"}
	}
	return problems
}

// deleteParts deletes the parts of split parent id.
func (s *Store) deleteParts(ctx context.Context, familyID, id uuid.UUID) error {
	locked, err := s.db.NewSelect().Model((*Transaction)(nil)).Where("family_id = ?", familyID).
		Where("split_parent_id = ?", id).Where("reconciliation_id IS NOT NULL").Exists(ctx)
	if err != nil {
		return dbErr("check split parts", err)
	}
	if locked { // a reconciled part stays until a person unlocks it
		return ErrReconciled
	}
	_, err = s.db.NewDelete().Model((*Transaction)(nil)).
		Where("family_id = ?", familyID).Where("split_parent_id = ?", id).Exec(ctx)
	return dbErr("delete split parts", err)
}

// loadSplits fills Splits of each split parent among txs, with their
// account, category, merchant, tags and transfers, in creation order.
func (s *Store) loadSplits(ctx context.Context, familyID uuid.UUID, txs []*Transaction) error {
	var ids []uuid.UUID
	byID := map[uuid.UUID]*Transaction{}
	for _, t := range txs {
		if t.IsSplitParent() {
			ids = append(ids, t.ID)
			byID[t.ID] = t
			t.Splits = []*Transaction{}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var parts []*Transaction
	if err := s.transactionSelect(&parts, familyID).Where("t.split_parent_id IN (?)", bun.List(ids)).
		OrderExpr("t.created_at, t.id").Scan(ctx); err != nil {
		return dbErr("load split parts", err)
	}
	if err := s.loadTransactionLinks(ctx, familyID, parts); err != nil {
		return err
	}
	for _, p := range parts {
		if parent := byID[*p.SplitParentID]; parent != nil {
			parent.Splits = append(parent.Splits, p)
		}
	}
	return nil
}

// splitGuard refuses an edit that would move a split part or parent away
// from the sum that ties them: its amount, date, currency or account.
func splitGuard(before, after *Transaction, columns []string) error {
	if before.SplitParentID == nil && !before.IsSplitParent() {
		return nil
	}
	for _, c := range columns {
		changed := false
		switch c {
		case "amount":
			changed = after.Amount != before.Amount
		case "date":
			changed = after.Date != before.Date
		case "currency":
			changed = after.Currency != before.Currency
		case "account_id":
			changed = after.AccountID != before.AccountID
		}
		if changed && before.SplitParentID != nil {
			return Invalid(MsgSplitPartEdit)
		}
		if changed {
			return Invalid(MsgSplitParent)
		}
	}
	return nil
}

// SplitsNeedingReview counts the family's split parents whose amount a
// bank changed under their parts: they wait for a person (the weekly
// digest says how many).
func (s *Store) SplitsNeedingReview(ctx context.Context, familyID uuid.UUID) (int, error) {
	n, err := s.db.NewSelect().Model((*Transaction)(nil)).
		Where("t.family_id = ? AND t.split_needs_review AND t.deleted_at IS NULL", familyID).Count(ctx)
	return int(n), dbErr("splits needing review", err)
}
