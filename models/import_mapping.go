package models

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/importfile"
)

// ImportMapping is a saved set of import settings (column labels and
// formats), offered for the next file of the same layout.
type ImportMapping struct {
	bun.BaseModel `bun:"table:import_mappings,alias:imm"`

	ID       uuid.UUID `bun:"id,pk"`
	FamilyID uuid.UUID `bun:"family_id"`
	Name     string    `bun:"name"`
	importfile.Settings
	CreatedAt time.Time `bun:"created_at"`
	UpdatedAt time.Time `bun:"updated_at"`
}

// SaveImportMapping stores settings under a name; a mapping of the same
// name (any case) is replaced.
func (s *Store) SaveImportMapping(ctx context.Context, familyID uuid.UUID, name string, set importfile.Settings) error {
	now := s.now()
	return s.RunInTx(ctx, func(tx *Store) error {
		if _, err := tx.db.NewDelete().Model((*ImportMapping)(nil)).Where("family_id = ?", familyID).
			Where("lower(name) = ?", strings.ToLower(name)).Exec(ctx); err != nil {
			return dbErr("replace import mapping", err)
		}
		m := &ImportMapping{ID: NewID(), FamilyID: familyID, Name: name, Settings: set, CreatedAt: now, UpdatedAt: now}
		_, err := tx.db.NewInsert().Model(m).Exec(ctx)
		return dbErr("save import mapping", err)
	})
}

// ImportMappings returns the family's saved mappings by name.
func (s *Store) ImportMappings(ctx context.Context, familyID uuid.UUID) ([]ImportMapping, error) {
	var out []ImportMapping
	err := s.db.NewSelect().Model(&out).Where("imm.family_id = ?", familyID).OrderExpr("lower(imm.name), imm.id").Scan(ctx)
	return out, dbErr("list import mappings", err)
}

// ImportMapping returns one saved mapping of the family.
func (s *Store) ImportMapping(ctx context.Context, familyID, id uuid.UUID) (*ImportMapping, error) {
	return oneOf[ImportMapping](ctx, s, familyID, id, "get import mapping")
}
