package models

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// MaxBulk is the most transactions one bulk edit may name.
const MaxBulk = 1000

// checkBulk refuses an empty or oversized selection.
func checkBulk(ids []uuid.UUID) error {
	if len(ids) == 0 {
		return Invalid("Select at least one transaction")
	}
	if len(ids) > MaxBulk {
		return Invalid("Select at most 1000 transactions at once")
	}
	return nil
}

// BulkSetCategory sets (nil: clears) the category of the family's
// transactions among ids and returns how many changed. Ids that are not
// live transactions of the family, another family's included, are
// ignored: the count tells the caller how many were. A category that is
// not the family's is refused. It is a person's edit: the category is
// locked on each row, so that the rules never overwrite it. A row a
// finished reconciliation locked is left as it is, and not counted.
func (s *Store) BulkSetCategory(ctx context.Context, familyID uuid.UUID, ids []uuid.UUID, categoryID *uuid.UUID) (int, error) {
	if err := checkBulk(ids); err != nil {
		return 0, err
	}
	problems, err := s.CheckTransactionRefs(ctx, familyID, TransactionRefs{CategoryID: categoryID})
	if err != nil {
		return 0, err
	}
	if len(problems) > 0 {
		return 0, Invalid(problems...)
	}
	res, err := s.db.NewUpdate().Model((*Transaction)(nil)).
		Set("category_id = ?", categoryID).Set("updated_at = ?", s.now()).Set(s.lockSet("category")).
		Where("family_id = ?", familyID).Where("id IN (?)", bun.List(ids)).Where("deleted_at IS NULL").
		Where("COALESCE(excluded_reason, '') <> 'split'"). // a split parent's parts carry the categories
		Where("reconciliation_id IS NULL").Exec(ctx)
	if err != nil {
		return 0, dbErr("bulk set category", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// bulkTagSQL puts each tag of ?2 on each live transaction of family ?0
// among ?1; links that exist already stay as they are.
const bulkTagSQL = `
INSERT INTO transaction_tags (transaction_id, tag_id, family_id)
SELECT t.id, tg.id, t.family_id
FROM transactions t JOIN tags tg ON tg.family_id = t.family_id
WHERE t.family_id = ?0 AND t.id IN (?1) AND t.deleted_at IS NULL AND t.reconciliation_id IS NULL AND tg.id IN (?2)
ON CONFLICT (transaction_id, tag_id) DO NOTHING`

// BulkAddTags adds tags to the family's transactions among ids, keeping
// the tags they have, and returns how many transactions it applied to.
// Ids that are not live transactions of the family are ignored, as in
// BulkSetCategory; a tag that is not the family's is refused. The tags
// are locked on each row, as a person's edit. Reconciled rows are left
// as they are, and not counted.
func (s *Store) BulkAddTags(ctx context.Context, familyID uuid.UUID, ids, tagIDs []uuid.UUID) (int, error) {
	if err := checkBulk(ids); err != nil {
		return 0, err
	}
	if len(tagIDs) == 0 {
		return 0, Invalid("Select at least one tag")
	}
	problems, err := s.CheckTransactionRefs(ctx, familyID, TransactionRefs{TagIDs: tagIDs})
	if err != nil {
		return 0, err
	}
	if len(problems) > 0 {
		return 0, Invalid(problems...)
	}
	var n int
	err = s.RunInTx(ctx, func(tx *Store) error {
		c, err := tx.db.NewSelect().Model((*Transaction)(nil)).
			Where("family_id = ?", familyID).Where("id IN (?)", bun.List(ids)).Where("deleted_at IS NULL").
			Where("reconciliation_id IS NULL").Count(ctx)
		if err != nil {
			return dbErr("count bulk transactions", err)
		}
		n = int(c)
		if _, err := tx.db.NewRaw(bulkTagSQL, familyID, bun.List(ids), bun.List(tagIDs)).Exec(ctx); err != nil {
			return dbErr("bulk add tags", err)
		}
		_, err = tx.db.NewUpdate().Model((*Transaction)(nil)).Set(tx.lockSet("tags")).
			Where("family_id = ?", familyID).Where("id IN (?)", bun.List(ids)).Where("deleted_at IS NULL").
			Where("reconciliation_id IS NULL").Exec(ctx)
		return dbErr("lock bulk tags", err)
	})
	return n, err
}

// lockSet is the SET expression that adds field to a row's locked fields
// (see lockEdited) unless it is there already, for a bulk edit by a
// person: the rules never overwrite it afterwards. field is one of ours,
// never input.
func (s *Store) lockSet(field string) string {
	if s.Postgres() {
		return "locked_fields = CASE WHEN COALESCE(locked_fields, '[]'::jsonb) @> '[\"" + field + "\"]'::jsonb THEN locked_fields " +
			"ELSE COALESCE(locked_fields, '[]'::jsonb) || '[\"" + field + "\"]'::jsonb END"
	}
	return "locked_fields = CASE WHEN EXISTS (SELECT 1 FROM json_each(COALESCE(locked_fields, '[]')) WHERE value = '" + field + "') " +
		"THEN locked_fields ELSE json_insert(COALESCE(locked_fields, '[]'), '$[#]', '" + field + "') END"
}
