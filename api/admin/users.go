package admin

import (
	"crypto/subtle"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/hibiken/asynq"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/jobs"
	"coffer/models"
)

type adminUsersData struct {
	Users                []models.UserRow
	Query, Role, Status  string
	Roles, Statuses      []string
	AllFamilies          bool
	Page, Pages, Total   int
	PrevQuery, NextQuery string
}

func (h *Handler) adminListUsers(c *fiber.Ctx) error {
	actor := web.SessionOf(c).User
	f := models.UserFilter{Query: strings.Clone(strings.TrimSpace(c.Query("q")))}
	if len(f.Query) > 255 || web.HasControl(f.Query) || !utf8.ValidString(f.Query) {
		f.Query = ""
	}
	if r := c.Query("role"); models.ValidRole(r) {
		f.Role = strings.Clone(r)
	}
	if st := c.Query("status"); st == models.UserActive || st == models.UserSuspended {
		f.Status = strings.Clone(st)
	}
	if actor.Role != models.RoleSuperAdmin {
		f.FamilyID = &actor.FamilyID
	}
	p := models.Page{Number: 1, Size: 25}
	if n, err := strconv.Atoi(c.Query("page")); err == nil && n > 0 && n < 1_000_000 {
		p.Number = n
	}
	users, total, err := h.store.Users(c.UserContext(), f, p)
	if err != nil {
		return err
	}
	q := url.Values{"q": {f.Query}, "role": {f.Role}, "status": {f.Status}}
	link := func(n int) string { q.Set("page", strconv.Itoa(n)); return q.Encode() }
	return h.pages.Render(c, fiber.StatusOK, "users", web.Page{Title: "Users", Data: adminUsersData{
		Users: users, Query: f.Query, Role: f.Role, Status: f.Status,
		Roles: []string{models.RoleMember, models.RoleAdmin, models.RoleSuperAdmin}, Statuses: []string{models.UserActive, models.UserSuspended},
		AllFamilies: actor.Role == models.RoleSuperAdmin, Page: p.Number, Pages: p.Pages(total), Total: total,
		PrevQuery: link(p.Number - 1), NextQuery: link(p.Number + 1),
	}})
}

type adminUserData struct {
	Target     *models.User
	Sessions   int
	CanAct     bool
	Roles      []string
	Identities []models.SSOIdentity
	CanSync    bool   // an identity at an enabled provider with mappings
	MappedBy   string // label of that provider
}

// target loads the user an admin acts on: another family's user is a 404
// for a family admin, and a super admin is out of a family admin's reach.
func (h *Handler) target(c *fiber.Ctx) (*models.User, error) {
	actor := web.SessionOf(c).User
	id, err := httperr.PathID(c)
	if err != nil {
		return nil, err
	}
	u, err := h.store.UserByID(c.UserContext(), id)
	if err != nil {
		return nil, err
	}
	if actor.Role != models.RoleSuperAdmin && u.FamilyID != actor.FamilyID {
		return nil, models.ErrNotFound
	}
	return u, nil
}

func (h *Handler) assignableRoles(actor *models.User) []string {
	if actor.Role == models.RoleSuperAdmin {
		return []string{models.RoleMember, models.RoleAdmin, models.RoleSuperAdmin}
	}
	return []string{models.RoleMember, models.RoleAdmin}
}

func (h *Handler) adminShowUser(c *fiber.Ctx) error {
	return h.adminUserPage(c, fiber.StatusOK, "")
}

func (h *Handler) adminUserPage(c *fiber.Ctx, status int, msg string) error {
	actor := web.SessionOf(c).User
	u, err := h.target(c)
	if err != nil {
		return err
	}
	n, err := h.store.CountUserSessions(c.UserContext(), u.FamilyID, u.ID)
	if err != nil {
		return err
	}
	idents, err := h.store.UserIdentities(c.UserContext(), u.FamilyID, u.ID)
	if err != nil {
		return err
	}
	d := adminUserData{Target: u, Sessions: n, Roles: h.assignableRoles(actor), Identities: idents,
		CanAct: u.ID != actor.ID && (actor.Role == models.RoleSuperAdmin || u.Role != models.RoleSuperAdmin)}
	for _, i := range idents {
		if i.Provider.Enabled && i.Provider.HasMappings() && !d.CanSync {
			d.CanSync, d.MappedBy = true, i.Provider.Label
		}
	}
	return h.pages.Render(c, status, "user", web.Page{Title: u.Email, Error: msg, Data: d})
}

// adminSyncRoles queues the re-application of the user's provider's
// current mappings (spec/sso.md §7.4).
func (h *Handler) adminSyncRoles(c *fiber.Ctx) error {
	actor := web.SessionOf(c).User
	u, err := h.target(c)
	if err != nil {
		return err
	}
	if u.Role == models.RoleSuperAdmin && actor.Role != models.RoleSuperAdmin {
		return &httperr.Error{Status: fiber.StatusForbidden, Code: "forbidden", Message: "You are not authorized to access this area."}
	}
	task, err := jobs.NewRolesSyncTask(u.ID, actor.ID)
	if err != nil {
		return err
	}
	_, err = h.queue.EnqueueContext(c.UserContext(), task)
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		// A sync that failed for good keeps its id in the archive; it must
		// not block the next one.
		insp := asynq.NewInspectorFromRedisClient(h.redis)
		info, ierr := insp.GetTaskInfo(jobs.QueueDefault, "roles:sync:"+u.ID.String())
		if ierr == nil && (info.State == asynq.TaskStateArchived || info.State == asynq.TaskStateCompleted) {
			if ierr = insp.DeleteTask(jobs.QueueDefault, info.ID); ierr == nil {
				_, err = h.queue.EnqueueContext(c.UserContext(), task)
			}
		}
	}
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		return h.site.Redirect(c, "/admin/users/"+u.ID.String(), "A sync is already queued.")
	}
	if err != nil {
		return err
	}
	return h.site.Redirect(c, "/admin/users/"+u.ID.String(), "Role sync queued.")
}

// adminAct runs one administrative change after the checks every change
// shares, and answers with the user page.
func (h *Handler) adminAct(c *fiber.Ctx, done string, change func(models.AdminChange, *models.User) error) error {
	actor := web.SessionOf(c).User
	u, err := h.target(c)
	if err != nil {
		return err
	}
	if u.ID == actor.ID {
		return h.adminUserPage(c, fiber.StatusUnprocessableEntity, "You cannot suspend or delete your own account.")
	}
	if u.Role == models.RoleSuperAdmin && actor.Role != models.RoleSuperAdmin {
		return &httperr.Error{Status: fiber.StatusForbidden, Code: "forbidden", Message: "You are not authorized to access this area."}
	}
	ch := models.AdminChange{ActorID: actor.ID, ActorRole: actor.Role, ActorFamilyID: actor.FamilyID, TargetID: u.ID,
		IP: web.NonEmpty(web.ClientIP(c)), UserAgent: web.Clip(c.Get(fiber.HeaderUserAgent), 512)}
	err = change(ch, u)
	var inv *models.InvalidError
	if errors.As(err, &inv) {
		return h.adminUserPage(c, fiber.StatusUnprocessableEntity, strings.Join(inv.Problems, " "))
	}
	if err != nil {
		return err
	}
	if done == "deleted" {
		return h.site.Redirect(c, "/admin/users", "The user was deleted.")
	}
	return h.site.Redirect(c, "/admin/users/"+u.ID.String(), done)
}

func (h *Handler) adminSetRole(c *fiber.Ctx) error {
	actor := web.SessionOf(c).User
	role := c.FormValue("role")
	allowed := false
	for _, r := range h.assignableRoles(actor) {
		allowed = allowed || r == role
	}
	if id, _ := httperr.PathID(c); id == actor.ID || !allowed {
		// Nobody changes their own role; only a super admin grants super admin.
		return &httperr.Error{Status: fiber.StatusForbidden, Code: "forbidden", Message: "You are not authorized to access this area."}
	}
	role = strings.Clone(role)
	return h.adminAct(c, "Role changed.", func(ch models.AdminChange, _ *models.User) error {
		return h.store.SetUserRole(c.UserContext(), ch, role)
	})
}

func (h *Handler) adminSuspend(c *fiber.Ctx) error {
	return h.adminAct(c, "The user was suspended.", func(ch models.AdminChange, _ *models.User) error {
		return h.store.SuspendUser(c.UserContext(), ch)
	})
}

func (h *Handler) adminReactivate(c *fiber.Ctx) error {
	return h.adminAct(c, "The user was reactivated.", func(ch models.AdminChange, _ *models.User) error {
		return h.store.ReactivateUser(c.UserContext(), ch)
	})
}

func (h *Handler) adminDelete(c *fiber.Ctx) error {
	typed := strings.ToLower(strings.TrimSpace(c.FormValue("confirm_email")))
	return h.adminAct(c, "deleted", func(ch models.AdminChange, u *models.User) error {
		if subtle.ConstantTimeCompare([]byte(typed), []byte(strings.ToLower(u.Email))) != 1 {
			return models.Invalid("The email did not match; nothing was deleted.")
		}
		if err := h.store.DeleteUser(c.UserContext(), ch); err != nil {
			return err
		}
		// The family's data goes in the background once nobody is left.
		task, err := jobs.NewFamilyPurgeTask(u.FamilyID)
		if err != nil {
			return err
		}
		if _, err := h.queue.EnqueueContext(c.UserContext(), task); err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
			h.log.Error("family purge not queued; the next requeue finds it", "family_id", u.FamilyID, "err", err)
		}
		return nil
	})
}
