package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Roles, lowest first.
const (
	RoleMember     = "member"
	RoleAdmin      = "admin"
	RoleSuperAdmin = "super_admin"
)

// User statuses.
const (
	UserActive    = "active"
	UserSuspended = "suspended"
)

// User is a person signing in; every user belongs to exactly one family.
type User struct {
	bun.BaseModel `bun:"table:users,alias:u"`

	ID           uuid.UUID  `bun:"id,pk"`
	FamilyID     uuid.UUID  `bun:"family_id"`
	Email        string     `bun:"email"`
	PasswordHash *string    `bun:"password_hash"` // nil: no local password
	Role         string     `bun:"role"`
	Status       string     `bun:"status"`
	FirstName    *string    `bun:"first_name"`
	LastName     *string    `bun:"last_name"`
	SuspendedAt  *time.Time `bun:"suspended_at"`
	SuspendedBy  *uuid.UUID `bun:"suspended_by"`
	LastLoginAt  *time.Time `bun:"last_login_at"`
	// AIEnabled: the person turned the assistant on in the app.
	AIEnabled bool `bun:"ai_enabled"`
	// AssistantMayWrite lets the assistant change this user's data (update
	// transactions, create categories and tags); off by default.
	AssistantMayWrite bool      `bun:"assistant_may_write"`
	CreatedAt         time.Time `bun:"created_at"`
	UpdatedAt         time.Time `bun:"updated_at"`
}

// ValidRole reports whether r is one of the three roles.
func ValidRole(r string) bool {
	return r == RoleMember || r == RoleAdmin || r == RoleSuperAdmin
}

// CreateUser inserts a user into an existing family. The email is kept as
// given; uniqueness ignores case.
func (s *Store) CreateUser(ctx context.Context, u *User) error {
	u.ID = NewID()
	u.Email = strings.TrimSpace(u.Email)
	u.CreatedAt = s.now()
	u.UpdatedAt = u.CreatedAt
	if u.Status == "" {
		u.Status = UserActive
	}
	if u.Role == "" {
		u.Role = RoleMember
	}
	_, err := s.db.NewInsert().Model(u).Exec(ctx)
	return dbErr("create user", err)
}

// UserByEmail finds a user by email, in any letter case. It is not scoped by
// family: sign-in is how a family is found.
func (s *Store) UserByEmail(ctx context.Context, email string) (*User, error) {
	u := new(User)
	err := s.db.NewSelect().Model(u).
		Where("lower(u.email) = lower(?)", strings.TrimSpace(email)).
		Scan(ctx)
	return u, dbErr("get user by email", err)
}

// User returns one user of a family.
func (s *Store) User(ctx context.Context, familyID, id uuid.UUID) (*User, error) {
	u := new(User)
	err := s.db.NewSelect().Model(u).
		Where("u.family_id = ?", familyID).
		Where("u.id = ?", id).
		Scan(ctx)
	return u, dbErr("get user", err)
}

// recordLogin stores the time of a successful sign-in and, when newHash is
// not nil, a rehashed password.
func (s *Store) recordLogin(ctx context.Context, userID uuid.UUID, newHash *string) error {
	q := s.db.NewUpdate().Model((*User)(nil)).
		Set("last_login_at = ?", s.now()).
		Where("id = ?", userID)
	if newHash != nil {
		q.Set("password_hash = ?", *newHash)
	}
	res, err := q.Exec(ctx)
	return affectedOne(res, err, "record login")
}

// setPassword stores a new password hash.
func (s *Store) setPassword(ctx context.Context, userID uuid.UUID, hash string) error {
	res, err := s.db.NewUpdate().Model((*User)(nil)).
		Set("password_hash = ?", hash).
		Set("updated_at = ?", s.now()).
		Where("id = ?", userID).
		Exec(ctx)
	return affectedOne(res, err, "set password")
}

// fillUserNames sets the user's first and last name where they are blank;
// an identity provider never overwrites what the user has.
func (s *Store) fillUserNames(ctx context.Context, userID uuid.UUID, first, last string) error {
	for col, v := range map[string]string{"first_name": first, "last_name": last} {
		if v == "" {
			continue
		}
		_, err := s.db.NewUpdate().Model((*User)(nil)).Set("? = ?", bun.Ident(col), v).
			Where("id = ?", userID).Where("(? IS NULL OR ? = '')", bun.Ident(col), bun.Ident(col)).Exec(ctx)
		if err != nil {
			return dbErr("fill user names", err)
		}
	}
	return nil
}

// FamilyExistsError is AddUser's answer when the new family's name is
// already taken; it wraps ErrConflict and names the family to join instead.
type FamilyExistsError struct{ Family *Family }

func (e *FamilyExistsError) Error() string {
	return fmt.Sprintf("a family named %q already exists (id %s)", e.Family.Name, e.Family.ID)
}

func (e *FamilyExistsError) Unwrap() error { return ErrConflict }

// AddUser adds u to the existing family join or, when join is uuid.Nil, to
// the new family f, which u then administers. A new family may not take
// the name of another in any letter case (*FamilyExistsError): two
// families of one name would be told apart by nobody. No family join is
// ErrNotFound; an email in use is ErrConflict. One transaction.
func (s *Store) AddUser(ctx context.Context, u *User, join uuid.UUID, f *Family) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		if join != uuid.Nil {
			if _, err := tx.Family(ctx, join); err != nil {
				return err
			}
			u.FamilyID = join
			return tx.CreateUser(ctx, u)
		}
		if other, err := tx.familyByName(ctx, f.Name); err == nil {
			return &FamilyExistsError{Family: other}
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		return tx.createFamilyAdmin(ctx, f, u)
	})
}

// ResetPassword stores a new password hash and ends every session of the
// user but keep (uuid.Nil: all), and every grant of every OAuth client
// (the mobile app's, connected apps': their access and refresh tokens and
// pending codes), in one transaction, so that no sign-in outlives the
// password it was opened with. API keys stay: they are not sign-ins.
func (s *Store) ResetPassword(ctx context.Context, userID uuid.UUID, hash string, keep uuid.UUID) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.setPassword(ctx, userID, hash); err != nil {
			return err
		}
		u, err := tx.UserByID(ctx, userID)
		if err != nil {
			return err
		}
		if err := tx.deleteUserOAuthTokens(ctx, u.FamilyID, u.ID); err != nil {
			return err
		}
		tx.authChange(ctx) // cached access tokens end in every process
		return tx.DeleteUserSessions(ctx, u.FamilyID, userID, keep)
	})
}

// EnableAI records that a user of the family turned the assistant on.
func (s *Store) EnableAI(ctx context.Context, familyID, userID uuid.UUID) error {
	res, err := s.db.NewUpdate().Model((*User)(nil)).
		Set("ai_enabled = ?", true).
		Set("updated_at = ?", s.now()).
		Where("family_id = ?", familyID).
		Where("id = ?", userID).
		Exec(ctx)
	return affectedOne(res, err, "enable ai")
}

// SetAssistantMayWrite turns on or off the assistant's write tools for a
// user of the family.
func (s *Store) SetAssistantMayWrite(ctx context.Context, familyID, userID uuid.UUID, may bool) error {
	res, err := s.db.NewUpdate().Model((*User)(nil)).
		Set("assistant_may_write = ?", may).
		Set("updated_at = ?", s.now()).
		Where("family_id = ?", familyID).
		Where("id = ?", userID).
		Exec(ctx)
	return affectedOne(res, err, "set assistant may write")
}
