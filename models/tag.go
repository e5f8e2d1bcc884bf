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
	t := new(Tag)
	err := s.db.NewSelect().Model(t).
		Where("tg.family_id = ?", familyID).
		Where("tg.id = ?", id).
		Scan(ctx)
	return t, dbErr("get tag", err)
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
	res, err := s.db.NewUpdate().Model(t).
		Column("name", "color", "updated_at").
		Where("tg.family_id = ?", t.FamilyID).
		Where("tg.id = ?", t.ID).
		Exec(ctx)
	return affectedOne(res, err, "update tag")
}

// DeleteTag removes a tag from the family and from its transactions.
func (s *Store) DeleteTag(ctx context.Context, familyID, id uuid.UUID) error {
	return s.deleteOne(ctx, (*Tag)(nil), familyID, id, "delete tag")
}
