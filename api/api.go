// Package api is the HTTP side of coffer: the fiber app, every route, the
// middleware (request ids, recovery, API keys, rate limits) and the JSON
// shapes of /api/v1. It talks to the database only through models.Store
// and to the workers only by enqueuing jobs.
package api

import (
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/models"
	"coffer/sso"
)

// bodyLimit is the largest request body accepted (413 beyond).
const bodyLimit = 1 << 20

// Options is what the API needs from main.
type Options struct {
	Store  *models.Store
	Redis  redis.UniversalClient // rate-limit counters, shared by every web process
	Queue  *asynq.Client         // background jobs
	Logger *slog.Logger

	// APIRateLimitPerHour is the number of requests one API key may make per
	// hour; 0 turns the limit off.
	APIRateLimitPerHour int
	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time

	Web WebOptions
	// Dashboard is the job queue dashboard (asynqmon), served at /admin/jobs
	// to super admins; nil: none.
	Dashboard http.Handler
	Mail      MailOptions
	// SimpleFINAllowHTTP accepts http claim URLs (tests only).
	SimpleFINAllowHTTP bool
	// SimpleFINDailyBudget is the requests per connection and rolling day
	// that the worker allows; 0 means simplefin.DefaultDailyBudget.
	SimpleFINDailyBudget int
	// SimpleFINSyncCron, SimpleFINSyncLocation and SimpleFINSyncJitter are
	// the scheduler's daily sync settings, from which a connection's
	// next_sync_at is worked out; an empty cron means syncs are never
	// scheduled, a nil location UTC, a zero jitter its default.
	SimpleFINSyncCron     string
	SimpleFINSyncLocation *time.Location
	SimpleFINSyncJitter   time.Duration
	SSO                   SSOOptions
}

// SSOOptions configure single sign-on.
type SSOOptions struct {
	Registry       *sso.Registry
	StateKey       []byte   // 32 bytes: seals the sso_state cookie
	JITMode        string   // JITCreateAndLink or JITLinkOnly
	AllowedDomains []string // ALLOWED_OIDC_DOMAINS, lowercased, without @
	// ProvidersFile is the provider file of yaml mode, whose providers the
	// screens show read-only; "" in db mode.
	ProvidersFile string
}

// WebOptions configure the browser screens and sign-in.
type WebOptions struct {
	Secret             []byte // signs CSRF tokens; at least 32 bytes
	Origin             string // scheme://host[:port] of APP_URL: forms must come from it
	SecureCookies      bool   // APP_URL is https
	SessionIdle        time.Duration
	SessionMaxAge      time.Duration
	LocalLogin         bool // AUTH_LOCAL_LOGIN_ENABLED
	AdminOverride      bool // AUTH_LOCAL_ADMIN_OVERRIDE_ENABLED
	Argon2             models.Argon2Params
	MaxFailuresAccount int
	MaxFailuresIP      int
	LockoutWindow      time.Duration
	// TrustedProxies are the addresses (IPs or CIDRs) whose X-Forwarded-For
	// names the client; empty: the socket peer is the client.
	TrustedProxies []string
	// AdminRateLimit is the requests per minute one IP may make under
	// /admin/; 0 turns the limit off.
	AdminRateLimit int
}

// Handler holds what every handler needs; handlers are its methods.
type Handler struct {
	store     *models.Store
	redis     redis.UniversalClient
	queue     *asynq.Client
	balances  *jobs.Balances
	log       *slog.Logger
	rateLimit int
	now       func() time.Time
	web       WebOptions
	dashboard http.Handler
	mail      *mailer
	sso       SSOOptions

	simplefinHTTP bool
	dailyBudget   int
	calendar      *simplefin.SyncCalendar
	pages         map[string]*template.Template
	dummyOnce     sync.Once
	dummyHash     string // checked for unknown emails, so they take as long as known ones; made on first use
}

// New builds the fiber app with every route.
func New(o Options) (*fiber.App, error) {
	h := &Handler{
		store:     o.Store,
		redis:     o.Redis,
		queue:     o.Queue,
		balances:  jobs.NewBalances(o.Queue),
		log:       o.Logger,
		rateLimit: o.APIRateLimitPerHour,
		now:       o.Clock,
		web:       o.Web,
		dashboard: o.Dashboard,
		sso:       o.SSO,

		simplefinHTTP: o.SimpleFINAllowHTTP,
		dailyBudget:   o.SimpleFINDailyBudget,
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.dailyBudget <= 0 {
		h.dailyBudget = simplefin.DefaultDailyBudget
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	h.mail = &mailer{o: o.Mail, log: h.log}
	if h.sso.Registry == nil || len(h.sso.StateKey) != 32 {
		return nil, errors.New("api: SSO.Registry and a 32-byte SSO.StateKey are required")
	}
	if len(h.web.Secret) < 32 {
		return nil, errors.New("api: Web.Secret must be at least 32 bytes")
	}
	var err error
	if h.calendar, err = simplefin.NewSyncCalendar(o.SimpleFINSyncCron, o.SimpleFINSyncLocation, o.SimpleFINSyncJitter); err != nil {
		return nil, err
	}
	if h.pages, err = parseTemplates(); err != nil {
		return nil, fmt.Errorf("api: templates: %w", err)
	}
	app := fiber.New(fiber.Config{
		AppName:               "coffer",
		BodyLimit:             bodyLimit,
		ReadBufferSize:        16 << 10, // room for long headers before a 431
		ErrorHandler:          h.handleError,
		DisableStartupMessage: true,
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           120 * time.Second,
		// Lockouts and rate limits count per client address; only a trusted
		// proxy may say which address that is.
		ProxyHeader:             fiber.HeaderXForwardedFor,
		EnableTrustedProxyCheck: true,
		TrustedProxies:          o.Web.TrustedProxies,
		EnableIPValidation:      true,
	})
	app.Use(h.requestID, jsonCharset)
	app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: h.logPanic}))
	h.routes(app)
	return app, nil
}
