package api

import "github.com/gofiber/fiber/v2"

// routes is the whole surface of the service. Each audience's routes file
// lists its own routes, one line each: method, path, guards, handler.
func (s *server) routes(app *fiber.App) {
	app.Get("/healthz", s.healthz)
	app.Get("/readyz", s.readyz)
	app.Get("/api/docs", s.rest.Docs)
	// The screens' script, under a hashed name and cached for a year
	// (web/static.go).
	app.Get("/static/:name", s.site.Static)

	// Browser screens: on APP_URL's host, the session when there is one,
	// CSRF on every form.
	screen := func(hs ...fiber.Handler) []fiber.Handler {
		return append([]fiber.Handler{s.site.Canonical, s.site.LoadSession, s.site.CSRF}, hs...)
	}
	// /, /settings/api_keys, /settings/connections (screens/handler.go)
	s.screens.Routes(app, screen)
	// /sessions, /registrations, /password, /settings/security, single
	// sign-on under /auth, the OAuth authorization server under /oauth
	// and /settings/authorized_apps (signin/handler.go)
	s.signin.Routes(app, screen)
	// /admin: users, sso_providers, sso_audit_logs, jobs (admin/handler.go)
	s.admin.Routes(app)
	// The mobile app's sign-in, /api/v1/auth/login, /signup, /refresh
	// (signin/mobile.go), before the routes that need a key.
	s.signin.AppRoutes(app.Group("/api/v1/auth"))
	// /api/v1 with an API key or an OAuth access token of the scope each
	// route needs (rest/routes.go)
	s.rest.Routes(app.Group("/api/v1"))
	// /mcp, the MCP server, with the same tokens and keys; a refusal names
	// the resource's metadata (mcp/handler.go)
	s.mcp.Routes(app, s.rest.Resource(s.signin.ResourceMetadataURL()))
	// Anything else: 404 route_not_found naming the route (middleware.go).
	app.Use(noRoute)
}
