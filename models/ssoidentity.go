package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// SSOIdentity links a user to one account at one provider, keyed by the
// provider's subject. Claims keeps what role mapping reads (groups and
// the attributes rules name) as of the last login, for later syncs.
type SSOIdentity struct {
	bun.BaseModel `bun:"table:sso_identities,alias:si"`

	ID            uuid.UUID      `bun:"id,pk"`
	FamilyID      uuid.UUID      `bun:"family_id"` // the user's (see userFamily)
	UserID        uuid.UUID      `bun:"user_id"`
	ProviderID    uuid.UUID      `bun:"provider_id"`
	Subject       string         `bun:"subject"`
	Issuer        *string        `bun:"issuer"`
	Email         *string        `bun:"email"`
	EmailVerified bool           `bun:"email_verified"`
	FirstName     *string        `bun:"first_name"`
	LastName      *string        `bun:"last_name"`
	Claims        map[string]any `bun:"claims,notnull"`
	LinkedAt      time.Time      `bun:"linked_at"`
	LastUsedAt    *time.Time     `bun:"last_used_at"`

	Provider *SSOProvider `bun:"rel:belongs-to,join:provider_id=id"`
}

// IdentityBySubject returns the identity a provider's subject names, with
// its provider; the email plays no part.
func (s *Store) IdentityBySubject(ctx context.Context, providerID uuid.UUID, subject string) (*SSOIdentity, error) {
	i := new(SSOIdentity)
	err := s.db.NewSelect().Model(i).Relation("Provider").
		Where("si.provider_id = ?", providerID).Where("si.subject = ?", subject).Scan(ctx)
	return i, dbErr("get identity", err)
}

// UserIdentities lists a user's identities with their providers, by
// provider name.
func (s *Store) UserIdentities(ctx context.Context, familyID, userID uuid.UUID) ([]SSOIdentity, error) {
	is := []SSOIdentity{}
	err := s.db.NewSelect().Model(&is).Relation("Provider").
		Where("si.family_id = ?", familyID).Where("si.user_id = ?", userID).OrderExpr("provider.name").Scan(ctx)
	return is, dbErr("list identities", err)
}

// CreateIdentity stores a new link; a subject or provider already linked
// is ErrConflict.
func (s *Store) CreateIdentity(ctx context.Context, i *SSOIdentity) error {
	i.ID = NewID()
	i.LinkedAt = s.now()
	i.LastUsedAt = &i.LinkedAt
	if i.Claims == nil {
		i.Claims = map[string]any{}
	}
	_, err := s.db.NewInsert().Model(i).Value("family_id", userFamily, i.UserID, i.FamilyID).Exec(ctx)
	return dbErr("create identity", err)
}

// updateIdentityLogin records what the provider said at a login.
func (s *Store) updateIdentityLogin(ctx context.Context, i *SSOIdentity) error {
	now := s.now()
	i.LastUsedAt = &now
	if i.Claims == nil {
		i.Claims = map[string]any{}
	}
	res, err := s.db.NewUpdate().Model(i).
		Column("issuer", "email", "email_verified", "first_name", "last_name", "claims", "last_used_at").
		Where("family_id = ?", i.FamilyID).WherePK().Exec(ctx)
	return affectedOne(res, err, "update identity")
}

// LatestMappedIdentity returns the user's identity used last at an enabled
// provider, among those for which mapped reports true (providers that
// recompute roles). None is ErrNotFound.
func (s *Store) LatestMappedIdentity(ctx context.Context, familyID, userID uuid.UUID, mapped func(*SSOProvider) bool) (*SSOIdentity, error) {
	is := []SSOIdentity{}
	err := s.db.NewSelect().Model(&is).Relation("Provider").
		Where("si.family_id = ?", familyID).Where("si.user_id = ?", userID).Where("provider.enabled").
		OrderExpr("si.last_used_at DESC NULLS LAST, si.id DESC").Scan(ctx)
	if err != nil {
		return nil, dbErr("list identities", err)
	}
	for i := range is {
		if mapped(is[i].Provider) {
			return &is[i], nil
		}
	}
	return nil, ErrNotFound
}

// Messages of unlinking.
const MsgLastSignInMethod = "Add another sign-in method before disconnecting this one."

// UnlinkIdentity removes one of the user's identities if the user can
// still sign in afterwards: canUsePassword says whether their password
// counts (local login on, or override for a super admin); another identity
// at an enabled provider also counts. It runs under a row lock on the
// user, so two unlinks cannot each leave the other as the last way in.
func (s *Store) UnlinkIdentity(ctx context.Context, familyID, userID, identityID uuid.UUID, canUsePassword func(*User) bool, audit *AuditLog) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		u := new(User)
		q := tx.db.NewSelect().Model(u).Where("u.family_id = ?", familyID).Where("u.id = ?", userID)
		if tx.Postgres() {
			q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return dbErr("lock user", err)
		}
		ident := new(SSOIdentity)
		if err := tx.db.NewSelect().Model(ident).Relation("Provider").
			Where("si.family_id = ?", familyID).Where("si.id = ?", identityID).Where("si.user_id = ?", userID).Scan(ctx); err != nil {
			return dbErr("get identity", err)
		}
		others, err := tx.db.NewSelect().Model((*SSOIdentity)(nil)).
			Join("JOIN sso_providers AS p ON p.id = si.provider_id").
			Where("si.family_id = ?", familyID).Where("si.user_id = ?", userID).Where("si.id <> ?", identityID).
			Where("p.enabled").Count(ctx)
		if err != nil {
			return dbErr("count identities", err)
		}
		if others == 0 && (u.PasswordHash == nil || !canUsePassword(u)) {
			return Invalid(MsgLastSignInMethod)
		}
		res, err := tx.db.NewDelete().Model((*SSOIdentity)(nil)).Where("family_id = ?", familyID).Where("id = ?", identityID).Exec(ctx)
		if err := affectedOne(res, err, "unlink identity"); err != nil {
			return err
		}
		name := ident.Provider.Name
		audit.Provider = &name
		audit.UserID = &userID
		audit.Metadata = map[string]any{"identity_id": identityID.String()}
		return tx.CreateAuditLog(ctx, audit)
	})
}

// UsersOnlyThrough lists the users who would have no way to sign in if
// the provider went: linked to it, with no identity at another enabled
// provider, and no password that canUsePassword accepts.
func (s *Store) UsersOnlyThrough(ctx context.Context, providerID uuid.UUID, canUsePassword func(*User) bool) ([]User, error) {
	users := []User{}
	err := s.db.NewSelect().Model(&users).
		Where("u.id IN (SELECT user_id FROM sso_identities WHERE provider_id = ?)", providerID).
		Where(`NOT EXISTS (SELECT 1 FROM sso_identities AS o JOIN sso_providers AS p ON p.id = o.provider_id
			WHERE o.user_id = u.id AND o.provider_id <> ? AND p.enabled)`, providerID).
		OrderExpr("lower(u.email)").Scan(ctx)
	if err != nil {
		return nil, dbErr("list users of a provider", err)
	}
	out := users[:0]
	for _, u := range users {
		if !canUsePassword(&u) {
			out = append(out, u)
		}
	}
	return out, nil
}
