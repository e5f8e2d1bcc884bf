package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/models"
)

// TypeRolesSync re-applies a provider's current group mappings to the
// groups a user had at their last sign-in (the admin's "Sync Roles from
// SSO").
const TypeRolesSync = "roles:sync"

// RolesSyncPayload names the user and the administrator who asked.
type RolesSyncPayload struct {
	UserID  uuid.UUID `json:"user_id"`
	ActorID uuid.UUID `json:"actor_user_id"`
}

// NewRolesSyncTask builds a role sync, unique per user while queued.
func NewRolesSyncTask(userID, actorID uuid.UUID) (*asynq.Task, error) {
	return NewTask(TypeRolesSync, RolesSyncPayload{UserID: userID, ActorID: actorID},
		asynq.TaskID("roles:sync:"+userID.String()), asynq.Queue(QueueDefault), asynq.MaxRetry(3),
		asynq.Timeout(time.Minute))
}

// RolesSync handles TypeRolesSync. It takes the identity used last at an
// enabled provider with mappings and applies that provider's mappings as
// they are now to the claims stored at that login, under the role guards.
// No identity, or no change, writes nothing, so a rerun is harmless.
func (h *Handlers) RolesSync(ctx context.Context, t *asynq.Task) error {
	var p RolesSyncPayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	u, err := h.Store.UserByID(ctx, p.UserID)
	if err != nil {
		return IgnoreNotFound(err)
	}
	ident, err := h.Store.LatestMappedIdentity(ctx, u.FamilyID, u.ID, (*models.SSOProvider).HasMappings)
	if err != nil {
		return IgnoreNotFound(err)
	}
	prov := ident.Provider
	rules, err := models.ParseRoleMapping(models.Str(prov.Rules), prov.Strategy)
	if err != nil {
		return fmt.Errorf("jobs: roles sync: provider %s rules: %v: %w", prov.Name, err, asynq.SkipRetry)
	}
	groups, present := models.GroupsFromClaim(ident.Claims["groups"])
	decision := models.ComputeRole(prov, rules, groups, present, ident.Claims)
	if !decision.Mapped {
		return nil
	}
	_, guard, err := h.Store.ApplyMappedRole(ctx, models.MappedRole{UserID: p.UserID, Target: decision.Role,
		Source: models.RoleSourceSync, ActorID: &p.ActorID, Provider: prov.Name})
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	if err == nil {
		h.hook(ctx, HookRoleApplied)
	}
	if guard != "" {
		h.logger(ctx, t).Info("role kept by a guard", "user_id", p.UserID, "guard", guard)
	}
	return err
}
