package models

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// UserFilter narrows the user administration list.
type UserFilter struct {
	FamilyID *uuid.UUID // nil: every family (super admins only)
	Query    string     // substring of email or name, any case
	Role     string
	Status   string
}

// UserRow is a user as the administration list shows it.
type UserRow struct {
	User
	FamilyName string   `bun:"family_name,scanonly"`
	ChatCount  int64    `bun:"chat_count,scanonly"` // read by u.*; kept by the chats triggers
	Providers  []string `bun:"-"`                   // labels of linked providers
}

// Users lists a page of users by email.
func (s *Store) Users(ctx context.Context, f UserFilter, p Page) ([]UserRow, int, error) {
	rows := []UserRow{}
	q := s.db.NewSelect().Model(&rows).ModelTableExpr("users AS u").
		ColumnExpr("u.*").ColumnExpr("f.name AS family_name").
		Join("JOIN families AS f ON f.id = u.family_id")
	if f.FamilyID != nil {
		q.Where("u.family_id = ?", *f.FamilyID)
	}
	if f.Query != "" {
		pattern := "%" + escapeLike(strings.ToLower(f.Query)) + "%"
		q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where(`lower(u.email) LIKE ? ESCAPE '\'`, pattern).
				WhereOr(`lower(COALESCE(u.first_name, '') || ' ' || COALESCE(u.last_name, '')) LIKE ? ESCAPE '\'`, pattern)
		})
	}
	if f.Role != "" {
		q.Where("u.role = ?", f.Role)
	}
	if f.Status != "" {
		q.Where("u.status = ?", f.Status)
	}
	n, err := p.scan(ctx, q.OrderExpr("lower(u.email), u.id"))
	if err != nil || len(rows) == 0 {
		return rows, n, dbErr("list users", err)
	}
	ids := make([]uuid.UUID, len(rows))
	index := make(map[uuid.UUID]int, len(rows))
	for i := range rows {
		ids[i], index[rows[i].ID] = rows[i].ID, i
	}
	var links []struct {
		UserID uuid.UUID `bun:"user_id"`
		Label  string    `bun:"label"`
	}
	err = s.db.NewSelect().TableExpr("sso_identities AS si").ColumnExpr("si.user_id, p.label").
		Join("JOIN sso_providers AS p ON p.id = si.provider_id").
		Where("si.user_id IN (?)", bun.List(ids)).OrderExpr("p.label").Scan(ctx, &links)
	for _, l := range links {
		r := &rows[index[l.UserID]]
		r.Providers = append(r.Providers, l.Label)
	}
	return rows, n, dbErr("list linked providers", err)
}

// UserByID returns any user of the instance; callers check that the actor
// may see it.
func (s *Store) UserByID(ctx context.Context, id uuid.UUID) (*User, error) {
	u := new(User)
	err := s.db.NewSelect().Model(u).Where("u.id = ?", id).Scan(ctx)
	return u, dbErr("get user", err)
}

// Messages of the role guards.
const (
	MsgLastSuperAdmin  = "At least one active super admin must remain."
	MsgLastFamilyAdmin = "Promote another member of this family to admin first."
)

// lockRoles serialises every change of roles and statuses on PostgreSQL
// (SQLite transactions already run one at a time), so that two admins
// demoting each other cannot both pass the guards.
func (s *Store) lockRoles(ctx context.Context) error {
	if !s.Postgres() {
		return nil
	}
	_, err := s.db.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7431220002)")
	return dbErr("lock roles", err)
}

// checkGuards refuses a change that would leave the instance without an
// active super admin, or a family with other active members without an
// active admin. keepsAdmin and keepsSuper tell what the target is after.
func (s *Store) checkGuards(ctx context.Context, target *User, keepsSuper, keepsAdmin bool) error {
	if target.Status != UserActive {
		return nil
	}
	if target.Role == RoleSuperAdmin && !keepsSuper {
		n, err := s.db.NewSelect().Model((*User)(nil)).
			Where("role = ?", RoleSuperAdmin).Where("status = ?", UserActive).Where("id <> ?", target.ID).Count(ctx)
		if err != nil {
			return dbErr("count super admins", err)
		}
		if n == 0 {
			return Invalid(MsgLastSuperAdmin)
		}
	}
	if (target.Role == RoleAdmin || target.Role == RoleSuperAdmin) && !keepsAdmin {
		var counts struct {
			Others int `bun:"others"`
			Admins int `bun:"admins"`
		}
		err := s.db.NewSelect().Model((*User)(nil)).
			ColumnExpr("count(*) AS others").
			ColumnExpr("COALESCE(SUM(CASE WHEN role IN ('admin', 'super_admin') THEN 1 ELSE 0 END), 0) AS admins").
			Where("family_id = ?", target.FamilyID).Where("status = ?", UserActive).Where("id <> ?", target.ID).
			Scan(ctx, &counts)
		if err != nil {
			return dbErr("count family admins", err)
		}
		if counts.Others > 0 && counts.Admins == 0 {
			return Invalid(MsgLastFamilyAdmin)
		}
	}
	return nil
}

// AdminChange is one administrative change to a user, made by Actor, with
// the request details its audit record keeps.
type AdminChange struct {
	ActorID       uuid.UUID
	ActorRole     string
	ActorFamilyID uuid.UUID
	TargetID      uuid.UUID
	IP            *string
	UserAgent     *string
}

// ErrForbidden is returned when the actor may not act on the target as it
// is now (a family admin on a super admin).
var ErrForbidden = errors.New("forbidden")

func (s *Store) adminChange(ctx context.Context, c AdminChange, fn func(tx *Store, target *User) (event string, meta map[string]any, err error)) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.lockRoles(ctx); err != nil {
			return err
		}
		target, err := tx.UserByID(ctx, c.TargetID)
		if err != nil {
			return err
		}
		// The caller checked these on an earlier read; checked again on the
		// locked row, a concurrent promotion cannot slip through.
		if c.ActorRole != RoleSuperAdmin {
			if target.FamilyID != c.ActorFamilyID {
				return ErrNotFound
			}
			if target.Role == RoleSuperAdmin {
				return ErrForbidden
			}
		}
		event, meta, err := fn(tx, target)
		if err != nil || event == "" {
			return err
		}
		meta["target_user_id"] = target.ID.String()
		tx.authChange(ctx)
		return tx.CreateAuditLog(ctx, &AuditLog{EventType: event, UserID: &c.ActorID, IP: c.IP, UserAgent: c.UserAgent, Metadata: meta})
	})
}

// SetUserRole changes a user's role under the guards and records it.
func (s *Store) SetUserRole(ctx context.Context, c AdminChange, role string) error {
	return s.adminChange(ctx, c, func(tx *Store, u *User) (string, map[string]any, error) {
		if u.Role == role {
			return "", nil, nil
		}
		if err := tx.checkGuards(ctx, u, role == RoleSuperAdmin, role != RoleMember); err != nil {
			return "", nil, err
		}
		res, err := tx.db.NewUpdate().Model((*User)(nil)).Set("role = ?", role).Set("updated_at = ?", tx.now()).
			Where("id = ?", u.ID).Exec(ctx)
		if err := affectedOne(res, err, "set role"); err != nil {
			return "", nil, err
		}
		return EventRoleChanged, map[string]any{"from": u.Role, "to": role, "source": "manual"}, nil
	})
}

// SuspendUser disables a user's access and ends every session and OAuth
// grant at once (API keys stop at the status check; tokens are deleted so
// that reactivation does not bring back grants given before).
func (s *Store) SuspendUser(ctx context.Context, c AdminChange) error {
	return s.adminChange(ctx, c, func(tx *Store, u *User) (string, map[string]any, error) {
		if u.Status == UserSuspended {
			return "", nil, nil
		}
		if err := tx.checkGuards(ctx, u, false, false); err != nil {
			return "", nil, err
		}
		now := tx.now()
		res, err := tx.db.NewUpdate().Model((*User)(nil)).Set("status = ?", UserSuspended).
			Set("suspended_at = ?", now).Set("suspended_by = ?", c.ActorID).Set("updated_at = ?", now).
			Where("id = ?", u.ID).Exec(ctx)
		if err := affectedOne(res, err, "suspend user"); err != nil {
			return "", nil, err
		}
		if err := tx.DeleteUserSessions(ctx, u.FamilyID, u.ID, uuid.Nil); err != nil {
			return "", nil, err
		}
		if err := tx.deleteUserOAuthTokens(ctx, u.FamilyID, u.ID); err != nil {
			return "", nil, err
		}
		return EventUserSuspended, map[string]any{"target_role": u.Role}, nil
	})
}

// ReactivateUser restores a suspended user's access.
func (s *Store) ReactivateUser(ctx context.Context, c AdminChange) error {
	return s.adminChange(ctx, c, func(tx *Store, u *User) (string, map[string]any, error) {
		if u.Status == UserActive {
			return "", nil, nil
		}
		res, err := tx.db.NewUpdate().Model((*User)(nil)).Set("status = ?", UserActive).
			Set("suspended_at = NULL").Set("suspended_by = NULL").Set("updated_at = ?", tx.now()).
			Where("id = ?", u.ID).Exec(ctx)
		if err := affectedOne(res, err, "reactivate user"); err != nil {
			return "", nil, err
		}
		return EventUserReactivated, map[string]any{"target_role": u.Role}, nil
	})
}

// DeleteUser removes a user with their sessions, keys, identities and
// chats. A family left with nobody is removed afterwards by the
// family:purge job, so a large ledger is not deleted inside this
// transaction.
func (s *Store) DeleteUser(ctx context.Context, c AdminChange) error {
	return s.adminChange(ctx, c, func(tx *Store, u *User) (string, map[string]any, error) {
		if err := tx.checkGuards(ctx, u, false, false); err != nil {
			return "", nil, err
		}
		if _, err := tx.db.NewDelete().Model((*User)(nil)).Where("id = ?", u.ID).Exec(ctx); err != nil {
			return "", nil, dbErr("delete user", err)
		}
		return EventUserDeleted, map[string]any{"target_role": u.Role}, nil
	})
}

// PurgeFamilyIfEmpty deletes a family that has no users left, with all
// its data; a family with users is left alone. It reports whether it
// deleted, and is harmless to repeat.
func (s *Store) PurgeFamilyIfEmpty(ctx context.Context, familyID uuid.UUID) (bool, error) {
	res, err := s.db.NewDelete().Model((*Family)(nil)).Where("id = ?", familyID).
		Where("NOT EXISTS (SELECT 1 FROM users WHERE users.family_id = ?)", familyID).Exec(ctx)
	if err != nil {
		return false, dbErr("purge family", err)
	}
	n, _ := res.RowsAffected()
	if n == 1 {
		s.authChange(ctx)
	}
	return n == 1, nil
}

// EmptyFamilies lists families without users, whose purge a lost queue
// may have dropped.
func (s *Store) EmptyFamilies(ctx context.Context) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := s.db.NewSelect().Model((*Family)(nil)).Column("id").
		Where("NOT EXISTS (SELECT 1 FROM users WHERE users.family_id = f.id)").Scan(ctx, &ids)
	return ids, dbErr("list empty families", err)
}
