// Package api is the HTTP side of coffer: the fiber app, every route, the
// middleware (request ids, recovery, API keys, rate limits) and the JSON
// shapes of /api/v1. It talks to the database only through models.Store
// and to the workers only by enqueuing jobs.
package api

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/jobs"
	"coffer/models"
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
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.log == nil {
		h.log = slog.Default()
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
	})
	app.Use(h.requestID, jsonCharset)
	app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: h.logPanic}))
	h.routes(app)
	return app, nil
}
