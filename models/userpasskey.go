package models

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// MaxPasskeys is how many passkeys one person may register.
const MaxPasskeys = 20

// UserPasskey is one authenticator a person registered as a second
// factor. Credential is the WebAuthn library's record of it as JSON (the
// sign-in package reads and writes it); the public key in it is not a
// secret, so it is stored as it is.
type UserPasskey struct {
	bun.BaseModel `bun:"table:user_passkeys,alias:up"`

	ID           uuid.UUID  `bun:"id,pk"`
	UserID       uuid.UUID  `bun:"user_id"`
	FamilyID     uuid.UUID  `bun:"family_id"`
	Name         string     `bun:"name"`
	CredentialID string     `bun:"credential_id"` // base64url
	Credential   string     `bun:"credential"`
	CreatedAt    time.Time  `bun:"created_at"`
	LastUsedAt   *time.Time `bun:"last_used_at"`
}

// UserPasskeys returns the user's passkeys, oldest first.
func (s *Store) UserPasskeys(ctx context.Context, familyID, userID uuid.UUID) ([]UserPasskey, error) {
	var keys []UserPasskey
	err := s.db.NewSelect().Model(&keys).Where("up.family_id = ? AND up.user_id = ?", familyID, userID).
		OrderExpr("up.created_at, up.id").Scan(ctx)
	return keys, dbErr("list passkeys", err)
}

// AddPasskey stores k and writes rec in one transaction. codeHashes, when
// given, become the person's recovery codes: a first second factor comes
// with them, so a lost authenticator does not lock its owner out. Past
// MaxPasskeys it is Invalid; a credential registered before is
// ErrConflict.
func (s *Store) AddPasskey(ctx context.Context, k *UserPasskey, codeHashes []string, rec *AuditLog) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		n, err := tx.db.NewSelect().Model((*UserPasskey)(nil)).
			Where("family_id = ? AND user_id = ?", k.FamilyID, k.UserID).Count(ctx)
		if err != nil {
			return dbErr("count passkeys", err)
		}
		if n >= MaxPasskeys {
			return Invalid(fmt.Sprintf("You have %d passkeys, the most one person may have. Remove one first.", MaxPasskeys))
		}
		k.ID, k.CreatedAt = NewID(), tx.now()
		if _, err := tx.db.NewInsert().Model(k).Exec(ctx); err != nil {
			return dbErr("create passkey", err)
		}
		if err := tx.replaceRecoveryCodes(ctx, k.FamilyID, k.UserID, codeHashes); err != nil {
			return err
		}
		return tx.CreateAuditLog(ctx, rec)
	})
}

// RemovePasskey deletes the user's passkey id and writes rec. The
// recovery codes go with the last second factor. ErrNotFound when the
// user has no such passkey.
func (s *Store) RemovePasskey(ctx context.Context, familyID, userID, id uuid.UUID, rec *AuditLog) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		res, err := tx.db.NewDelete().Model((*UserPasskey)(nil)).
			Where("family_id = ? AND user_id = ? AND id = ?", familyID, userID, id).Exec(ctx)
		if err != nil {
			return dbErr("delete passkey", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return ErrNotFound
		}
		if err := tx.dropCodesWithoutFactor(ctx, familyID, userID); err != nil {
			return err
		}
		return tx.CreateAuditLog(ctx, rec)
	})
}

// UsePasskey stores the credential record a sign-in updated (its sign
// counter) and when it was used.
func (s *Store) UsePasskey(ctx context.Context, k *UserPasskey) error {
	now := s.now()
	_, err := s.db.NewUpdate().Model((*UserPasskey)(nil)).Set("credential = ?", k.Credential).Set("last_used_at = ?", now).
		Where("family_id = ? AND user_id = ? AND id = ?", k.FamilyID, k.UserID, k.ID).Exec(ctx)
	k.LastUsedAt = &now
	return dbErr("use passkey", err)
}

// HasSecondFactor reports whether the user has an authenticator app or a
// passkey.
func (s *Store) HasSecondFactor(ctx context.Context, familyID, userID uuid.UUID) (bool, error) {
	var n int
	err := s.db.NewRaw(`SELECT (SELECT COUNT(*) FROM user_totps WHERE family_id = ?0 AND user_id = ?1)
	    + (SELECT COUNT(*) FROM user_passkeys WHERE family_id = ?0 AND user_id = ?1)`, familyID, userID).Scan(ctx, &n)
	return n > 0, dbErr("has second factor", err)
}

// replaceRecoveryCodes makes codeHashes the user's recovery codes; none
// given keeps the present ones.
func (s *Store) replaceRecoveryCodes(ctx context.Context, familyID, userID uuid.UUID, codeHashes []string) error {
	if len(codeHashes) == 0 {
		return nil
	}
	if _, err := s.db.NewDelete().Model((*RecoveryCode)(nil)).
		Where("family_id = ? AND user_id = ?", familyID, userID).Exec(ctx); err != nil {
		return dbErr("delete recovery codes", err)
	}
	now := s.now()
	codes := make([]RecoveryCode, 0, len(codeHashes))
	for _, h := range codeHashes {
		codes = append(codes, RecoveryCode{ID: NewID(), UserID: userID, FamilyID: familyID, CodeHash: h, CreatedAt: now})
	}
	_, err := s.db.NewInsert().Model(&codes).Exec(ctx)
	return dbErr("create recovery codes", err)
}

// dropCodesWithoutFactor deletes the user's recovery codes once no second
// factor is left for them to stand in for.
func (s *Store) dropCodesWithoutFactor(ctx context.Context, familyID, userID uuid.UUID) error {
	has, err := s.HasSecondFactor(ctx, familyID, userID)
	if err != nil || has {
		return err
	}
	_, err = s.db.NewDelete().Model((*RecoveryCode)(nil)).Where("family_id = ? AND user_id = ?", familyID, userID).Exec(ctx)
	return dbErr("delete recovery codes", err)
}
