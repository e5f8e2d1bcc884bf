package models

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// calendarPrefix marks calendar feed tokens, as keyPrefix marks API keys.
const calendarPrefix = "cal_"

// CalendarFeed is a user's secret calendar address: only the SHA-256 of
// its token is kept, the token itself is in the address the user copied.
// A calendar app cannot sign in; knowing the address is the permission.
type CalendarFeed struct {
	bun.BaseModel `bun:"table:calendar_feeds,alias:cf"`

	UserID    uuid.UUID `bun:"user_id,pk"`
	FamilyID  uuid.UUID `bun:"family_id"`
	TokenHash string    `bun:"token_hash"`
	CreatedAt time.Time `bun:"created_at"`

	User *User `bun:"rel:belongs-to,join:user_id=id,join:family_id=family_id"`
}

// NewCalendarFeed gives the user a new secret calendar address and returns
// its token in clear, the only time it exists outside the user's hands.
// The user's previous address, if any, stops working at once.
func (s *Store) NewCalendarFeed(ctx context.Context, familyID, userID uuid.UUID) (string, error) {
	if _, err := s.User(ctx, familyID, userID); err != nil {
		return "", err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", dbErr("new calendar feed", err)
	}
	token := calendarPrefix + hex.EncodeToString(raw[:])
	f := &CalendarFeed{UserID: userID, FamilyID: familyID, TokenHash: hashKey(token), CreatedAt: s.now()}
	_, err := s.db.NewInsert().Model(f).
		On("CONFLICT (user_id) DO UPDATE").Set("token_hash = EXCLUDED.token_hash").Set("created_at = EXCLUDED.created_at").
		Exec(ctx)
	return token, dbErr("new calendar feed", err)
}

// CalendarFeedOf returns the user's calendar feed; ErrNotFound when it is
// off.
func (s *Store) CalendarFeedOf(ctx context.Context, familyID, userID uuid.UUID) (*CalendarFeed, error) {
	f := new(CalendarFeed)
	err := s.db.NewSelect().Model(f).Where("cf.family_id = ?", familyID).Where("cf.user_id = ?", userID).Scan(ctx)
	return f, dbErr("get calendar feed", err)
}

// DeleteCalendarFeed turns the user's calendar feed off: its address stops
// working. Turning off a feed that is off is not an error.
func (s *Store) DeleteCalendarFeed(ctx context.Context, familyID, userID uuid.UUID) error {
	_, err := s.db.NewDelete().Model((*CalendarFeed)(nil)).Where("family_id = ?", familyID).Where("user_id = ?", userID).Exec(ctx)
	return dbErr("delete calendar feed", err)
}

// CalendarFeedByToken finds the feed of a presented token, with its user;
// an unknown token, a replaced or turned-off one, or one whose user is no
// longer active is ErrNotFound, the same for each.
func (s *Store) CalendarFeedByToken(ctx context.Context, token string) (*CalendarFeed, error) {
	h := hashKey(token)
	f := new(CalendarFeed)
	err := s.db.NewSelect().Model(f).
		Relation("User", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Column("id", "family_id", "status") }).
		Where("cf.token_hash = ?", h).Scan(ctx)
	if err != nil {
		return nil, dbErr("get calendar feed", err)
	}
	if subtle.ConstantTimeCompare([]byte(f.TokenHash), []byte(h)) != 1 || f.User == nil || f.User.Status != UserActive {
		return nil, ErrNotFound
	}
	return f, nil
}
