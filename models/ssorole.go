package models

import (
	"context"
	"errors"

	"github.com/google/uuid"
)

// Sources of a role change, as role_changed records them.
const (
	RoleSourceManual = "manual"
	RoleSourceLogin  = "login"
	RoleSourceJIT    = "jit"
	RoleSourceSync   = "admin_sync"
)

// Guards that kept a role, as the login record names them.
const (
	GuardLastSuperAdmin  = "last_super_admin"
	GuardLastFamilyAdmin = "last_family_admin"
)

// MappedRole is a role computed from a provider's group mappings, to be
// applied to a user at a login or a sync.
type MappedRole struct {
	UserID   uuid.UUID
	Target   string
	Source   string     // RoleSourceLogin, RoleSourceJIT or RoleSourceSync
	ActorID  *uuid.UUID // the administrator of a sync; else the user
	Provider string
	IP       *string
	UA       *string
}

// ApplyMappedRole sets the user's role to m.Target unless a guard keeps
// it, and records role_changed. It returns the role the user has after
// and the guard that kept it, if any. Unlike a manual change, a guard
// never refuses: the login goes on with the role kept. A family's only
// active admin stays an admin, so a new family's creator keeps
// administering it whatever the mappings say.
func (s *Store) ApplyMappedRole(ctx context.Context, m MappedRole) (role, guard string, err error) {
	err = s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.lockRoles(ctx); err != nil {
			return err
		}
		u, err := tx.UserByID(ctx, m.UserID)
		if err != nil {
			return err
		}
		role = u.Role
		if u.Role == m.Target {
			return nil
		}
		keepsSuper, keepsAdmin := m.Target == RoleSuperAdmin, m.Target != RoleMember
		if err := tx.checkGuards(ctx, u, keepsSuper, keepsAdmin); err != nil {
			var inv *InvalidError
			if !errors.As(err, &inv) {
				return err
			}
			guard = GuardLastFamilyAdmin
			if len(inv.Problems) == 1 && inv.Problems[0] == MsgLastSuperAdmin {
				guard = GuardLastSuperAdmin
			}
			return nil
		}
		if !keepsAdmin && u.Status == UserActive && (u.Role == RoleAdmin || u.Role == RoleSuperAdmin) {
			admins, err := tx.db.NewSelect().Model((*User)(nil)).
				Where("family_id = ?", u.FamilyID).Where("status = ?", UserActive).Where("id <> ?", u.ID).
				Where("role IN (?, ?)", RoleAdmin, RoleSuperAdmin).Count(ctx)
			if err != nil {
				return dbErr("count family admins", err)
			}
			if admins == 0 {
				guard = GuardLastFamilyAdmin
				return nil
			}
		}
		res, err := tx.db.NewUpdate().Model((*User)(nil)).Set("role = ?", m.Target).Set("updated_at = ?", tx.now()).
			Where("id = ?", u.ID).Exec(ctx)
		if err := affectedOne(res, err, "set role"); err != nil {
			return err
		}
		role = m.Target
		actor := m.ActorID
		if actor == nil {
			actor = &u.ID
		}
		provider := m.Provider
		return tx.CreateAuditLog(ctx, &AuditLog{EventType: EventRoleChanged, UserID: actor, Provider: &provider,
			IP: m.IP, UserAgent: m.UA, Metadata: map[string]any{
				"target_user_id": u.ID.String(), "from": u.Role, "to": m.Target, "source": m.Source, "provider": provider,
			}})
	})
	return role, guard, err
}
