package models

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// InvitationTTL is how long an invitation can be accepted.
const InvitationTTL = 7 * 24 * time.Hour

// Why an invitation cannot be accepted; callers show each its own way.
var (
	ErrInvitationUsed    = errors.New("invitation already used")
	ErrInvitationExpired = errors.New("invitation expired")
	ErrInvitationRevoked = errors.New("invitation revoked")
	// ErrEmailTaken: the invited address already has an account, in this
	// family or another; a user belongs to exactly one family.
	ErrEmailTaken = errors.New("email already has an account")
)

// Invitation states, as Status reports them.
const (
	InvitationPending  = "pending"
	InvitationAccepted = "accepted"
	InvitationRevoked  = "revoked"
	InvitationExpired  = "expired"
)

// Invitation asks someone, by email, to join a family. Only the SHA-256
// of its one-time token is stored; the token itself travels in the link.
type Invitation struct {
	bun.BaseModel `bun:"table:invitations,alias:inv"`

	ID             uuid.UUID  `bun:"id,pk"`
	FamilyID       uuid.UUID  `bun:"family_id"`
	InviterID      *uuid.UUID `bun:"inviter_id"`
	Email          string     `bun:"email"`
	Role           string     `bun:"role"` // member or admin
	TokenHash      string     `bun:"token_hash"`
	ExpiresAt      time.Time  `bun:"expires_at"`
	AcceptedAt     *time.Time `bun:"accepted_at"`
	AcceptedUserID *uuid.UUID `bun:"accepted_user_id"`
	RevokedAt      *time.Time `bun:"revoked_at"`
	CreatedAt      time.Time  `bun:"created_at"`

	FamilyName *string `bun:"family_name,scanonly"` // set by InvitationByToken
}

// LogValue keeps the token hash and the address out of logs.
func (i *Invitation) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", i.ID.String()), slog.String("family_id", i.FamilyID.String()))
}

// Status is pending, accepted, revoked or expired at time now.
func (i *Invitation) Status(now time.Time) string {
	switch {
	case i.AcceptedAt != nil:
		return InvitationAccepted
	case i.RevokedAt != nil:
		return InvitationRevoked
	case !now.Before(i.ExpiresAt):
		return InvitationExpired
	}
	return InvitationPending
}

// usable returns why the invitation cannot be accepted now, or nil.
func (i *Invitation) usable(now time.Time) error {
	switch i.Status(now) {
	case InvitationAccepted:
		return ErrInvitationUsed
	case InvitationRevoked:
		return ErrInvitationRevoked
	case InvitationExpired:
		return ErrInvitationExpired
	}
	return nil
}

// CreateInvitation has an admin of the family invite an address, as a
// member unless role says admin, and returns the invitation and its token
// in clear, the only time it exists outside the caller's hands. An open
// invitation to the same address is revoked in the same transaction, so
// only the newest link works. An inviter who is not an admin of the
// family is ErrForbidden (ErrNotFound outside it); an address that is
// already a member here is refused.
func (s *Store) CreateInvitation(ctx context.Context, familyID, inviterID uuid.UUID, email, role string) (*Invitation, string, error) {
	email = strings.TrimSpace(email)
	if role == "" {
		role = RoleMember
	}
	var problems []string
	if at := strings.IndexByte(email, '@'); at < 1 || at == len(email)-1 || len(email) > 320 || strings.ContainsAny(email, " \t\r\n") {
		problems = append(problems, "Email must be a valid email address")
	}
	if role != RoleMember && role != RoleAdmin {
		problems = append(problems, "Role must be member or admin")
	}
	if len(problems) > 0 {
		return nil, "", Invalid(problems...)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, "", dbErr("create invitation", err)
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	now := s.now()
	inv := &Invitation{ID: NewID(), FamilyID: familyID, InviterID: &inviterID, Email: email, Role: role,
		TokenHash: hashKey(token), ExpiresAt: now.Add(InvitationTTL), CreatedAt: now}
	err := s.RunInTx(ctx, func(tx *Store) error {
		inviter, err := tx.User(ctx, familyID, inviterID)
		if err != nil {
			return err
		}
		if inviter.Role != RoleAdmin && inviter.Role != RoleSuperAdmin || inviter.Status != UserActive {
			return ErrForbidden
		}
		member, err := tx.db.NewSelect().Model((*User)(nil)).
			Where("family_id = ?", familyID).Where("lower(email) = lower(?)", email).Exists(ctx)
		if err != nil {
			return dbErr("check member", err)
		}
		if member {
			return Invalid("This person is already a member of the household")
		}
		if _, err := tx.db.NewUpdate().Model((*Invitation)(nil)).Set("revoked_at = ?", now).
			Where("family_id = ?", familyID).Where("lower(email) = lower(?)", email).
			Where("accepted_at IS NULL").Where("revoked_at IS NULL").Exec(ctx); err != nil {
			return dbErr("revoke earlier invitation", err)
		}
		_, err = tx.db.NewInsert().Model(inv).Exec(ctx)
		return dbErr("create invitation", err)
	})
	if err != nil {
		return nil, "", err
	}
	return inv, token, nil
}

// Invitations lists the family's pending invitations (neither accepted,
// revoked nor expired), newest first.
func (s *Store) Invitations(ctx context.Context, familyID uuid.UUID) ([]Invitation, error) {
	invs := []Invitation{}
	err := s.db.NewSelect().Model(&invs).
		Where("inv.family_id = ?", familyID).
		Where("inv.accepted_at IS NULL").Where("inv.revoked_at IS NULL").Where("inv.expires_at > ?", s.now()).
		OrderExpr("inv.created_at DESC, inv.id DESC").
		Scan(ctx)
	return invs, dbErr("list invitations", err)
}

// RevokeInvitation ends an open invitation of the family; one already
// accepted or revoked, or another family's, is ErrNotFound.
func (s *Store) RevokeInvitation(ctx context.Context, familyID, id uuid.UUID) error {
	res, err := s.db.NewUpdate().Model((*Invitation)(nil)).Set("revoked_at = ?", s.now()).
		Where("family_id = ?", familyID).Where("id = ?", id).
		Where("accepted_at IS NULL").Where("revoked_at IS NULL").
		Exec(ctx)
	return affectedOne(res, err, "revoke invitation")
}

// InvitationByToken finds the invitation a link's token names, with its
// family's name, for the page that accepts it. An unknown token is
// ErrNotFound; a known one that can no longer be used is returned with
// ErrInvitationUsed, ErrInvitationRevoked or ErrInvitationExpired.
func (s *Store) InvitationByToken(ctx context.Context, token string) (*Invitation, error) {
	h := hashKey(token)
	inv := new(Invitation)
	if err := s.invitationSelect(inv).Where("inv.token_hash = ?", h).Scan(ctx); err != nil {
		return nil, dbErr("get invitation", err)
	}
	// The index lookup already matched; comparing again in constant time
	// keeps the decision itself free of timing differences.
	if subtle.ConstantTimeCompare([]byte(inv.TokenHash), []byte(h)) != 1 {
		return nil, ErrNotFound
	}
	return inv, inv.usable(s.now())
}

// Invitation returns the family's invitation id, with its family's name
// and the errors of InvitationByToken. A sign-in started from the
// invitation's page finds it again this way: the browser proved it holds
// the token when it started.
func (s *Store) Invitation(ctx context.Context, familyID, id uuid.UUID) (*Invitation, error) {
	inv := new(Invitation)
	if err := s.invitationSelect(inv).Where("inv.family_id = ?", familyID).Where("inv.id = ?", id).Scan(ctx); err != nil {
		return nil, dbErr("get invitation", err)
	}
	return inv, inv.usable(s.now())
}

func (s *Store) invitationSelect(inv *Invitation) *bun.SelectQuery {
	return s.db.NewSelect().Model(inv).ColumnExpr("inv.*").ColumnExpr("f.name AS family_name").
		Join("JOIN families AS f ON f.id = inv.family_id")
}

// AcceptInvitation turns an invitation into a user of its family, in one
// transaction: u gets the invited address, family and role (its names
// and password hash are kept), and the invitation is marked used. It is
// refused with the errors of InvitationByToken, or ErrEmailTaken when
// the address has an account already. Of two concurrent accepts of one
// token, one wins and the other gets ErrInvitationUsed.
func (s *Store) AcceptInvitation(ctx context.Context, token string, u *User) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		inv, err := tx.InvitationByToken(ctx, token)
		if err != nil {
			return err
		}
		if err := tx.claimInvitation(ctx, inv); err != nil {
			return err
		}
		if err := tx.joinInvited(ctx, inv, u); err != nil {
			return err
		}
		return tx.invitationAcceptedBy(ctx, inv, u.ID)
	})
}

// claimInvitation marks inv used, inside the caller's transaction. It
// comes before any other write: on PostgreSQL a concurrent accept waits
// on this row and then finds it used (ErrInvitationUsed).
func (s *Store) claimInvitation(ctx context.Context, inv *Invitation) error {
	now := s.now()
	res, err := s.db.NewUpdate().Model((*Invitation)(nil)).Set("accepted_at = ?", now).
		Where("id = ?", inv.ID).Where("family_id = ?", inv.FamilyID).
		Where("accepted_at IS NULL").Where("revoked_at IS NULL").Where("expires_at > ?", now).
		Exec(ctx)
	if err := affectedOne(res, err, "accept invitation"); errors.Is(err, ErrNotFound) {
		return ErrInvitationUsed
	} else if err != nil {
		return err
	}
	return nil
}

// joinInvited creates u in the invited family with the invited address
// and role; an address that has an account already is ErrEmailTaken.
func (s *Store) joinInvited(ctx context.Context, inv *Invitation, u *User) error {
	taken, err := s.db.NewSelect().Model((*User)(nil)).Where("lower(email) = lower(?)", inv.Email).Exists(ctx)
	if err != nil {
		return dbErr("check email", err)
	}
	if taken {
		return ErrEmailTaken
	}
	u.FamilyID, u.Email, u.Role, u.Status = inv.FamilyID, inv.Email, inv.Role, UserActive
	if err := s.CreateUser(ctx, u); errors.Is(err, ErrConflict) {
		return ErrEmailTaken
	} else if err != nil {
		return err
	}
	return nil
}

// invitationAcceptedBy records who a claimed invitation let in.
func (s *Store) invitationAcceptedBy(ctx context.Context, inv *Invitation, userID uuid.UUID) error {
	_, err := s.db.NewUpdate().Model((*Invitation)(nil)).Set("accepted_user_id = ?", userID).
		Where("id = ?", inv.ID).Where("family_id = ?", inv.FamilyID).Exec(ctx)
	return dbErr("accept invitation", err)
}
