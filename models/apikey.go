package models

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// API key scopes.
const (
	ScopeRead      = "read"
	ScopeReadWrite = "read_write"
)

// keyPrefix marks coffer keys so that secret scanners and people can spot them.
const keyPrefix = "cof_"

// APIKey is a user's credential for /api/v1. Only the SHA-256 of the key
// is stored; the key itself is shown once, at creation.
type APIKey struct {
	bun.BaseModel `bun:"table:api_keys,alias:k"`

	ID            uuid.UUID  `bun:"id,pk"`
	FamilyID      uuid.UUID  `bun:"family_id"`
	UserID        uuid.UUID  `bun:"user_id"`
	Name          string     `bun:"name"`
	Scope         string     `bun:"scope"`
	KeyHash       string     `bun:"key_hash"`
	DisplayPrefix string     `bun:"display_prefix"` // first characters, for lists
	ExpiresAt     *time.Time `bun:"expires_at"`
	RevokedAt     *time.Time `bun:"revoked_at"`
	LastUsedAt    *time.Time `bun:"last_used_at"`
	CreatedAt     time.Time  `bun:"created_at"`

	User   *User   `bun:"rel:belongs-to,join:user_id=id,join:family_id=family_id"`
	Family *Family `bun:"rel:belongs-to,join:family_id=id"`

	// OAuth marks the principal of an OAuth access token (see
	// APIKeyByAccessToken), which is no row of this table.
	OAuth bool `bun:"-"`
	// TokenSignature is that token's signature, under which its last use
	// is recorded (TouchOAuthToken).
	TokenSignature string `bun:"-"`
}

// LogValue keeps the hash out of logs.
func (k *APIKey) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", k.ID.String()), slog.String("prefix", k.DisplayPrefix))
}

// Writable reports whether the key may call write endpoints.
func (k *APIKey) Writable() bool { return k.Scope == ScopeReadWrite }

// ValidScope reports whether s is a known scope.
func ValidScope(s string) bool { return s == ScopeRead || s == ScopeReadWrite }

func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// CreateAPIKey makes a new key for a user of the family and returns it in
// clear, the only time it exists outside the caller's hands.
func (s *Store) CreateAPIKey(ctx context.Context, familyID uuid.UUID, k *APIKey) (string, error) {
	if _, err := s.User(ctx, familyID, k.UserID); err != nil {
		return "", err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", dbErr("create api key", err)
	}
	key := keyPrefix + hex.EncodeToString(raw[:])
	k.ID = NewID()
	k.FamilyID = familyID
	k.KeyHash = hashKey(key)
	k.DisplayPrefix = key[:len(keyPrefix)+6]
	k.CreatedAt = s.now()
	if _, err := s.db.NewInsert().Model(k).Exec(ctx); err != nil {
		return "", dbErr("create api key", err)
	}
	return key, nil
}

// APIKeyBySecret finds the live key (not revoked, not expired) matching a
// presented secret, with its user. Any miss is ErrNotFound, so callers
// cannot tell an unknown key from a revoked one.
func (s *Store) APIKeyBySecret(ctx context.Context, key string) (*APIKey, error) {
	h := hashKey(key)
	k := new(APIKey)
	// Only what a request needs of the user and the family is read: this
	// query runs on every API call.
	err := s.db.NewSelect().Model(k).
		Relation("User", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Column("id", "family_id", "role", "status") }).
		Relation("Family", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Column("id", "currency", "rules_version") }).
		Where("k.key_hash = ?", h).
		Where("k.revoked_at IS NULL").
		Scan(ctx)
	if err != nil {
		return nil, dbErr("get api key", err)
	}
	// The index lookup already matched; comparing again in constant time
	// keeps the decision itself free of timing differences.
	if subtle.ConstantTimeCompare([]byte(k.KeyHash), []byte(h)) != 1 {
		return nil, ErrNotFound
	}
	if k.ExpiresAt != nil && !s.now().Before(*k.ExpiresAt) {
		return nil, ErrNotFound
	}
	return k, nil
}

// TouchAPIKey records that a key was used, at most once a minute, so that
// busy clients do not turn every read into a write.
func (s *Store) TouchAPIKey(ctx context.Context, familyID, id uuid.UUID) error {
	now := s.now()
	_, err := s.db.NewUpdate().Model((*APIKey)(nil)).
		Set("last_used_at = ?", now).
		Where("family_id = ?", familyID).
		Where("id = ?", id).
		Where("(last_used_at IS NULL OR last_used_at < ?)", now.Add(-time.Minute)).
		Exec(ctx)
	return dbErr("touch api key", err)
}

// RevokeAPIKey ends a key of the family.
func (s *Store) RevokeAPIKey(ctx context.Context, familyID, id uuid.UUID) error {
	return s.revokeAPIKey(ctx, familyID, uuid.Nil, id)
}

// APIKeys lists a user's keys, newest first.
func (s *Store) APIKeys(ctx context.Context, familyID, userID uuid.UUID) ([]APIKey, error) {
	var keys []APIKey
	err := s.db.NewSelect().Model(&keys).
		Where("k.family_id = ?", familyID).
		Where("k.user_id = ?", userID).
		OrderExpr("k.created_at DESC, k.id DESC").
		Scan(ctx)
	return keys, dbErr("list api keys", err)
}

// RevokeUserAPIKey ends one of a user's own keys.
func (s *Store) RevokeUserAPIKey(ctx context.Context, familyID, userID, id uuid.UUID) error {
	return s.revokeAPIKey(ctx, familyID, userID, id)
}

// revokeAPIKey ends a live key of the family, and only of userID unless
// that is uuid.Nil.
func (s *Store) revokeAPIKey(ctx context.Context, familyID, userID, id uuid.UUID) error {
	q := s.db.NewUpdate().Model((*APIKey)(nil)).
		Set("revoked_at = ?", s.now()).
		Where("family_id = ?", familyID).
		Where("id = ?", id).
		Where("revoked_at IS NULL")
	if userID != uuid.Nil {
		q = q.Where("user_id = ?", userID)
	}
	res, err := q.Exec(ctx)
	if err := affectedOne(res, err, "revoke api key"); err != nil {
		return err
	}
	s.authChange(ctx)
	return nil
}

// CreateAPIKeyByEmail makes key k for the user with this email (any
// letter case), in one transaction, and returns the key in clear and the
// user. No such user is ErrNotFound.
func (s *Store) CreateAPIKeyByEmail(ctx context.Context, email string, k *APIKey) (key string, u *User, err error) {
	err = s.RunInTx(ctx, func(tx *Store) error {
		if u, err = tx.UserByEmail(ctx, email); err != nil {
			return err
		}
		k.UserID = u.ID
		key, err = tx.CreateAPIKey(ctx, u.FamilyID, k)
		return err
	})
	if err != nil {
		return "", nil, err
	}
	return key, u, nil
}
