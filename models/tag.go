package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Tag is a free label on transactions.
type Tag struct {
	bun.BaseModel `bun:"table:tags,alias:tg"`

	ID        uuid.UUID `bun:"id,pk"`
	FamilyID  uuid.UUID `bun:"family_id"`
	Name      string    `bun:"name"`
	Color     string    `bun:"color"`
	CreatedAt time.Time `bun:"created_at"`
	UpdatedAt time.Time `bun:"updated_at"`
}

// Tags lists all of the family's tags by name.
func (s *Store) Tags(ctx context.Context, familyID uuid.UUID) ([]Tag, error) {
	ts := []Tag{}
	err := s.db.NewSelect().Model(&ts).
		Where("tg.family_id = ?", familyID).
		OrderExpr("lower(tg.name) ASC, tg.id ASC").
		Scan(ctx)
	return ts, dbErr("list tags", err)
}

// Tag returns one tag of the family.
func (s *Store) Tag(ctx context.Context, familyID, id uuid.UUID) (*Tag, error) {
	return oneOf[Tag](ctx, s, familyID, id, "get tag")
}

// CreateTag inserts a tag; a name already used is ErrConflict.
func (s *Store) CreateTag(ctx context.Context, t *Tag) error {
	t.ID = NewID()
	t.CreatedAt = s.now()
	t.UpdatedAt = t.CreatedAt
	_, err := s.db.NewInsert().Model(t).Exec(ctx)
	return dbErr("create tag", err)
}

// UpdateTag writes the name and color of a tag of t.FamilyID.
func (s *Store) UpdateTag(ctx context.Context, t *Tag) error {
	t.UpdatedAt = s.now()
	return s.updateOne(ctx, t, t.FamilyID, t.ID, "update tag", "name", "color")
}

// DeleteTag removes a tag from the family and from its transactions.
func (s *Store) DeleteTag(ctx context.Context, familyID, id uuid.UUID) error {
	// Rules may name it: the family's compiled rules are read again.
	return s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.deleteOne(ctx, (*Tag)(nil), familyID, id, "delete tag"); err != nil {
			return err
		}
		return tx.rulesChanged(ctx)
	})
}

// mergeTagLinksSQL tags with ?2 every transaction that tag ?1 is on; one
// already carrying both keeps a single link.
const mergeTagLinksSQL = `
INSERT INTO transaction_tags (transaction_id, tag_id, family_id)
SELECT tt.transaction_id, ?2, ?0 FROM transaction_tags tt WHERE tt.family_id = ?0 AND tt.tag_id = ?1
ON CONFLICT (transaction_id, tag_id) DO NOTHING`

// MergeTags puts tag target on every transaction tag source is on and
// deletes source, in one transaction, and returns how many transactions
// source was on. A tag of another family is ErrNotFound.
func (s *Store) MergeTags(ctx context.Context, familyID, sourceID, targetID uuid.UUID) (tagged int, err error) {
	if sourceID == targetID {
		return 0, Invalid("A tag cannot be merged into itself")
	}
	err = s.RunInTx(ctx, func(tx *Store) error {
		if _, err := tx.Tag(ctx, familyID, targetID); err != nil {
			return err
		}
		if _, err := tx.Tag(ctx, familyID, sourceID); err != nil {
			return err
		}
		n, err := tx.db.NewSelect().Model((*TransactionTag)(nil)).
			Where("family_id = ?", familyID).Where("tag_id = ?", sourceID).Count(ctx)
		if err != nil {
			return dbErr("count tag links", err)
		}
		tagged = int(n)
		if _, err := tx.db.NewRaw(mergeTagLinksSQL, familyID, sourceID, targetID).Exec(ctx); err != nil {
			return dbErr("merge tag links", err)
		}
		return tx.DeleteTag(ctx, familyID, sourceID)
	})
	return tagged, err
}
