package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Merchant is who a transaction was with.
type Merchant struct {
	bun.BaseModel `bun:"table:merchants,alias:m"`

	ID        uuid.UUID `bun:"id,pk"`
	FamilyID  uuid.UUID `bun:"family_id"`
	Name      string    `bun:"name"`
	CreatedAt time.Time `bun:"created_at"`
	UpdatedAt time.Time `bun:"updated_at"`
}

// Merchants lists all of the family's merchants by name.
func (s *Store) Merchants(ctx context.Context, familyID uuid.UUID) ([]Merchant, error) {
	ms := []Merchant{}
	err := s.db.NewSelect().Model(&ms).
		Where("m.family_id = ?", familyID).
		OrderExpr("lower(m.name) ASC, m.id ASC").
		Scan(ctx)
	return ms, dbErr("list merchants", err)
}

// Merchant returns one merchant of the family.
func (s *Store) Merchant(ctx context.Context, familyID, id uuid.UUID) (*Merchant, error) {
	return oneOf[Merchant](ctx, s, familyID, id, "get merchant")
}

// CreateMerchant inserts a merchant; a name already used is ErrConflict.
func (s *Store) CreateMerchant(ctx context.Context, m *Merchant) error {
	m.ID = NewID()
	m.CreatedAt = s.now()
	m.UpdatedAt = m.CreatedAt
	_, err := s.db.NewInsert().Model(m).Exec(ctx)
	return dbErr("create merchant", err)
}

// UpdateMerchant renames a merchant of m.FamilyID.
func (s *Store) UpdateMerchant(ctx context.Context, m *Merchant) error {
	m.UpdatedAt = s.now()
	return s.updateOne(ctx, m, m.FamilyID, m.ID, "update merchant", "name")
}

// DeleteMerchant removes a merchant; its transactions keep no merchant.
func (s *Store) DeleteMerchant(ctx context.Context, familyID, id uuid.UUID) error {
	// Rules may name it: the family's compiled rules are read again.
	return s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.deleteOne(ctx, (*Merchant)(nil), familyID, id, "delete merchant"); err != nil {
			return err
		}
		return tx.rulesChanged(ctx)
	})
}

// MergeMerchants gives merchant source's transactions to target and
// deletes source, in one transaction, and returns how many moved. A
// merchant of another family is ErrNotFound.
func (s *Store) MergeMerchants(ctx context.Context, familyID, sourceID, targetID uuid.UUID) (moved int, err error) {
	if sourceID == targetID {
		return 0, Invalid("A merchant cannot be merged into itself")
	}
	err = s.RunInTx(ctx, func(tx *Store) error {
		if _, err := tx.Merchant(ctx, familyID, targetID); err != nil {
			return err
		}
		if _, err := tx.Merchant(ctx, familyID, sourceID); err != nil {
			return err
		}
		res, err := tx.db.NewUpdate().Model((*Transaction)(nil)).
			Set("merchant_id = ?", targetID).Set("updated_at = ?", tx.now()).
			Where("family_id = ?", familyID).Where("merchant_id = ?", sourceID).Exec(ctx)
		if err != nil {
			return dbErr("merge merchant transactions", err)
		}
		n, _ := res.RowsAffected()
		moved = int(n)
		return tx.DeleteMerchant(ctx, familyID, sourceID)
	})
	return moved, err
}
