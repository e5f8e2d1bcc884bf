package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// OAuthPKCE is the PKCE challenge of an authorization code, kept under the
// code's signature until the code is exchanged.
type OAuthPKCE struct {
	bun.BaseModel `bun:"table:oauth_pkce,alias:opk"`

	Signature string       `bun:"signature,pk"`
	ClientID  string       `bun:"client_id"`
	FamilyID  uuid.UUID    `bun:"family_id"`
	UserID    uuid.UUID    `bun:"user_id"`
	Request   OAuthRequest `bun:"request"`
	ExpiresAt time.Time    `bun:"expires_at"`
	CreatedAt time.Time    `bun:"created_at"`
}

// CreateOAuthPKCE stores a challenge.
func (s *Store) CreateOAuthPKCE(ctx context.Context, p *OAuthPKCE) error {
	p.CreatedAt = s.now()
	_, err := s.db.NewInsert().Model(p).Exec(ctx)
	return dbErr("create oauth pkce", err)
}

// OAuthPKCEBySignature finds the challenge of a code.
func (s *Store) OAuthPKCEBySignature(ctx context.Context, signature string) (*OAuthPKCE, error) {
	p := new(OAuthPKCE)
	if err := s.db.NewSelect().Model(p).Where("opk.signature = ?", signature).Scan(ctx); err != nil {
		return nil, dbErr("get oauth pkce", err)
	}
	return p, nil
}

// DeleteOAuthPKCE forgets a challenge once its code was exchanged.
func (s *Store) DeleteOAuthPKCE(ctx context.Context, signature string) error {
	_, err := s.db.NewDelete().Model((*OAuthPKCE)(nil)).Where("signature = ?", signature).Exec(ctx)
	return dbErr("delete oauth pkce", err)
}

// DeleteExpiredOAuthPKCE deletes the challenges of codes whose time ran
// out before now (a code never exchanged leaves its challenge behind),
// across families, and returns how many.
func (s *Store) DeleteExpiredOAuthPKCE(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.NewDelete().Model((*OAuthPKCE)(nil)).Where("expires_at < ?", now.UTC()).Exec(ctx)
	if err != nil {
		return 0, dbErr("delete expired oauth pkce", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
