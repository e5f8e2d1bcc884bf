package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// The columns a TOTP secret is sealed for (see secret.Sealer).
const (
	totpTable  = "user_totps"
	totpColumn = "secret_enc"
)

// UserTOTP is a person's confirmed authenticator app: the sealed secret
// and the last time step a code was accepted at.
type UserTOTP struct {
	bun.BaseModel `bun:"table:user_totps,alias:ut"`

	UserID    uuid.UUID `bun:"user_id,pk"`
	FamilyID  uuid.UUID `bun:"family_id"`
	SecretEnc string    `bun:"secret_enc"`
	LastStep  int64     `bun:"last_step"`
	CreatedAt time.Time `bun:"created_at"`
}

// RecoveryCode is one of the one-time codes given at enrolment, as its
// keyed hash.
type RecoveryCode struct {
	bun.BaseModel `bun:"table:user_recovery_codes,alias:rc"`

	ID        uuid.UUID  `bun:"id,pk"`
	UserID    uuid.UUID  `bun:"user_id"`
	FamilyID  uuid.UUID  `bun:"family_id"`
	CodeHash  string     `bun:"code_hash"`
	UsedAt    *time.Time `bun:"used_at"`
	CreatedAt time.Time  `bun:"created_at"`
}

// UserTOTP returns the user's authenticator app; ErrNotFound when the
// user has none.
func (s *Store) UserTOTP(ctx context.Context, familyID, userID uuid.UUID) (*UserTOTP, error) {
	t := new(UserTOTP)
	err := s.db.NewSelect().Model(t).Where("ut.family_id = ? AND ut.user_id = ?", familyID, userID).Scan(ctx)
	return t, dbErr("get totp", err)
}

// TOTPSecret opens the sealed secret of t.
func (s *Store) TOTPSecret(t *UserTOTP) (string, error) {
	return s.Secrets.Open(t.SecretEnc, totpTable, totpColumn, t.UserID.String())
}

// EnableTOTP stores the confirmed secret of u (sealed), the step of the
// code that confirmed it, and the hashes of its new recovery codes, and
// writes rec, in one transaction. A user who has one already is
// ErrConflict: the old one is removed first.
func (s *Store) EnableTOTP(ctx context.Context, u *User, secretText string, step int64, codeHashes []string, rec *AuditLog) error {
	sealed, err := s.Secrets.Seal(secretText, totpTable, totpColumn, u.ID.String())
	if err != nil {
		return err
	}
	return s.RunInTx(ctx, func(tx *Store) error {
		now := tx.now()
		t := &UserTOTP{UserID: u.ID, FamilyID: u.FamilyID, SecretEnc: sealed, LastStep: step, CreatedAt: now}
		if _, err := tx.db.NewInsert().Model(t).Exec(ctx); err != nil {
			return dbErr("create totp", err)
		}
		if err := tx.replaceRecoveryCodes(ctx, u.FamilyID, u.ID, codeHashes); err != nil {
			return err
		}
		return tx.CreateAuditLog(ctx, rec)
	})
}

// RemoveTOTP deletes the user's authenticator app (and the recovery
// codes, unless a passkey is left) and writes rec; ErrNotFound when there was none.
func (s *Store) RemoveTOTP(ctx context.Context, familyID, userID uuid.UUID, rec *AuditLog) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		res, err := tx.db.NewDelete().Model((*UserTOTP)(nil)).
			Where("family_id = ? AND user_id = ?", familyID, userID).Exec(ctx)
		if err != nil {
			return dbErr("delete totp", err)
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

// UseTOTPStep records that a code of time step step was accepted, and
// reports false when a code of that step or a later one was accepted
// before: one conditional update, so that two web processes given the
// same code at once accept it only once.
func (s *Store) UseTOTPStep(ctx context.Context, familyID, userID uuid.UUID, step int64) (bool, error) {
	res, err := s.db.NewUpdate().Model((*UserTOTP)(nil)).Set("last_step = ?", step).
		Where("family_id = ? AND user_id = ? AND last_step < ?", familyID, userID, step).Exec(ctx)
	if err != nil {
		return false, dbErr("use totp step", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// UseRecoveryCode spends the unused recovery code of the user whose hash
// is codeHash, and reports false when there is none (wrong, or spent
// before). The spend and rec (written only when it succeeded) are one
// transaction.
func (s *Store) UseRecoveryCode(ctx context.Context, familyID, userID uuid.UUID, codeHash string, rec *AuditLog) (bool, error) {
	used := false
	err := s.RunInTx(ctx, func(tx *Store) error {
		res, err := tx.db.NewUpdate().Model((*RecoveryCode)(nil)).Set("used_at = ?", tx.now()).
			Where("family_id = ? AND user_id = ? AND code_hash = ? AND used_at IS NULL", familyID, userID, codeHash).Exec(ctx)
		if err != nil {
			return dbErr("use recovery code", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil
		}
		used = true
		left, err := tx.RecoveryCodesLeft(ctx, familyID, userID)
		if err != nil {
			return err
		}
		if rec.Metadata == nil {
			rec.Metadata = map[string]any{}
		}
		rec.Metadata["codes_left"] = left
		return tx.CreateAuditLog(ctx, rec)
	})
	return used, err
}

// RecoveryCodesLeft counts the user's unused recovery codes.
func (s *Store) RecoveryCodesLeft(ctx context.Context, familyID, userID uuid.UUID) (int, error) {
	n, err := s.db.NewSelect().Model((*RecoveryCode)(nil)).
		Where("family_id = ? AND user_id = ? AND used_at IS NULL", familyID, userID).Count(ctx)
	return int(n), dbErr("count recovery codes", err)
}
