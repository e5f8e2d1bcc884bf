// Package admin is the administration screens: users and their roles,
// single sign-on providers, the audit log and the job dashboard. Every
// route needs an admin or super admin session; changes and exports are
// rate-limited per IP.
package admin

import (
	"embed"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
	"coffer/sso"
)

//go:embed templates/*.html
var templates embed.FS

// Options is what the administration screens need.
type Options struct {
	Store  *models.Store
	Redis  redis.UniversalClient
	Queue  *asynq.Client
	Logger *slog.Logger
	Clock  func() time.Time

	Registry *sso.Registry
	// ProvidersFile is the provider file of yaml mode, whose providers the
	// screens show read-only; "" in db mode.
	ProvidersFile string
	// Dashboard is the job queue dashboard (asynqmon), served at /admin/jobs
	// to super admins; nil: none.
	Dashboard http.Handler
	// RateLimit is the changes (any method but GET and HEAD) and exports
	// one IP may make per minute under /admin/; page views are not
	// counted. 0 turns the limit off.
	RateLimit int
}

// Handler serves the administration screens; handlers are its methods.
type Handler struct {
	site          *web.Site
	pages         web.Pages
	store         *models.Store
	redis         redis.UniversalClient
	queue         *asynq.Client
	log           *slog.Logger
	now           func() time.Time
	registry      *sso.Registry
	providersFile string
	dashboard     http.Handler
	limit         int
}

// New parses the administration templates and returns their handler.
func New(site *web.Site, o Options) (*Handler, error) {
	funcs := map[string]any{
		"field": providerField,
		"groups": func(claims map[string]any) string {
			groups, ok := models.GroupsFromClaim(claims["groups"])
			if !ok {
				return "none recorded"
			}
			return strings.Join(groups, ", ")
		},
	}
	pages, err := site.Parse(templates, funcs, "users", "user", "audit",
		"providers", "provider_form", "provider_test", "provider_delete")
	if err != nil {
		return nil, err
	}
	return &Handler{
		site: site, pages: pages, store: o.Store, redis: o.Redis, queue: o.Queue, log: o.Logger, now: o.Clock,
		registry: o.Registry, providersFile: o.ProvidersFile, dashboard: o.Dashboard, limit: o.RateLimit,
	}, nil
}

// Routes mounts /admin: changes rate-limited per IP, then by role.
func (h *Handler) Routes(app fiber.Router) {
	admin := func(hs ...fiber.Handler) []fiber.Handler {
		return append([]fiber.Handler{h.site.Canonical, h.rateLimit, h.site.LoadSession, h.site.CSRF, h.site.RequireRole(models.RoleAdmin)}, hs...)
	}
	app.Get("/admin/users", admin(h.adminListUsers)...)
	app.Get("/admin/users/:id", admin(h.adminShowUser)...)
	app.Post("/admin/users/:id/role", admin(h.adminSetRole)...)
	app.Post("/admin/users/:id/suspend", admin(h.adminSuspend)...)
	app.Post("/admin/users/:id/reactivate", admin(h.adminReactivate)...)
	app.Post("/admin/users/:id/delete", admin(h.adminDelete)...)
	app.Post("/admin/users/:id/sync_roles", admin(h.adminSyncRoles)...)
	super := func(hs ...fiber.Handler) []fiber.Handler {
		return admin(append([]fiber.Handler{h.site.RequireRole(models.RoleSuperAdmin)}, hs...)...)
	}
	app.Get("/admin/sso_providers", super(h.adminListProviders)...)
	app.Get("/admin/sso_providers/new", super(h.adminNewProvider)...)
	app.Post("/admin/sso_providers", super(h.adminCreateProvider)...)
	app.Get("/admin/sso_providers/:id/edit", super(h.adminEditProvider)...)
	app.Post("/admin/sso_providers/:id", super(h.adminUpdateProvider)...)
	app.Post("/admin/sso_providers/:id/toggle", super(h.adminToggleProvider)...)
	app.Post("/admin/sso_providers/:id/test", super(h.adminTestProvider)...)
	app.Get("/admin/sso_providers/:id/delete", super(h.adminConfirmDeleteProvider)...)
	app.Post("/admin/sso_providers/:id/delete", super(h.adminDeleteProvider)...)
	app.Get("/admin/sso_audit_logs", admin(h.site.RequireRole(models.RoleSuperAdmin), h.adminAuditLogs)...)
	app.Get("/admin/sso_audit_logs/export.csv", admin(h.site.RequireRole(models.RoleSuperAdmin), h.countRequest, h.adminAuditExport)...)

	// The job dashboard polls its own API every few seconds, so it is not
	// under the per-IP admin limit; its writes must come from our origin.
	if h.dashboard != nil {
		app.Use("/admin/jobs", h.site.LoadSession, h.site.RequireRole(models.RoleSuperAdmin), h.site.SameOrigin, adaptor.HTTPHandler(h.dashboard))
	}

}

// rateLimit counts every request under /admin/ that changes something
// against the per-IP limit; page views pass uncounted, so that an admin
// clicking through the screens is never stopped. Reads that cost as much
// as a change (an export) add countRequest at their route.
func (h *Handler) rateLimit(c *fiber.Ctx) error {
	if c.Method() == fiber.MethodGet || c.Method() == fiber.MethodHead {
		return c.Next()
	}
	return h.countRequest(c)
}

// countRequest allows RateLimit counted requests a minute per client IP,
// counted in Redis so every web process shares the count. With Redis down
// it lets requests through: the screens behind it still need a session
// and a role.
func (h *Handler) countRequest(c *fiber.Ctx) error {
	if h.limit <= 0 {
		return c.Next()
	}
	now := h.now()
	key := fmt.Sprintf("rl:admin:%s:%d", web.ClientIP(c), now.Unix()/60)
	n, err := web.CountWindow(c.UserContext(), h.redis, key, time.Minute)
	if err != nil {
		h.log.Warn("admin rate limit unavailable", "error", err)
		return c.Next()
	}
	if int(n) > h.limit {
		wait := 60 - int(now.Unix()%60)
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(wait))
		return &httperr.Error{Status: fiber.StatusTooManyRequests, Code: "rate_limited",
			Message: fmt.Sprintf("Too many requests. Try again in %d seconds.", wait)}
	}
	return c.Next()
}
