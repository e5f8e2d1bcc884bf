package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

	"coffer/models"
)

// routes is the whole surface of the service: method, path, guards, handler.
func (h *Handler) routes(app *fiber.App) {
	app.Get("/healthz", h.healthz)
	app.Get("/readyz", h.readyz)
	app.Get("/api/docs", h.apiDocs)

	// Browser screens: the session when there is one, CSRF on every form.
	screen := func(hs ...fiber.Handler) []fiber.Handler {
		return append([]fiber.Handler{h.loadSession, h.csrf}, hs...)
	}
	app.Get("/", screen(h.signedIn, h.home)...)
	app.Get("/sessions/new", screen(h.newSession)...)
	app.Post("/sessions", screen(h.createSession)...)
	app.Post("/sessions/logout", screen(h.deleteSession)...)
	app.Delete("/sessions/logout", screen(h.deleteSession)...)
	app.Get("/registrations/new", screen(h.localOff, h.newRegistration)...)
	app.Post("/registrations", screen(h.localOff, h.createRegistration)...)
	app.Get("/password/forgot", screen(h.localOff, h.forgotPassword)...)
	app.Post("/password/forgot", screen(h.localOff, h.sendPasswordReset)...)
	app.Get("/password/reset", screen(h.localOff, h.resetPasswordForm)...)
	app.Post("/password/reset", screen(h.localOff, h.resetPassword)...)
	app.Get("/settings/security", screen(h.signedIn, h.security)...)
	app.Post("/settings/security/password", screen(h.signedIn, h.localOff, h.changePassword)...)
	app.Get("/settings/api_keys", screen(h.signedIn, h.listAPIKeys)...)
	app.Post("/settings/api_keys", screen(h.signedIn, h.createAPIKey)...)
	app.Post("/settings/api_keys/:id/revoke", screen(h.signedIn, h.revokeAPIKey)...)
	app.Post("/settings/security/connect/:name", screen(h.signedIn, h.connectProvider)...)
	app.Post("/settings/security/identities/:id/unlink", screen(h.signedIn, h.unlinkIdentity)...)

	// Single sign-on. The ACS is a cross-site POST from the identity
	// provider: it carries no CSRF token and is protected by the signature,
	// InResponseTo and the saml_bind cookie instead.
	app.Get("/auth/saml/:id/metadata", h.samlMetadata)
	app.Post("/auth/saml/:id/callback", h.loadSession, h.csrfExempt, h.samlACS)
	app.Get("/auth/saml/:id/logout", screen(h.samlLogout)...)
	app.Get("/auth/link", screen(h.linkPage)...)
	app.Post("/auth/link", screen(h.confirmLink)...)
	app.Get("/auth/:name", screen(h.startSSO)...)
	app.Get("/auth/:name/callback", screen(h.ssoCallback)...)

	// Administration: rate-limited per IP, then by role.
	admin := func(hs ...fiber.Handler) []fiber.Handler {
		return append([]fiber.Handler{h.adminRateLimit, h.loadSession, h.csrf, h.requireRole(models.RoleAdmin)}, hs...)
	}
	app.Get("/admin/users", admin(h.adminListUsers)...)
	app.Get("/admin/users/:id", admin(h.adminShowUser)...)
	app.Post("/admin/users/:id/role", admin(h.adminSetRole)...)
	app.Post("/admin/users/:id/suspend", admin(h.adminSuspend)...)
	app.Post("/admin/users/:id/reactivate", admin(h.adminReactivate)...)
	app.Post("/admin/users/:id/delete", admin(h.adminDelete)...)
	app.Post("/admin/users/:id/sync_roles", admin(h.adminSyncRoles)...)
	super := func(hs ...fiber.Handler) []fiber.Handler {
		return admin(append([]fiber.Handler{h.requireRole(models.RoleSuperAdmin)}, hs...)...)
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
	app.Get("/admin/sso_audit_logs", admin(h.requireRole(models.RoleSuperAdmin), h.adminAuditLogs)...)
	app.Get("/admin/sso_audit_logs/export.csv", admin(h.requireRole(models.RoleSuperAdmin), h.adminAuditExport)...)

	// The job dashboard polls its own API every few seconds, so it is not
	// under the per-IP admin limit; its writes must come from our origin.
	if h.dashboard != nil {
		app.Use("/admin/jobs", h.loadSession, h.requireRole(models.RoleSuperAdmin), h.sameOrigin, adaptor.HTTPHandler(h.dashboard))
	}

	v1 := app.Group("/api/v1")
	v1.Get("/openapi.json", h.openAPIJSON)
	v1.Get("/openapi.yaml", h.openAPIYAML)

	read := h.apiKey(models.ScopeRead)
	write := h.apiKey(models.ScopeReadWrite)

	v1.Get("/transactions", read, h.listTransactions)
	v1.Post("/transactions", write, h.createTransaction)
	v1.Get("/transactions/:id", read, h.showTransaction)
	v1.Patch("/transactions/:id", write, h.updateTransaction)
	v1.Put("/transactions/:id", write, h.updateTransaction)
	v1.Delete("/transactions/:id", write, h.deleteTransaction)

	v1.Get("/chats", read, h.listChats)
	v1.Post("/chats", write, h.createChat)
	v1.Get("/chats/:id", read, h.showChat)
	v1.Patch("/chats/:id", write, h.updateChat)
	v1.Put("/chats/:id", write, h.updateChat)
	v1.Delete("/chats/:id", write, h.deleteChat)
	v1.Post("/chats/:id/messages", write, h.createMessage)

	v1.Get("/accounts", read, h.listAccounts)
	v1.Post("/accounts", write, h.createAccount)
	v1.Get("/accounts/:id", read, h.showAccount)
	v1.Patch("/accounts/:id", write, h.updateAccount)
	v1.Put("/accounts/:id", write, h.updateAccount)
	v1.Delete("/accounts/:id", write, h.deleteAccount)

	v1.Get("/categories", read, h.listCategories)
	v1.Post("/categories", write, h.createCategory)
	v1.Get("/categories/:id", read, h.showCategory)
	v1.Patch("/categories/:id", write, h.updateCategory)
	v1.Put("/categories/:id", write, h.updateCategory)
	v1.Delete("/categories/:id", write, h.deleteCategory)

	v1.Get("/merchants", read, h.listMerchants)
	v1.Post("/merchants", write, h.createMerchant)
	v1.Get("/merchants/:id", read, h.showMerchant)
	v1.Patch("/merchants/:id", write, h.updateMerchant)
	v1.Put("/merchants/:id", write, h.updateMerchant)
	v1.Delete("/merchants/:id", write, h.deleteMerchant)

	v1.Get("/tags", read, h.listTags)
	v1.Post("/tags", write, h.createTag)
	v1.Get("/tags/:id", read, h.showTag)
	v1.Patch("/tags/:id", write, h.updateTag)
	v1.Put("/tags/:id", write, h.updateTag)
	v1.Delete("/tags/:id", write, h.deleteTag)

	v1.Get("/transfers", read, h.listTransfers)
	v1.Post("/transfers", write, h.createTransfer)
	v1.Get("/transfers/:id", read, h.showTransfer)
	v1.Delete("/transfers/:id", write, h.deleteTransfer)

	v1.Get("/provider_connections", read, h.listConnections)
	v1.Post("/provider_connections", write, h.createConnection)
	v1.Get("/provider_connections/:id", read, h.showConnection)
	v1.Delete("/provider_connections/:id", write, h.deleteConnection)
	v1.Patch("/provider_connections/:id", write, h.updateConnection)
	v1.Post("/provider_connections/:id/sync", write, h.syncConnection)
	v1.Post("/provider_connections/:id/retry_claim", write, h.retryClaim)
	v1.Patch("/provider_connections/:id/accounts/:account_id", write, h.updateProviderAccount)
	v1.Get("/syncs", read, h.listSyncs)
	v1.Get("/syncs/latest", read, h.latestSync)
	v1.Get("/syncs/:id", read, h.showSync)

	// The bank connections screen.
	app.Get("/settings/connections", screen(h.signedIn, h.connectionsScreen)...)
	app.Post("/settings/connections", screen(h.signedIn, h.createConnectionScreen)...)
	app.Post("/settings/connections/:id/sync", screen(h.signedIn, h.syncConnectionScreen)...)
	app.Post("/settings/connections/:id/reconnect", screen(h.signedIn, h.reconnectScreen)...)
	app.Post("/settings/connections/:id/retry", screen(h.signedIn, h.retryClaimScreen)...)
	app.Post("/settings/connections/:id/disconnect", screen(h.signedIn, h.disconnectScreen)...)
	app.Post("/settings/connections/:id/accounts/:account_id", screen(h.signedIn, h.linkAccountScreen)...)
}
