package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// OAuthRequest is what the authorization server keeps of one authorization
// between its requests: fosite's request and session, in plain fields so
// that models needs no OAuth library. Form holds only the parameters the
// later steps read (redirect_uri, the PKCE challenge), never a secret.
type OAuthRequest struct {
	ID              string               `json:"id"`
	RequestedAt     time.Time            `json:"requested_at"`
	Scopes          []string             `json:"scopes"`
	GrantedScopes   []string             `json:"granted_scopes"`
	Audience        []string             `json:"audience,omitempty"`
	GrantedAudience []string             `json:"granted_audience,omitempty"`
	Form            map[string][]string  `json:"form,omitempty"`
	ExpiresAt       map[string]time.Time `json:"expires_at,omitempty"`
}

// OAuthCode is an authorization code, kept under its HMAC signature.
type OAuthCode struct {
	bun.BaseModel `bun:"table:oauth_codes,alias:ocd"`

	Signature string       `bun:"signature,pk"`
	RequestID string       `bun:"request_id"`
	ClientID  string       `bun:"client_id"`
	FamilyID  uuid.UUID    `bun:"family_id"`
	UserID    uuid.UUID    `bun:"user_id"`
	Request   OAuthRequest `bun:"request"`
	Active    bool         `bun:"active"`
	ExpiresAt time.Time    `bun:"expires_at"`
	CreatedAt time.Time    `bun:"created_at"`
}

// CreateOAuthCode stores a new code.
func (s *Store) CreateOAuthCode(ctx context.Context, c *OAuthCode) error {
	c.CreatedAt = s.now()
	c.Active = true
	_, err := s.db.NewInsert().Model(c).Exec(ctx)
	return dbErr("create oauth code", err)
}

// OAuthCodeBySignature finds a code, used or not; the signature is the
// credential, so the lookup is not scoped by family.
func (s *Store) OAuthCodeBySignature(ctx context.Context, signature string) (*OAuthCode, error) {
	c := new(OAuthCode)
	if err := s.db.NewSelect().Model(c).Where("ocd.signature = ?", signature).Scan(ctx); err != nil {
		return nil, dbErr("get oauth code", err)
	}
	return c, nil
}

// UseOAuthCode marks a code exchanged. Of two exchanges at once, one
// changes the row and the other gets ErrNotFound.
func (s *Store) UseOAuthCode(ctx context.Context, signature string) error {
	res, err := s.db.NewUpdate().Model((*OAuthCode)(nil)).Set("active = ?", false).
		Where("signature = ?", signature).Where("active = ?", true).Exec(ctx)
	return affectedOne(res, err, "use oauth code")
}

// DeleteExpiredOAuthCodes deletes the codes, used or not, whose time ran
// out before now, across families (a maintenance sweep), and returns how
// many. A used code is kept until then so that its second use is
// recognised and revokes what the first issued.
func (s *Store) DeleteExpiredOAuthCodes(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.NewDelete().Model((*OAuthCode)(nil)).Where("expires_at < ?", now.UTC()).Exec(ctx)
	if err != nil {
		return 0, dbErr("delete expired oauth codes", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
