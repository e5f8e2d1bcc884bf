package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Alias reasons.
const (
	AliasPendingPosted = "pending_posted" // the pending row's id, after it posted under a new id
	AliasReissued      = "reissued"       // a new id the Bridge gave an already imported row
)

// TransactionAlias is another remote id of an imported transaction, so
// that the row is found, and never duplicated, under either id.
type TransactionAlias struct {
	bun.BaseModel `bun:"table:provider_transaction_aliases,alias:ta"`

	AccountID     uuid.UUID `bun:"account_id,pk"`
	FamilyID      uuid.UUID `bun:"family_id"`
	Source        string    `bun:"source,pk"`
	ExternalID    string    `bun:"external_id,pk"`
	TransactionID uuid.UUID `bun:"transaction_id"`
	Reason        string    `bun:"reason"`
	CreatedAt     time.Time `bun:"created_at"`
}

// accountAliases returns every alias of an account's imported rows.
func (s *Store) accountAliases(ctx context.Context, familyID, accountID uuid.UUID, source string) ([]TransactionAlias, error) {
	var out []TransactionAlias
	err := s.db.NewSelect().Model(&out).Where("ta.family_id = ?", familyID).Where("ta.account_id = ?", accountID).
		Where("ta.source = ?", source).Scan(ctx)
	return out, dbErr("list transaction aliases", err)
}

// insertAliases writes aliases in one statement; an alias already there
// (a re-run of the same import) is kept.
func (s *Store) insertAliases(ctx context.Context, as []TransactionAlias) error {
	if len(as) == 0 {
		return nil
	}
	_, err := s.db.NewInsert().Model(&as).On("CONFLICT DO NOTHING").Exec(ctx)
	return dbErr("insert transaction aliases", err)
}
