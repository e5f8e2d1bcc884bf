// Package rest is the JSON API under /api/v1: its handlers, the JSON
// shapes beside them, API-key authentication and the per-key rate limit,
// request parsing and the OpenAPI document. Errors go back to api's one
// error handler as httperr values.
package rest

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/jobs/simplefin"
	"coffer/models"
)

// Options is what the JSON API needs.
type Options struct {
	Store  *models.Store
	Redis  redis.UniversalClient // rate-limit counters, shared by every web process
	Queue  *asynq.Client         // background jobs
	Logger *slog.Logger
	Clock  func() time.Time

	// RateLimitPerHour is the number of requests one API key may make per
	// hour; 0 turns the limit off.
	RateLimitPerHour int
	// Connections are the SimpleFIN connection actions, shared with the
	// screens.
	Connections *simplefin.Actions
	// SimpleFINDailyBudget is the requests per connection and rolling day
	// that the worker allows.
	SimpleFINDailyBudget int
	// Calendar works out a connection's next scheduled sync.
	Calendar *simplefin.SyncCalendar
	// Bearer turns an OAuth access token into the principal an API key
	// gives, or models.ErrNotFound (signin.Handler.Bearer); nil: bearer
	// tokens are refused.
	Bearer func(ctx context.Context, token string) (*models.APIKey, error)
	// AssistantDailyTokens is each family's daily token budget, shown
	// to its admins beside the usage; 0: no limit.
	AssistantDailyTokens int
	// AssistantOff: no language model is configured, so the app's AI
	// switch is refused.
	AssistantOff bool
	// AuthWatch, when running, tells requests the auth version without a
	// round trip to Redis; nil: each request reads it.
	AuthWatch *AuthWatch
	// IdempotencyKeysPerFamily bounds the Idempotency-Key answers one
	// family keeps; 0 means DefaultIdempotencyKeysPerFamily.
	IdempotencyKeysPerFamily int
}

// Handler serves /api/v1; handlers are its methods.
type Handler struct {
	store          *models.Store
	redis          redis.UniversalClient
	queue          *asynq.Client
	log            *slog.Logger
	rateLimit      int
	idempotencyCap int
	now            func() time.Time
	bearer         func(ctx context.Context, token string) (*models.APIKey, error)

	connections *simplefin.Actions
	dailyBudget int
	calendar    *simplefin.SyncCalendar

	assistantDailyTokens int
	assistantOff         bool

	docs   func() (*docs, error) // the API reference page, rendered on first use
	keys   *keyCache             // keys authenticated recently, see authenticate
	watch  *AuthWatch            // the auth version, while subscribed
	limits *limiter              // the hourly counts of the API's credentials
}

// New returns the JSON API's handler.
func New(o Options) (*Handler, error) {
	if o.IdempotencyKeysPerFamily <= 0 {
		o.IdempotencyKeysPerFamily = DefaultIdempotencyKeysPerFamily
	}
	return &Handler{
		store: o.Store, redis: o.Redis, queue: o.Queue,
		log: o.Logger, rateLimit: o.RateLimitPerHour, now: o.Clock,
		connections: o.Connections, dailyBudget: o.SimpleFINDailyBudget, calendar: o.Calendar,
		assistantDailyTokens: o.AssistantDailyTokens, idempotencyCap: o.IdempotencyKeysPerFamily,
		assistantOff: o.AssistantOff,
		docs:         sync.OnceValues(func() (*docs, error) { return newDocs(OpenAPIYAML) }),
		keys:         newKeyCache(), bearer: o.Bearer,
		watch: o.AuthWatch, limits: newLimiter(o.Redis, o.RateLimitPerHour),
	}, nil
}
