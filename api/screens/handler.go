// Package screens is the household app: the dashboard, accounts,
// transactions, categories, merchants and tags, rules, budgets, reports, members,
// and the settings a signed-in member uses (API keys, bank connections).
// Every action is a plain form that posts, then redirects with a flash
// message; sign-in lives in signin, administration in admin.
package screens

import (
	"embed"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/api/web"
	"coffer/jobs"
	"coffer/jobs/mail"
	"coffer/jobs/simplefin"
	"coffer/models"
)

//go:embed templates/*.html
var templates embed.FS

// maxName is the longest name a form takes.
const maxName = 255

// Options is what the household screens need.
type Options struct {
	Store  *models.Store
	Redis  redis.UniversalClient // the aggregator's request budget
	Logger *slog.Logger
	Clock  func() time.Time
	Mail   *mail.Mailer  // invitations
	Queue  *asynq.Client // file imports' jobs, the assistant's replies and rule runs

	// Connections are the SimpleFIN connection actions, shared with the
	// JSON API.
	Connections *simplefin.Actions
	// SimpleFINDailyBudget is the requests per connection and rolling day
	// that the worker allows.
	SimpleFINDailyBudget int
	// Calendar works out a connection's next scheduled sync.
	Calendar *simplefin.SyncCalendar
	// AssistantDailyTokens is each family's daily token budget, shown to
	// its admins beside the usage; 0: no limit.
	AssistantDailyTokens int
	// AssistantOff: no language model is configured, so the assistant
	// screens say so instead of taking questions.
	AssistantOff bool
}

// Handler serves the household screens; handlers are its methods.
type Handler struct {
	site  *web.Site
	pages web.Pages
	store *models.Store
	redis redis.UniversalClient
	log   *slog.Logger
	now   func() time.Time
	mail  *mail.Mailer
	queue *asynq.Client

	connections *simplefin.Actions
	dailyBudget int
	calendar    *simplefin.SyncCalendar

	assistantDailyTokens int
	assistantOff         bool
}

// New parses the screens' templates and returns their handler.
func New(site *web.Site, o Options) (*Handler, error) {
	pages, err := site.Parse(templates, funcs, "home", "api_keys", "connections",
		"accounts", "account", "account_form", "account_delete", "valuation_form", "transactions", "transaction_form", "transaction_delete", "transaction_split", "transfer_form", "transfer_pair", "transfers_suggested",
		"labels", "label_form", "label_delete", "budgets", "reports", "members", "family", "imports", "import", "restore", "chats", "chat",
		"rules", "rule_form", "assistant_usage", "reconcile", "exchange_rates", "webhooks", "webhook", "recurring", "upcoming", "notifications")
	if err != nil {
		return nil, err
	}
	return &Handler{
		site: site, pages: pages, store: o.Store, redis: o.Redis, log: o.Logger, now: o.Clock, mail: o.Mail, queue: o.Queue,
		connections: o.Connections, dailyBudget: o.SimpleFINDailyBudget, calendar: o.Calendar,
		assistantDailyTokens: o.AssistantDailyTokens,
		assistantOff:         o.AssistantOff,
	}, nil
}

// Routes mounts the screens; session wraps each with the session and CSRF,
// and every screen settles the balances its writes change.
func (h *Handler) Routes(app fiber.Router, session func(...fiber.Handler) []fiber.Handler) {
	screen := func(hs ...fiber.Handler) []fiber.Handler {
		return session(append([]fiber.Handler{settleBalances}, hs...)...)
	}
	signedIn := h.site.SignedIn
	app.Get("/", screen(signedIn, h.home)...)

	app.Get("/accounts", screen(signedIn, h.listAccounts)...)
	app.Get("/accounts/new", screen(signedIn, h.newAccount)...)
	app.Post("/accounts", screen(signedIn, h.createAccount)...)
	app.Get("/accounts/:id", screen(signedIn, h.showAccount)...)
	app.Get("/accounts/:id/edit", screen(signedIn, h.editAccount)...)
	app.Post("/accounts/:id", screen(signedIn, h.updateAccount)...)
	app.Post("/accounts/:id/archive", screen(signedIn, h.archiveAccount)...)
	app.Get("/accounts/:id/delete", screen(signedIn, h.confirmDeleteAccount)...)
	app.Post("/accounts/:id/delete", screen(signedIn, h.deleteAccount)...)
	app.Get("/accounts/:id/reconcile", screen(signedIn, h.reconcileScreen)...)
	app.Post("/accounts/:id/reconcile", screen(signedIn, h.startReconcile)...)
	app.Post("/accounts/:id/reconcile/rows", screen(signedIn, h.saveReconcile)...)
	app.Post("/accounts/:id/reconcile/cancel", screen(signedIn, h.cancelReconcile)...)
	app.Post("/accounts/:id/valuations", screen(signedIn, h.createValuation)...)
	app.Get("/valuations/:id/edit", screen(signedIn, h.editValuation)...)
	app.Post("/valuations/:id", screen(signedIn, h.updateValuation)...)
	app.Post("/valuations/:id/delete", screen(signedIn, h.deleteValuation)...)

	app.Get("/transactions", screen(signedIn, h.listTransactions)...)
	app.Get("/transactions.csv", screen(signedIn, h.transactionsCSV)...)
	app.Get("/transactions/new", screen(signedIn, h.newTransaction)...)
	app.Post("/transactions", screen(signedIn, h.createTransaction)...)
	app.Post("/transactions/bulk", screen(signedIn, h.bulkTransactions)...)
	app.Get("/transactions/:id/edit", screen(signedIn, h.editTransaction)...)
	app.Post("/transactions/:id", screen(signedIn, h.updateTransaction)...)
	app.Get("/transactions/:id/split", screen(signedIn, h.splitEditor)...)
	app.Post("/transactions/:id/split", screen(signedIn, h.saveSplit)...)
	app.Post("/transactions/:id/unsplit", screen(signedIn, h.unsplit)...)
	app.Get("/transactions/:id/delete", screen(signedIn, h.confirmDeleteTransaction)...)
	app.Post("/transactions/:id/delete", screen(signedIn, h.deleteTransaction)...)
	app.Post("/transactions/:id/unlock", screen(signedIn, h.unlockTransaction)...)
	app.Get("/transfers/new", screen(signedIn, h.newTransfer)...)
	app.Post("/transfers", screen(signedIn, h.createTransfer)...)
	app.Get("/recurring", screen(signedIn, h.listRecurring)...)
	app.Post("/recurring/:id/status", screen(signedIn, h.setRecurringStatus)...)
	app.Get("/upcoming", screen(signedIn, h.upcoming)...)
	app.Post("/upcoming/calendar", screen(signedIn, h.newCalendarFeed)...)
	app.Post("/upcoming/calendar/delete", screen(signedIn, h.deleteCalendarFeed)...)
	// No session: a calendar app fetches it; the secret address is the key.
	app.Get("/calendar/:file", h.calendarFeed)
	app.Get("/transfers/suggested", screen(signedIn, h.suggestedTransfers)...)
	app.Post("/transfers/suggested/reject", screen(signedIn, h.rejectSuggestedTransfer)...)
	app.Post("/transfers/:id/unpair", screen(signedIn, h.unpairTransfer)...)
	app.Get("/transactions/:id/transfer", screen(signedIn, h.transactionTransfer)...)
	app.Post("/transactions/:id/transfer", screen(signedIn, h.pairTransfer)...)
	for _, k := range []string{"categories", "merchants", "tags"} {
		app.Get("/"+k, screen(signedIn, h.labelScreen(k, h.listLabels))...)
		app.Post("/"+k, screen(signedIn, h.labelScreen(k, h.createLabel))...)
		app.Get("/"+k+"/:id/edit", screen(signedIn, h.labelScreen(k, h.editLabel))...)
		app.Post("/"+k+"/:id", screen(signedIn, h.labelScreen(k, h.updateLabel))...)
		app.Get("/"+k+"/:id/delete", screen(signedIn, h.labelScreen(k, h.confirmDeleteLabel))...)
		app.Post("/"+k+"/:id/delete", screen(signedIn, h.labelScreen(k, h.deleteLabel))...)
		app.Post("/"+k+"/:id/merge", screen(signedIn, h.labelScreen(k, h.mergeLabel))...)
	}

	app.Get("/imports", screen(signedIn, h.listImportsScreen)...)
	app.Post("/imports", screen(signedIn, h.uploadImport)...)
	app.Post("/imports/restore", screen(signedIn, h.restoreScreen)...)
	app.Get("/imports/:id", screen(signedIn, h.showImportScreen)...)
	app.Post("/imports/:id", screen(signedIn, h.configureImport)...)
	app.Post("/imports/:id/publish", screen(signedIn, h.publishImportScreen)...)
	app.Post("/imports/:id/rows/:row_id", screen(signedIn, h.correctImportRow)...)
	app.Post("/imports/:id/revert", screen(signedIn, h.revertImportScreen)...)
	app.Post("/imports/:id/delete", screen(signedIn, h.deleteImportScreen)...)
	app.Get("/chats", screen(signedIn, h.listChats)...)
	app.Post("/chats", screen(signedIn, h.createChat)...)
	app.Post("/chats/settings", screen(signedIn, h.saveAssistantSettings)...)
	app.Get("/chats/:id", screen(signedIn, h.showChat)...)
	app.Get("/chats/:id/stream", screen(signedIn, h.streamChat)...)
	app.Post("/chats/:id/messages", screen(signedIn, h.createChatMessage)...)
	app.Post("/chats/:id/retry", screen(signedIn, h.retryChat)...)
	app.Post("/chats/:id/proposals/:pid/confirm", screen(signedIn, h.confirmProposal)...)
	app.Post("/chats/:id/proposals/:pid/reject", screen(signedIn, h.rejectProposal)...)
	app.Post("/chats/:id/delete", screen(signedIn, h.deleteChat)...)
	app.Get("/rules", screen(signedIn, h.listRules)...)
	app.Get("/rules/new", screen(signedIn, h.newRule)...)
	app.Post("/rules", screen(signedIn, h.createRule)...)
	app.Post("/rules/apply_all", screen(signedIn, h.applyAllRules)...) // before /rules/:id
	app.Get("/rules/:id/edit", screen(signedIn, h.editRule)...)
	app.Post("/rules/:id", screen(signedIn, h.updateRule)...)
	app.Post("/rules/:id/apply", screen(signedIn, h.applyRule)...)
	app.Post("/rules/:id/move", screen(signedIn, h.moveRule)...)
	app.Post("/rules/:id/delete", screen(signedIn, h.deleteRule)...)

	app.Get("/budgets", screen(signedIn, h.showBudget)...)
	app.Post("/budgets", screen(signedIn, h.saveBudget)...)

	app.Get("/reports", screen(signedIn, h.reports)...)
	app.Get("/reports/:report.csv", screen(signedIn, h.reportCSV)...)

	admin := h.site.RequireRole(models.RoleAdmin)
	app.Get("/settings/members", screen(signedIn, h.listMembers)...)
	app.Post("/settings/members/invitations", screen(signedIn, admin, h.invite)...)
	app.Post("/settings/members/invitations/:id/revoke", screen(signedIn, admin, h.revokeInvitation)...)
	app.Get("/settings/family", screen(signedIn, admin, h.familySettings)...)
	app.Post("/settings/family", screen(signedIn, admin, h.saveFamilySettings)...)
	app.Post("/settings/family/second_factor", screen(signedIn, admin, h.saveSecondFactorRule)...)
	app.Post("/settings/family/exports", screen(signedIn, admin, h.createExport)...)
	app.Get("/settings/family/exports/:id/download", screen(signedIn, admin, h.downloadExport)...)
	app.Get("/settings/assistant", screen(signedIn, admin, h.assistantUsage)...)
	app.Get("/settings/exchange_rates", screen(signedIn, h.exchangeRates)...)
	app.Post("/settings/exchange_rates", screen(signedIn, admin, h.setExchangeRate)...)
	app.Get("/settings/webhooks", screen(signedIn, admin, h.webhooks)...)
	app.Post("/settings/webhooks", screen(signedIn, admin, h.createWebhook)...)
	app.Get("/settings/webhooks/:id", screen(signedIn, admin, h.webhook)...)
	app.Post("/settings/webhooks/:id/toggle", screen(signedIn, admin, h.toggleWebhook)...)
	app.Post("/settings/webhooks/:id/delete", screen(signedIn, admin, h.deleteWebhook)...)
	app.Post("/settings/webhooks/:id/deliveries/:delivery/redeliver", screen(signedIn, admin, h.redeliverWebhook)...)

	app.Get("/settings/notifications", screen(signedIn, h.notifications)...)
	app.Post("/settings/notifications", screen(signedIn, h.saveNotifications)...)

	app.Get("/settings/api_keys", screen(signedIn, h.listAPIKeys)...)
	app.Post("/settings/api_keys", screen(signedIn, h.createAPIKey)...)
	app.Post("/settings/api_keys/:id/revoke", screen(signedIn, h.revokeAPIKey)...)

	app.Get("/settings/connections", screen(signedIn, h.connectionsScreen)...)
	app.Post("/settings/connections", screen(signedIn, h.createConnectionScreen)...)
	app.Post("/settings/connections/:id/sync", screen(signedIn, h.syncConnectionScreen)...)
	app.Post("/settings/connections/:id/reconnect", screen(signedIn, h.reconnectScreen)...)
	app.Post("/settings/connections/:id/retry", screen(signedIn, h.retryClaimScreen)...)
	app.Post("/settings/connections/:id/disconnect", screen(signedIn, h.disconnectScreen)...)
	app.Post("/settings/connections/:id/accounts/:account_id", screen(signedIn, h.linkAccountScreen)...)
}

// settleBalances makes the balances a screen's writes change settle before
// the write returns (see jobs.SettleBalances), through the one policy
// every door shares: the person sees what they just did on the next page.
func settleBalances(c *fiber.Ctx) error {
	c.SetUserContext(jobs.SettleBalances(c.UserContext()))
	return c.Next()
}
