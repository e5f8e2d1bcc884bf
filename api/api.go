// Package api is the HTTP side of coffer: the fiber app, the middleware
// every request passes (request ids, recovery), the one error handler, and
// routes.go, which mounts each audience's routes: the JSON API (rest), the
// household screens (screens), sign-in (signin) and administration
// (admin). It talks to the database only through models.Store and to the
// workers only by enqueuing jobs.
package api

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/api/admin"
	"coffer/api/mcp"
	"coffer/api/rest"
	"coffer/api/screens"
	"coffer/api/signin"
	"coffer/api/web"
	"coffer/jobs/mail"
	"coffer/jobs/simplefin"
	"coffer/models"
	"coffer/models/importfile"
)

// bodyLimit is the largest request body accepted (413 beyond), but for
// a file upload, which may reach uploadLimit: the file and 1 MiB of the
// rest of its form.
const (
	bodyLimit   = 1 << 20
	uploadLimit = importfile.MaxFileBytes + bodyLimit
)

// The option types of the audiences, named here so that main builds one
// Options.
type (
	// WebOptions configure the browser screens and sign-in.
	WebOptions = web.Options
	// MailOptions configure the few emails the service sends.
	MailOptions = mail.Options
	// SSOOptions configure single sign-on.
	SSOOptions = signin.SSOOptions
	// OAuthOptions configure the OAuth authorization server.
	OAuthOptions = signin.AuthServerOptions
)

// The AUTH_JIT_MODE values.
const (
	JITCreateAndLink = signin.JITCreateAndLink
	JITLinkOnly      = signin.JITLinkOnly
)

// OpenAPIYAML and OpenAPIJSON are the document describing /api/v1.
var (
	OpenAPIYAML = rest.OpenAPIYAML
	OpenAPIJSON = rest.OpenAPIJSON
)

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
	// RequestTimeout bounds the database and Redis calls of one request,
	// so that a backing service gone silent cannot hold it for ever; zero
	// means 30 seconds.
	RequestTimeout time.Duration
	// InTurn is how many requests may run at once, the others waiting in
	// the order they came (see inTurn); 0: no bound. main gives the
	// database pool's size.
	InTurn int

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
	OAuth                 OAuthOptions
	// AssistantDailyTokens is each family's daily token budget for the
	// assistant (ASSISTANT_DAILY_TOKENS), shown to admins with the usage.
	AssistantDailyTokens int
	// AssistantOff: no language model is configured (the screens say so).
	AssistantOff bool
	// AuthWatch follows the announcements of changes to grants (its Run
	// is the caller's to start); nil: each API request reads the auth
	// version from Redis.
	AuthWatch *rest.AuthWatch
	// IdempotencyKeysPerFamily bounds the Idempotency-Key answers a
	// family keeps; 0: rest.DefaultIdempotencyKeysPerFamily.
	IdempotencyKeysPerFamily int
}

// server holds the audiences' handlers and what the app-wide middleware
// and error handler use.
type server struct {
	store   *models.Store
	redis   redis.UniversalClient
	log     *slog.Logger
	site    *web.Site
	rest    *rest.Handler
	screens *screens.Handler
	signin  *signin.Handler
	admin   *admin.Handler
	mcp     *mcp.Handler
}

// New builds the fiber app with every route.
func New(o Options) (*fiber.App, error) {
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.SimpleFINDailyBudget <= 0 {
		o.SimpleFINDailyBudget = simplefin.DefaultDailyBudget
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.SSO.Registry == nil || len(o.SSO.StateKey) != 32 {
		return nil, errors.New("api: SSO.Registry and a 32-byte SSO.StateKey are required")
	}
	calendar, err := simplefin.NewSyncCalendar(o.SimpleFINSyncCron, o.SimpleFINSyncLocation, o.SimpleFINSyncJitter)
	if err != nil {
		return nil, err
	}
	s := &server{store: o.Store, redis: o.Redis, log: o.Logger}
	wo := o.Web
	wo.Redis = o.Redis // the forms' one-time tokens
	if s.site, err = web.NewSite(o.Store, wo, o.Clock, o.Logger); err != nil {
		return nil, err
	}
	// The JSON API and the screens act on connections through the same
	// functions.
	connections := &simplefin.Actions{Store: o.Store, Queue: o.Queue, Redis: o.Redis, Log: o.Logger,
		DailyBudget: o.SimpleFINDailyBudget, AllowHTTP: o.SimpleFINAllowHTTP, Now: o.Clock}
	mailer := mail.New(o.Mail, o.Logger)
	if s.signin, err = signin.New(s.site, signin.Options{
		Store: o.Store, Redis: o.Redis, Logger: o.Logger, Clock: o.Clock,
		Mail: mailer, SSO: o.SSO, OAuth: o.OAuth,
	}); err != nil {
		return nil, err
	}
	if s.rest, err = rest.New(rest.Options{
		Store: o.Store, Redis: o.Redis, Queue: o.Queue, Logger: o.Logger, Clock: o.Clock,
		RateLimitPerHour: o.APIRateLimitPerHour, Connections: connections,
		SimpleFINDailyBudget: o.SimpleFINDailyBudget, Calendar: calendar, AssistantDailyTokens: o.AssistantDailyTokens,
		AssistantOff: o.AssistantOff, Bearer: s.signin.Bearer, AuthWatch: o.AuthWatch, IdempotencyKeysPerFamily: o.IdempotencyKeysPerFamily,
	}); err != nil {
		return nil, err
	}
	s.mcp = mcp.New(mcp.Options{Store: o.Store, Logger: o.Logger})
	if s.screens, err = screens.New(s.site, screens.Options{
		Store: o.Store, Redis: o.Redis, Logger: o.Logger, Clock: o.Clock, Mail: mailer, Queue: o.Queue,
		Connections: connections, SimpleFINDailyBudget: o.SimpleFINDailyBudget, Calendar: calendar,
		AssistantDailyTokens: o.AssistantDailyTokens, AssistantOff: o.AssistantOff,
	}); err != nil {
		return nil, err
	}
	if s.admin, err = admin.New(s.site, admin.Options{
		Store: o.Store, Redis: o.Redis, Queue: o.Queue, Logger: o.Logger, Clock: o.Clock,
		Registry: o.SSO.Registry, ProvidersFile: o.SSO.ProvidersFile, Dashboard: o.Dashboard,
		RateLimit: o.Web.AdminRateLimit,
	}); err != nil {
		return nil, err
	}
	app := fiber.New(fiber.Config{
		AppName:        "coffer",
		BodyLimit:      bodyLimit, // uploadLimit for uploads: uploadSize
		ReadBufferSize: 16 << 10,  // room for long headers before a 431
		// An answer that fits goes out in one write: with fasthttp's 4 KB
		// a page of 25 chats (about 7 KB) took two, and on loopback each
		// write costs the sender about as much as building the page.
		WriteBufferSize:       32 << 10,
		ErrorHandler:          s.handleError,
		DisableStartupMessage: true,
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           120 * time.Second,
		// fiber believes no forwarded header (its c.IP() would take the
		// leftmost X-Forwarded-For entry, which the client writes): the
		// client's address is web.ClientIP, worked out by FindClient.
		EnableTrustedProxyCheck: true,
	})
	app.Server().HeaderReceived = uploadSize
	app.Use(requestID, safeHeaders, s.site.FindClient, deadline(cmp.Or(o.RequestTimeout, 30*time.Second)), jsonCharset)
	app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: s.logPanic}))
	if o.InTurn > 0 {
		app.Use(inTurn(o.InTurn))
	}
	s.routes(app)
	return app, nil
}

// Serve answers on ln until ctx ends, then stops taking connections and
// gives the requests in flight 20 seconds to finish.
func Serve(ctx context.Context, app *fiber.App, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return app.ShutdownWithTimeout(20 * time.Second)
	}
}
