package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Family is a group of users sharing one ledger.
type Family struct {
	bun.BaseModel `bun:"table:families,alias:f"`

	ID        uuid.UUID `bun:"id,pk"`
	Name      string    `bun:"name"`
	Currency  string    `bun:"currency"` // default currency of new records
	CreatedAt time.Time `bun:"created_at"`
	UpdatedAt time.Time `bun:"updated_at"`
}

// Family returns one family.
func (s *Store) Family(ctx context.Context, familyID uuid.UUID) (*Family, error) {
	f := new(Family)
	err := s.db.NewSelect().Model(f).Where("f.id = ?", familyID).Scan(ctx)
	return f, dbErr("get family", err)
}

// CreateFamily inserts a family; its id and timestamps are set here.
func (s *Store) CreateFamily(ctx context.Context, f *Family) error {
	f.ID = NewID()
	f.CreatedAt = s.now()
	f.UpdatedAt = f.CreatedAt
	_, err := s.db.NewInsert().Model(f).Exec(ctx)
	return dbErr("create family", err)
}
