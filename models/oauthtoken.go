package models

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// The kinds of OAuth token.
const (
	TokenAccess  = "access"
	TokenRefresh = "refresh"
)

// OAuthToken is an access or refresh token of the authorization server,
// kept under its HMAC signature. Tokens of one grant share RequestID
// through every rotation, which is how a replay revokes them all.
type OAuthToken struct {
	bun.BaseModel `bun:"table:oauth_tokens,alias:ot"`

	Signature  string       `bun:"signature,pk"`
	Kind       string       `bun:"kind"`
	RequestID  string       `bun:"request_id"`
	ClientID   string       `bun:"client_id"`
	FamilyID   uuid.UUID    `bun:"family_id"`
	UserID     uuid.UUID    `bun:"user_id"`
	Scope      string       `bun:"scope"`
	Request    OAuthRequest `bun:"request"`
	Active     bool         `bun:"active"`
	ExpiresAt  time.Time    `bun:"expires_at"`
	LastUsedAt *time.Time   `bun:"last_used_at"`
	CreatedAt  time.Time    `bun:"created_at"`

	User   *User   `bun:"rel:belongs-to,join:user_id=id,join:family_id=family_id"`
	Family *Family `bun:"rel:belongs-to,join:family_id=id"`
}

// CreateOAuthToken stores a new, active token.
func (s *Store) CreateOAuthToken(ctx context.Context, t *OAuthToken) error {
	t.CreatedAt = s.now()
	t.Active = true
	_, err := s.db.NewInsert().Model(t).Exec(ctx)
	return dbErr("create oauth token", err)
}

// OAuthTokenBySignature finds a token of a kind, active or not, with its
// user's status; the signature is the credential, so the lookup is not
// scoped by family.
func (s *Store) OAuthTokenBySignature(ctx context.Context, kind, signature string) (*OAuthToken, error) {
	t := new(OAuthToken)
	err := s.db.NewSelect().Model(t).
		Relation("User", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Column("id", "family_id", "status") }).
		Where("ot.signature = ?", signature).Where("ot.kind = ?", kind).Scan(ctx)
	if err != nil {
		return nil, dbErr("get oauth token", err)
	}
	return t, nil
}

// DeleteOAuthToken forgets one token.
func (s *Store) DeleteOAuthToken(ctx context.Context, kind, signature string) error {
	res, err := s.db.NewDelete().Model((*OAuthToken)(nil)).Where("signature = ?", signature).Where("kind = ?", kind).Exec(ctx)
	return s.tokensEnded(ctx, kind, res, err, "delete oauth token")
}

// DeactivateOAuthTokens marks every token of a kind in a grant used: a
// rotated refresh token, or a whole grant whose reuse was detected.
func (s *Store) DeactivateOAuthTokens(ctx context.Context, kind, requestID string) error {
	res, err := s.db.NewUpdate().Model((*OAuthToken)(nil)).Set("active = ?", false).
		Where("request_id = ?", requestID).Where("kind = ?", kind).Where("active = ?", true).Exec(ctx)
	return s.tokensEnded(ctx, kind, res, err, "deactivate oauth tokens")
}

// RotateOAuthGrant retires the refresh token with this signature as its
// refresh does: it is marked used (kept, to recognise a replay), with any
// other active refresh token of the grant, and the grant's access tokens
// are deleted. Of two refreshes with one token at once, one changes the
// token's row and the other gets ErrNotFound: the row lock (PostgreSQL) or
// the write lock (SQLite) of the first one's transaction holds the second
// until the first commits, and then the token is no longer active.
//
// Nothing is announced (OnAuthChange): the client replaced its own token,
// and an access token another web process has cached lives on there for
// at most that cache's lifetime (15 seconds); announcing every refresh
// would empty every process's cache of every key each time an app
// refreshes.
func (s *Store) RotateOAuthGrant(ctx context.Context, requestID, signature string) error {
	res, err := s.db.NewUpdate().Model((*OAuthToken)(nil)).Set("active = ?", false).
		Where("signature = ?", signature).Where("kind = ?", TokenRefresh).Where("active = ?", true).Exec(ctx)
	if err := affectedOne(res, err, "use refresh token"); err != nil {
		return err
	}
	_, err = s.db.NewUpdate().Model((*OAuthToken)(nil)).Set("active = ?", false).
		Where("request_id = ?", requestID).Where("kind = ?", TokenRefresh).Where("active = ?", true).Exec(ctx)
	if err != nil {
		return dbErr("deactivate oauth tokens", err)
	}
	_, err = s.db.NewDelete().Model((*OAuthToken)(nil)).Where("request_id = ?", requestID).Where("kind = ?", TokenAccess).Exec(ctx)
	return dbErr("delete oauth tokens", err)
}

// DeleteGrantOAuthTokens forgets every token of a kind in a grant.
func (s *Store) DeleteGrantOAuthTokens(ctx context.Context, kind, requestID string) error {
	res, err := s.db.NewDelete().Model((*OAuthToken)(nil)).Where("request_id = ?", requestID).Where("kind = ?", kind).Exec(ctx)
	return s.tokensEnded(ctx, kind, res, err, "delete oauth tokens")
}

// tokensEnded reports an access token ended, deleted or deactivated, to
// the processes that cache them (OnAuthChange). Refresh tokens are read
// from the database at each use, so ending one needs no announcement.
func (s *Store) tokensEnded(ctx context.Context, kind string, res sql.Result, err error, action string) error {
	if err != nil {
		return dbErr(action, err)
	}
	if n, _ := res.RowsAffected(); n > 0 && kind == TokenAccess {
		s.authChange(ctx)
	}
	return nil
}

// APIKeyByAccessToken turns the signature of a live access token into the
// principal an API key gives (user, family, scope), so that a bearer token
// passes the same checks as a key. ID is the grant's, shared by every
// token the grant will issue, so that rate limits survive rotations.
// Expired, rotated and unknown tokens are all ErrNotFound.
func (s *Store) APIKeyByAccessToken(ctx context.Context, signature string) (*APIKey, error) {
	t := new(OAuthToken)
	err := s.db.NewSelect().Model(t).
		Column("ot.signature", "ot.request_id", "ot.family_id", "ot.user_id", "ot.scope", "ot.expires_at", "ot.last_used_at").
		Relation("User", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Column("id", "family_id", "role", "status") }).
		Relation("Family", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Column("id", "currency", "rules_version") }).
		Where("ot.signature = ?", signature).
		Where("ot.kind = ?", TokenAccess).
		Where("ot.active = ?", true).
		Scan(ctx)
	if err != nil {
		return nil, dbErr("get oauth access token", err)
	}
	if !s.now().Before(t.ExpiresAt) {
		return nil, ErrNotFound
	}
	id, err := uuid.Parse(t.RequestID)
	if err != nil {
		id = uuid.NewSHA1(uuid.NameSpaceOID, []byte(t.RequestID))
	}
	return &APIKey{ID: id, FamilyID: t.FamilyID, UserID: t.UserID, Scope: t.Scope, ExpiresAt: &t.ExpiresAt,
		LastUsedAt: t.LastUsedAt, User: t.User, Family: t.Family, OAuth: true, TokenSignature: signature}, nil
}

// TouchOAuthToken records that an access token was used, at most once a
// minute.
func (s *Store) TouchOAuthToken(ctx context.Context, familyID uuid.UUID, signature string) error {
	now := s.now()
	_, err := s.db.NewUpdate().Model((*OAuthToken)(nil)).
		Set("last_used_at = ?", now).
		Where("family_id = ?", familyID).
		Where("signature = ?", signature).
		Where("(last_used_at IS NULL OR last_used_at < ?)", now.Add(-time.Minute)).
		Exec(ctx)
	return dbErr("touch oauth token", err)
}

// AuthorizedApp is an app a user let in: the grants of one client for one
// user, while any of their tokens lives.
type AuthorizedApp struct {
	ClientID   string    `bun:"client_id"`
	ClientName string    `bun:"client_name"`
	UserID     uuid.UUID `bun:"user_id"`
	UserEmail  string    `bun:"user_email"`
	Scope      string    `bun:"scope"`
	Since      time.Time `bun:"since"`
	LastUsedAt time.Time `bun:"last_used_at"` // the last request or refresh
}

// AuthorizedApps lists the apps with live tokens in the family, of one
// user or (uuid.Nil) of everyone, most recently used first.
func (s *Store) AuthorizedApps(ctx context.Context, familyID, userID uuid.UUID) ([]AuthorizedApp, error) {
	var apps []AuthorizedApp
	q := s.db.NewSelect().TableExpr("oauth_tokens AS ot").
		Join("JOIN oauth_clients AS oc ON oc.id = ot.client_id").
		Join("JOIN users AS u ON u.id = ot.user_id AND u.family_id = ot.family_id").
		ColumnExpr("ot.client_id, oc.name AS client_name, ot.user_id, u.email AS user_email").
		ColumnExpr("max(ot.scope) AS scope, min(ot.created_at) AS since").
		ColumnExpr("max(coalesce(ot.last_used_at, ot.created_at)) AS last_used_at").
		Where("ot.family_id = ?", familyID).
		Where("ot.active = ?", true).
		Where("ot.expires_at > ?", s.now()).
		GroupExpr("ot.client_id, oc.name, ot.user_id, u.email").
		OrderExpr("last_used_at DESC, ot.client_id")
	if userID != uuid.Nil {
		q = q.Where("ot.user_id = ?", userID)
	}
	err := q.Scan(ctx, &apps)
	return apps, dbErr("list authorized apps", err)
}

// RevokeAuthorizedApp ends every grant of a client for a user of the
// family. None is ErrNotFound.
func (s *Store) RevokeAuthorizedApp(ctx context.Context, familyID, userID uuid.UUID, clientID string) error {
	res, err := s.db.NewDelete().Model((*OAuthToken)(nil)).
		Where("family_id = ?", familyID).Where("user_id = ?", userID).Where("client_id = ?", clientID).Exec(ctx)
	if err := affectedOne(res, err, "revoke authorized app"); err != nil {
		return err
	}
	s.authChange(ctx)
	return nil
}

// deleteUserOAuthTokens ends every grant of a user, as suspension does.
func (s *Store) deleteUserOAuthTokens(ctx context.Context, familyID, userID uuid.UUID) error {
	if _, err := s.db.NewDelete().Model((*OAuthCode)(nil)).Where("family_id = ?", familyID).Where("user_id = ?", userID).Exec(ctx); err != nil {
		return dbErr("delete user oauth codes", err)
	}
	_, err := s.db.NewDelete().Model((*OAuthToken)(nil)).Where("family_id = ?", familyID).Where("user_id = ?", userID).Exec(ctx)
	return dbErr("delete user oauth tokens", err)
}

// RecordAppLogin records the password sign-in of u through an app (the
// mobile app's sign-in endpoints), whose password the caller has checked:
// the login time (with newHash when not nil) and the login record, as
// LoginWithPassword does, without a browser session: the app gets tokens.
func (s *Store) RecordAppLogin(ctx context.Context, u *User, override bool, newHash *string, in SignIn, meta map[string]any) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.recordLogin(ctx, u.ID, newHash); err != nil {
			return err
		}
		m := map[string]any{"method": "password", "override": override, "role": u.Role}
		for k, v := range meta {
			m[k] = v
		}
		return tx.CreateAuditLog(ctx, in.audit(EventLogin, u.ID, m))
	})
}

// RegisterAppFamily is RegisterFamily for an app's sign-up: the family,
// its first user and the login record, without a browser session. An
// email in use is ErrConflict.
func (s *Store) RegisterAppFamily(ctx context.Context, f *Family, u *User, in SignIn, meta map[string]any) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.createFamilyAdmin(ctx, f, u); err != nil {
			return err
		}
		m := map[string]any{"method": "password", "override": false, "registration": true}
		for k, v := range meta {
			m[k] = v
		}
		return tx.CreateAuditLog(ctx, in.audit(EventLogin, u.ID, m))
	})
}

// DeleteExpiredOAuthTokens deletes the access and refresh tokens, active
// or not, whose time ran out before now, across families, and returns
// how many. Nothing is announced (OnAuthChange): an expired access token
// is refused by its expiry already, cached or not, and a rotated refresh
// token is kept only while it could still be replayed.
func (s *Store) DeleteExpiredOAuthTokens(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.NewDelete().Model((*OAuthToken)(nil)).Where("expires_at < ?", now.UTC()).Exec(ctx)
	if err != nil {
		return 0, dbErr("delete expired oauth tokens", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
