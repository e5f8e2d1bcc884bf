package rest

import (
	"errors"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/hibiken/asynq"

	"coffer/api/httperr"
	"coffer/jobs"
	"coffer/models"
)

// The app's account controls, in the reference's shapes (its
// users_controller.rb, usage_controller.rb, family_settings and sync
// controllers): the mobile app's settings call them.

// adminOf returns the credential's user when a family admin, else the
// reference's 403.
func (h *Handler) adminOf(c *fiber.Ctx) (*models.User, error) {
	k := KeyOf(c)
	u, err := h.store.User(c.UserContext(), k.FamilyID, k.UserID)
	if err != nil {
		return nil, err
	}
	if u.Role != models.RoleAdmin && u.Role != models.RoleSuperAdmin {
		return nil, httperr.Forbidden("You are not authorized to perform this action")
	}
	return u, nil
}

// deleteMe is DELETE /api/v1/users/me: the credential's user is deleted
// under the same guards as the admin screens (the last admin of a family
// with other members, the last super admin: 422). A family left with
// nobody is purged in the background.
func (h *Handler) deleteMe(c *fiber.Ctx) error {
	ctx, k := c.UserContext(), KeyOf(c)
	u, err := h.store.User(ctx, k.FamilyID, k.UserID)
	if err != nil {
		return err
	}
	ip, ua := c.IP(), string(c.Request().Header.UserAgent())
	err = h.store.DeleteUser(ctx, models.AdminChange{ActorID: u.ID, ActorRole: u.Role, ActorFamilyID: u.FamilyID,
		TargetID: u.ID, IP: &ip, UserAgent: &ua})
	var inv *models.InvalidError
	if errors.As(err, &inv) {
		return &httperr.Error{Status: fiber.StatusUnprocessableEntity, Code: "validation_failed",
			Message: "Failed to delete account", Errors: inv.Problems}
	}
	if err != nil {
		return err
	}
	task, err := jobs.NewFamilyPurgeTask(u.FamilyID)
	if err != nil {
		return err
	}
	if _, err := h.queue.EnqueueContext(ctx, task); err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
		h.log.Error("family purge not queued; the next requeue finds it", "family_id", u.FamilyID, "err", err)
	}
	return c.JSON(fiber.Map{"message": "Account has been deleted"})
}

// resetFamily is DELETE /api/v1/users/reset: a family admin queues the
// removal of the family's financial data; its people stay.
func (h *Handler) resetFamily(c *fiber.Ctx) error {
	u, err := h.adminOf(c)
	if err != nil {
		return err
	}
	task, err := jobs.NewFamilyResetTask(u.FamilyID)
	if err != nil {
		return err
	}
	info, err := h.queue.EnqueueContext(c.UserContext(), task)
	jobID := "family:reset:" + u.FamilyID.String()
	switch {
	case errors.Is(err, asynq.ErrTaskIDConflict): // one is queued already: this request joins it
	case err != nil:
		h.log.Error("family reset not queued", "family_id", u.FamilyID, "err", err)
		return httperr.New(fiber.StatusInternalServerError, "reset_enqueue_failed", "Account reset could not be queued")
	default:
		jobID = info.ID
	}
	return c.JSON(fiber.Map{"message": "Account reset has been initiated", "status": "queued", "job_id": jobID,
		"family_id": u.FamilyID, "status_url": "/api/v1/users/reset/status"})
}

// resetStatus is GET /api/v1/users/reset/status: what a reset still has
// to remove.
func (h *Handler) resetStatus(c *fiber.Ctx) error {
	u, err := h.adminOf(c)
	if err != nil {
		return err
	}
	counts, err := h.store.FamilyResetCounts(c.UserContext(), u.FamilyID)
	if err != nil {
		return err
	}
	status := "data_remaining"
	if counts.Total() == 0 {
		status = "complete"
	}
	return c.JSON(fiber.Map{"status": status, "family_id": u.FamilyID, "reset_complete": counts.Total() == 0, "counts": counts})
}

// usage is GET /api/v1/usage: the credential, its scopes and what it has
// used of its hourly limit.
func (h *Handler) usage(c *fiber.Ctx) error {
	k := KeyOf(c)
	out := fiber.Map{}
	if k.OAuth {
		out["authentication_method"] = "oauth"
		out["message"] = "Detailed usage tracking is available for API key authentication"
	} else {
		out["authentication_method"] = "api_key"
		out["api_key"] = fiber.Map{"name": k.Name, "scopes": []string{k.Scope}, "last_used_at": optTimestamp(k.LastUsedAt),
			"created_at": k.CreatedAt.UTC().Format(time.RFC3339)}
	}
	// The counts this request's own check set (see applyLimit).
	if limit, err := strconv.Atoi(string(c.Response().Header.Peek("X-RateLimit-Limit"))); err == nil {
		remaining, _ := strconv.Atoi(string(c.Response().Header.Peek("X-RateLimit-Remaining")))
		reset, _ := strconv.Atoi(string(c.Response().Header.Peek("X-RateLimit-Reset")))
		out["rate_limit"] = fiber.Map{"limit": limit, "current_count": limit - remaining, "remaining": remaining, "reset_in": reset}
	} else {
		out["rate_limit"] = nil
	}
	return c.JSON(out)
}

// familySettings is GET /api/v1/family_settings: the family's settings in
// the reference's snapshot shape. What coffer does not keep answers with
// the value coffer works by (one calendar month from the 1st, UTC, every
// account shared within the family).
func (h *Handler) familySettings(c *fiber.Ctx) error {
	ctx, k := c.UserContext(), KeyOf(c)
	f, err := h.store.Family(ctx, k.FamilyID)
	if err != nil {
		return err
	}
	currencies, err := h.store.FamilyCurrencies(ctx, k.FamilyID)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"id": f.ID, "name": f.Name, "currency": f.Currency, "locale": "en", "date_format": "%Y-%m-%d",
		"number_format": f.Numbers(), "country": nil, "timezone": "UTC", "month_start_day": 1, "moniker": "Family",
		"default_account_sharing": "shared", "custom_enabled_currencies": false, "enabled_currencies": currencies,
		"created_at": f.CreatedAt.UTC().Format(time.RFC3339), "updated_at": f.UpdatedAt.UTC().Format(time.RFC3339)})
}

// syncFamily is POST /api/v1/sync: a sync of every bank connection of the
// family that can sync, each as Sync now makes it (joining one already
// queued), answered in the reference's shape with the syncs started.
func (h *Handler) syncFamily(c *fiber.Ctx) error {
	ctx, k := c.UserContext(), KeyOf(c)
	conns, _, err := h.store.Connections(ctx, k.FamilyID, models.Page{Number: 1, Size: 100})
	if err != nil {
		return err
	}
	syncs := []syncJSON{}
	for _, conn := range conns {
		start, err := h.connections.StartSync(ctx, k.FamilyID, conn.ID, false)
		if err != nil {
			continue // disconnected, or waiting for a new token: nothing to sync
		}
		syncs = append(syncs, renderSync(start.Sync))
	}
	out := fiber.Map{"id": nil, "status": "pending", "syncable_type": "Family", "syncable_id": k.FamilyID,
		"started_at": nil, "completed_at": nil, "window_start_date": nil, "window_end_date": nil,
		"message": "Sync has been queued for " + strconv.Itoa(len(syncs)) + " bank connections", "syncs": syncs}
	if len(syncs) > 0 {
		out["id"] = syncs[0].ID
	}
	return c.Status(fiber.StatusAccepted).JSON(out)
}
