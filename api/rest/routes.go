package rest

import (
	"github.com/gofiber/fiber/v2"

	"coffer/models"
)

// Routes mounts /api/v1 on v1: method, path, the key scope it needs,
// handler. The OpenAPI document needs no key.
func (h *Handler) Routes(v1 fiber.Router) {
	v1.Use(nameMissing) // a 404 says which record is missing
	v1.Get("/openapi.json", h.openAPIJSON)
	v1.Get("/openapi.yaml", h.openAPIYAML)

	read := h.APIKey(models.ScopeRead)
	write := h.APIKey(models.ScopeReadWrite)

	v1.Get("/transactions", read, h.listTransactions)
	v1.Post("/transactions", write, h.createTransaction)
	v1.Post("/transactions/bulk", write, h.createTransactions)
	v1.Get("/transactions/:id", read, h.showTransaction)
	v1.Patch("/transactions/:id", write, h.updateTransaction)
	v1.Put("/transactions/:id", write, h.updateTransaction)
	v1.Delete("/transactions/:id", write, h.deleteTransaction)
	v1.Patch("/transactions/:id/transfer", write, h.pairTransfer)
	v1.Post("/transactions/:id/split", write, h.createSplit)
	v1.Patch("/transactions/:id/split", write, h.updateSplit)
	v1.Put("/transactions/:id/split", write, h.updateSplit)
	v1.Delete("/transactions/:id/split", write, h.deleteSplit)

	v1.Get("/chats", read, h.listChats)
	v1.Post("/chats", write, h.createChat)
	v1.Get("/chats/:id", read, h.showChat)
	v1.Patch("/chats/:id", write, h.updateChat)
	v1.Put("/chats/:id", write, h.updateChat)
	v1.Delete("/chats/:id", write, h.deleteChat)
	v1.Post("/chats/:id/messages", write, h.createMessage)
	v1.Post("/chats/:id/messages/retry", write, h.retryMessage)
	v1.Post("/chats/:id/proposals/:pid/confirm", write, h.confirmProposal)
	v1.Post("/chats/:id/proposals/:pid/reject", write, h.rejectProposal)
	v1.Get("/chats/:id/stream", read, h.streamChat)
	v1.Patch("/auth/enable_ai", write, h.enableAI)
	v1.Delete("/users/me", write, h.deleteMe)
	v1.Delete("/users/reset", write, h.resetFamily)
	v1.Get("/users/reset/status", read, h.resetStatus)
	v1.Get("/usage", read, h.usage)
	v1.Get("/family_settings", read, h.familySettings)
	v1.Post("/sync", write, h.syncFamily)
	v1.Get("/assistant", read, h.showAssistant)
	v1.Patch("/assistant", write, h.updateAssistant)

	v1.Get("/accounts", read, h.listAccounts)
	v1.Post("/accounts", write, h.createAccount)
	v1.Get("/accounts/:id", read, h.showAccount)
	v1.Patch("/accounts/:id", write, h.updateAccount)
	v1.Put("/accounts/:id", write, h.updateAccount)
	v1.Delete("/accounts/:id", write, h.deleteAccount)
	v1.Get("/accounts/:id/reconciliations", read, h.listReconciliations)

	v1.Get("/valuations", read, h.listValuations)
	v1.Post("/valuations", write, h.createValuation)
	v1.Get("/valuations/:id", read, h.showValuation)
	v1.Patch("/valuations/:id", write, h.updateValuation)
	v1.Put("/valuations/:id", write, h.updateValuation)

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
	v1.Patch("/transfers/:id", write, h.updateTransfer)
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

	v1.Get("/recurring_transactions", read, h.listRecurringTransactions)
	v1.Post("/recurring_transactions", write, h.createRecurringTransaction)
	v1.Get("/recurring_transactions/:id", read, h.showRecurringTransaction)
	v1.Patch("/recurring_transactions/:id", write, h.updateRecurringTransaction)
	v1.Delete("/recurring_transactions/:id", write, h.deleteRecurringTransaction)

	v1.Get("/family_exports", read, h.listFamilyExports) // a family admin only, as every export route
	v1.Post("/family_exports", write, h.createFamilyExport)
	v1.Get("/family_exports/:id", read, h.showFamilyExport)
	v1.Get("/family_exports/:id/download", read, h.downloadFamilyExport)

	v1.Get("/imports", read, h.listImports)
	v1.Post("/imports", write, h.createImport)
	v1.Post("/imports/preflight", write, h.preflightImport)
	v1.Get("/imports/restores/:id", read, h.showRestore)
	v1.Get("/imports/:id", read, h.showImport)
	v1.Get("/imports/:id/rows", read, h.listImportRows)
	v1.Post("/imports/:id/publish", write, h.publishImportNow)
	v1.Post("/imports/:id/revert", write, h.revertImport)
	v1.Get("/rules", read, h.listRules)
	v1.Post("/rules", write, h.createRule)
	v1.Post("/rules/preview", write, h.previewRule)
	v1.Get("/rules/:id", read, h.showRule)
	v1.Patch("/rules/:id", write, h.updateRule)
	v1.Put("/rules/:id", write, h.updateRule)
	v1.Delete("/rules/:id", write, h.deleteRule)
	v1.Post("/rules/:id/apply", write, h.applyRule)
	v1.Get("/rule_runs", read, h.listRuleRuns)
	v1.Get("/rule_runs/:id", read, h.showRuleRun)

	v1.Get("/balance_sheet", read, h.showBalanceSheet)
	v1.Get("/balances", read, h.listBalances)
	v1.Get("/forecast", read, h.showForecast)
	v1.Get("/income_statement", read, h.showIncomeStatement)
	v1.Get("/budgets", read, h.listBudgets)
	v1.Get("/budgets/:id", read, h.showBudget)
	v1.Get("/budget_categories", read, h.listBudgetCategories)
	v1.Get("/budget_categories/:id", read, h.showBudgetCategory)

	v1.Get("/exchange_rates", read, h.listExchangeRates)
	v1.Post("/exchange_rates", write, h.createExchangeRate) // a family admin only
	v1.Get("/exchange_rates/:id", read, h.showExchangeRate)

	// Webhooks: a family admin's, each handler checks the role.
	v1.Get("/webhooks", read, h.listWebhooks)
	v1.Post("/webhooks", write, h.createWebhook)
	v1.Get("/webhooks/:id", read, h.showWebhook)
	v1.Patch("/webhooks/:id", write, h.updateWebhook)
	v1.Delete("/webhooks/:id", write, h.deleteWebhook)
	v1.Get("/webhooks/:id/deliveries", read, h.listWebhookDeliveries)
	v1.Post("/webhooks/:id/deliveries/:delivery_id/redeliver", write, h.redeliverWebhook)

}
