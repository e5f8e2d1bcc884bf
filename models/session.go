package models

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Sign-in methods of a session.
const (
	MethodPassword = "password"
	MethodOverride = "override"
	MethodSSO      = "sso"
)

// Session is a signed-in browser. Only the SHA-256 of the cookie token is
// stored, so a copy of the table signs nobody in.
type Session struct {
	bun.BaseModel `bun:"table:sessions,alias:s"`

	ID         uuid.UUID  `bun:"id,pk"`
	TokenHash  string     `bun:"token_hash"`
	FamilyID   uuid.UUID  `bun:"family_id"` // the user's (see userFamily)
	UserID     uuid.UUID  `bun:"user_id"`
	Method     string     `bun:"method"`
	ProviderID *uuid.UUID `bun:"provider_id"`
	IP         *string    `bun:"ip"`
	UserAgent  *string    `bun:"user_agent"`
	CreatedAt  time.Time  `bun:"created_at"`
	LastSeenAt time.Time  `bun:"last_seen_at"`
	ExpiresAt  time.Time  `bun:"expires_at"` // absolute end

	IDTokenEnc       *string `bun:"id_token_enc"` // OIDC, sealed: the hint of RP-initiated logout
	SAMLNameID       *string `bun:"saml_name_id"`
	SAMLSessionIndex *string `bun:"saml_session_index"`

	User *User `bun:"rel:belongs-to,join:user_id=id"`
}

// userFamily is the family_id a row of sessions or sso_identities is
// written with: the one the caller gave, provided the user is of it, else
// NULL, which the column refuses. So a row's family is always its user's.
const userFamily = "(SELECT family_id FROM users WHERE id = ? AND family_id = ?)"

// CreateSession stores a new session of maxAge for sess.UserID of
// sess.FamilyID and returns its token, the cookie value, which exists
// nowhere else.
func (s *Store) CreateSession(ctx context.Context, sess *Session, maxAge time.Duration) (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", dbErr("create session", err)
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	if sess.ID == uuid.Nil {
		sess.ID = NewID()
	}
	sess.TokenHash = hashKey(token)
	sess.CreatedAt = s.now()
	sess.LastSeenAt = sess.CreatedAt
	sess.ExpiresAt = sess.CreatedAt.Add(maxAge)
	if _, err := s.db.NewInsert().Model(sess).Value("family_id", userFamily, sess.UserID, sess.FamilyID).Exec(ctx); err != nil {
		return "", dbErr("create session", err)
	}
	return token, nil
}

// SessionByToken returns the live session a cookie token names, with its
// user: not past its absolute end, not idle longer than idle. Anything
// else is ErrNotFound.
func (s *Store) SessionByToken(ctx context.Context, token string, idle time.Duration) (*Session, error) {
	now := s.now()
	sess := new(Session)
	err := s.db.NewSelect().Model(sess).Relation("User").
		Where("s.token_hash = ?", hashKey(token)).
		Where("s.expires_at > ?", now).
		Where("s.last_seen_at > ?", now.Add(-idle)).
		Scan(ctx)
	if err != nil {
		return nil, dbErr("get session", err)
	}
	return sess, nil
}

// TouchSession records activity, at most once a minute.
func (s *Store) TouchSession(ctx context.Context, familyID, id uuid.UUID) error {
	now := s.now()
	_, err := s.db.NewUpdate().Model((*Session)(nil)).
		Set("last_seen_at = ?", now).
		Where("family_id = ?", familyID).
		Where("id = ?", id).
		Where("last_seen_at < ?", now.Add(-time.Minute)).
		Exec(ctx)
	return dbErr("touch session", err)
}

// DeleteSession ends one session.
func (s *Store) DeleteSession(ctx context.Context, familyID, id uuid.UUID) error {
	_, err := s.db.NewDelete().Model((*Session)(nil)).Where("family_id = ?", familyID).Where("id = ?", id).Exec(ctx)
	return dbErr("delete session", err)
}

// DeleteUserSessions ends every session of a user but keep (uuid.Nil: all).
func (s *Store) DeleteUserSessions(ctx context.Context, familyID, userID, keep uuid.UUID) error {
	_, err := s.db.NewDelete().Model((*Session)(nil)).
		Where("family_id = ?", familyID).
		Where("user_id = ?", userID).
		Where("id <> ?", keep).
		Exec(ctx)
	return dbErr("delete user sessions", err)
}

// UserSessions lists a user's sessions that have not reached their end,
// the most recently used first, for the person to see where they are
// signed in.
func (s *Store) UserSessions(ctx context.Context, familyID, userID uuid.UUID) ([]Session, error) {
	out := []Session{}
	err := s.db.NewSelect().Model(&out).
		Where("s.family_id = ?", familyID).
		Where("s.user_id = ?", userID).
		Where("s.expires_at > ?", s.now()).
		OrderExpr("s.last_seen_at DESC, s.id").
		Limit(100).
		Scan(ctx)
	return out, dbErr("list sessions", err)
}

// DeleteUserSession ends one of a user's own sessions; another user's is
// ErrNotFound.
func (s *Store) DeleteUserSession(ctx context.Context, familyID, userID, id uuid.UUID) error {
	res, err := s.db.NewDelete().Model((*Session)(nil)).Where("family_id = ?", familyID).Where("user_id = ?", userID).
		Where("id = ?", id).Exec(ctx)
	if err != nil {
		return dbErr("delete session", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return ErrNotFound
	}
	return nil
}

// CountUserSessions counts a user's sessions, live or not yet swept.
func (s *Store) CountUserSessions(ctx context.Context, familyID, userID uuid.UUID) (int, error) {
	n, err := s.db.NewSelect().Model((*Session)(nil)).Where("family_id = ?", familyID).Where("user_id = ?", userID).Count(ctx)
	return int(n), dbErr("count sessions", err)
}

// createSSOSession is CreateSession for a single sign-on, keeping the
// OIDC ID token (sealed) for a later RP-initiated logout.
func (s *Store) createSSOSession(ctx context.Context, sess *Session, idToken string, maxAge time.Duration) (string, error) {
	sess.ID = NewID()
	if idToken != "" {
		sealed, err := s.Secrets.Seal(idToken, "sessions", "id_token_enc", sess.ID.String())
		if err != nil {
			return "", err
		}
		sess.IDTokenEnc = &sealed
	}
	return s.CreateSession(ctx, sess, maxAge)
}

// SessionIDToken opens the session's ID token; "" when none or unreadable.
func (s *Store) SessionIDToken(sess *Session) string {
	if sess.IDTokenEnc == nil || s.Secrets == nil {
		return ""
	}
	t, err := s.Secrets.Open(*sess.IDTokenEnc, "sessions", "id_token_enc", sess.ID.String())
	if err != nil {
		return ""
	}
	return t
}

// SignIn is where a new session comes from and how long it may live, as
// the session row and the audit records keep it. The caller cleans the
// strings (valid UTF-8, no control characters, cut to size).
type SignIn struct {
	IP        *string
	UserAgent *string
	MaxAge    time.Duration
	// SecondFactor is how a password sign-in's second step was passed
	// ("totp", "recovery_code"); empty when none was asked.
	SecondFactor string
}

// audit is a record of an event of this sign-in's browser.
func (in *SignIn) audit(event string, userID uuid.UUID, meta map[string]any) *AuditLog {
	return &AuditLog{EventType: event, UserID: &userID, IP: in.IP, UserAgent: in.UserAgent, Metadata: meta}
}

// LoginWithPassword records the password sign-in of u, whose password the
// caller has checked: the session, the login time (with newHash, the
// password hashed again at today's cost, when not nil) and the login
// record, in one transaction. override marks a super admin signing in
// while password sign-in is off. It returns the session token.
func (s *Store) LoginWithPassword(ctx context.Context, u *User, override bool, newHash *string, in SignIn) (token string, err error) {
	method := MethodPassword
	if override {
		method = MethodOverride
	}
	err = s.RunInTx(ctx, func(tx *Store) error {
		sess := &Session{FamilyID: u.FamilyID, UserID: u.ID, Method: method, IP: in.IP, UserAgent: in.UserAgent}
		if token, err = tx.CreateSession(ctx, sess, in.MaxAge); err != nil {
			return err
		}
		if err := tx.recordLogin(ctx, u.ID, newHash); err != nil {
			return err
		}
		meta := map[string]any{"method": "password", "override": override, "role": u.Role}
		if in.SecondFactor != "" {
			meta["second_factor"] = in.SecondFactor
		}
		return tx.CreateAuditLog(ctx, in.audit(EventLogin, u.ID, meta))
	})
	return token, err
}
