package models

import (
	"context"

	"github.com/google/uuid"
)

// Sources of a role change, as role_changed records them.
const (
	RoleSourceManual = "manual"
	RoleSourceLogin  = "login"
	RoleSourceJIT    = "jit"
	RoleSourceSync   = "admin_sync"
	// RoleSourceInvitation is a join by invitation, which keeps the invited
	// role: the provider's mappings do not apply at that first sign-in.
	RoleSourceInvitation = "invitation"
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

// ApplyMappedRole moves the user to m.Target as far as the guards allow,
// and records role_changed when the role changes. It returns the role the
// user has after and the guard that held it up, if any. Unlike a manual
// change, a guard never refuses: the login goes on. The last active super
// admin stays one; a family's only active admin stays at least an admin
// (so a new family's creator keeps administering it whatever the mappings
// say), and a super admin who is both drops only to admin.
func (s *Store) ApplyMappedRole(ctx context.Context, m MappedRole) (role, guard string, err error) {
	err = s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.lockRoles(ctx); err != nil {
			return err
		}
		u, err := tx.UserByID(ctx, m.UserID)
		if err != nil {
			return err
		}
		next := m.Target
		if u.Status == UserActive {
			if u.Role == RoleSuperAdmin && next != RoleSuperAdmin {
				others, err := tx.db.NewSelect().Model((*User)(nil)).
					Where("role = ?", RoleSuperAdmin).Where("status = ?", UserActive).Where("id <> ?", u.ID).Count(ctx)
				if err != nil {
					return dbErr("count super admins", err)
				}
				if others == 0 {
					next, guard = RoleSuperAdmin, GuardLastSuperAdmin
				}
			}
			if next == RoleMember && u.Role != RoleMember {
				admins, err := tx.db.NewSelect().Model((*User)(nil)).
					Where("family_id = ?", u.FamilyID).Where("status = ?", UserActive).Where("id <> ?", u.ID).
					Where("role IN (?, ?)", RoleAdmin, RoleSuperAdmin).Count(ctx)
				if err != nil {
					return dbErr("count family admins", err)
				}
				if admins == 0 {
					next, guard = RoleAdmin, GuardLastFamilyAdmin
				}
			}
		}
		role = u.Role
		if next == u.Role {
			return nil
		}
		res, err := tx.db.NewUpdate().Model((*User)(nil)).Set("role = ?", next).Set("updated_at = ?", tx.now()).
			Where("id = ?", u.ID).Exec(ctx)
		if err := affectedOne(res, err, "set role"); err != nil {
			return err
		}
		role = next
		tx.authChange(ctx)
		actor := m.ActorID
		if actor == nil {
			actor = &u.ID
		}
		provider := m.Provider
		return tx.CreateAuditLog(ctx, &AuditLog{EventType: EventRoleChanged, UserID: actor, Provider: &provider,
			IP: m.IP, UserAgent: m.UA, Metadata: map[string]any{
				"target_user_id": u.ID.String(), "from": u.Role, "to": next, "source": m.Source, "provider": provider,
			}})
	})
	return role, guard, err
}
