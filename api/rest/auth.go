package rest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"coffer/api/httperr"
	"coffer/models"
)

const (
	headerAPIKey  = "X-Api-Key"
	localKey      = "api_key"
	msgInvalidKey = "Access token or API key is invalid, expired, or missing"
)

// KeyOf is the API key that authenticated the request, or nil.
func KeyOf(c *fiber.Ctx) *models.APIKey {
	k, _ := c.Locals(localKey).(*models.APIKey)
	return k
}

// APIKey authenticates X-Api-Key or an OAuth access token in
// Authorization: Bearer, counts the request against the credential's
// hourly limit and checks that its scope allows the route. Both kinds go
// through the same cache and Redis pipeline (authenticate); a refused
// bearer token gets the WWW-Authenticate challenge of RFC 6750 §3. On a
// POST it applies Idempotency-Key (see idempotent).
func (h *Handler) APIKey(scope string) fiber.Handler {
	return h.guard(scope, "", h.authorized)
}

// Resource authenticates the requests of the MCP server (another
// protected resource taking the same keys and tokens) as APIKey does,
// with the same cache and rate limit, for the read scope: what a
// credential may do there is up to the resource (rest.KeyOf). Every
// refusal carries the challenge of RFC 9728 §5.1, naming metadataURL,
// from which an MCP client discovers the authorization server. JSON-RPC
// has no Idempotency-Key.
func (h *Handler) Resource(metadataURL string) fiber.Handler {
	return h.guard(models.ScopeRead, metadataURL, func(c *fiber.Ctx) error { return c.Next() })
}

// guard is APIKey and Resource: it authenticates, counts and checks the
// scope, then hands the request to next.
func (h *Handler) guard(scope, metadataURL string, next fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		cred := credentialOf(c)
		cred.metadataURL = metadataURL
		if cred.secret == "" || len(cred.secret) > 512 || !cred.bearer && len(cred.secret) > 256 {
			return cred.refuse(c, msgInvalidKey)
		}
		ctx := c.UserContext()
		hash := cred.hash()
		k, count, err := h.authenticate(ctx, hash, func(ctx context.Context) (*models.APIKey, error) {
			if !cred.bearer {
				return h.store.APIKeyBySecret(ctx, cred.secret)
			}
			if h.bearer == nil {
				return nil, models.ErrNotFound
			}
			return h.bearer(ctx, cred.secret)
		})
		if errors.Is(err, models.ErrNotFound) {
			return cred.refuse(c, msgInvalidKey)
		}
		if err != nil {
			return err
		}
		if k.User == nil || k.Family == nil || k.User.Status != models.UserActive {
			return cred.refuse(c, "Account has been deactivated")
		}
		c.Locals(localKey, k)
		// The family as the credential read it: the rules step takes the
		// family's rules from its cache while their version is unchanged.
		c.SetUserContext(models.WithFamily(ctx, k.Family))
		if err := h.applyLimit(c, count); err != nil {
			return err
		}
		if scope == models.ScopeReadWrite && !k.Writable() {
			if cred.bearer {
				c.Set(fiber.HeaderWWWAuthenticate, `Bearer error="insufficient_scope", scope="read_write"`)
			}
			return &httperr.Error{Status: fiber.StatusForbidden, Code: "insufficient_scope", Message: "This action requires the 'write' scope"}
		}
		if now := h.now(); k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) > time.Minute {
			if err := h.touch(ctx, k); err != nil {
				return err
			}
			h.keys.touched(hash, now)
		}
		return next(c)
	}
}

// authorized runs the rest of an authenticated request: every way in (an
// API key, an OAuth bearer token) ends here, so that every POST of the
// API honours Idempotency-Key, routes added later included.
func (h *Handler) authorized(c *fiber.Ctx) error {
	if c.Method() == fiber.MethodPost {
		return h.idempotent(c)
	}
	return c.Next()
}

// touch records the credential's use: the key's row, or the access
// token's.
func (h *Handler) touch(ctx context.Context, k *models.APIKey) error {
	if k.OAuth {
		return h.store.TouchOAuthToken(ctx, k.FamilyID, k.TokenSignature)
	}
	return h.store.TouchAPIKey(ctx, k.FamilyID, k.ID)
}

// authenticate finds the credential whose secret hashes to hash (load
// reads it from the database), and counts the request against its limit
// (count is 0 when there is no limit). A credential this process read
// before is taken from its cache while the auth version has not moved
// since and the credential has not expired. The version comes from the
// AuthWatch, or from Redis while the watch is not subscribed; the count
// comes from the limiter's lease. So a cached key or token usually costs
// neither a query nor a Redis round trip.
func (h *Handler) authenticate(ctx context.Context, hash [sha256.Size]byte, load func(context.Context) (*models.APIKey, error)) (*models.APIKey, int64, error) {
	now := h.now()
	v, live := h.watch.Version()
	if !live {
		var err error
		if v, err = h.redis.Get(ctx, AuthVersionKey).Int64(); err != nil && !errors.Is(err, redis.Nil) {
			return nil, 0, fmt.Errorf("api: authenticate: %w", err)
		}
	}
	k, ok := h.keys.get(hash, v, now)
	if !ok {
		var err error
		if k, err = load(ctx); err != nil {
			return nil, 0, err
		}
		h.keys.put(hash, v, k, now)
	}
	count, err := h.limits.take(ctx, k.ID, now)
	return k, count, err
}

// applyLimit sets the rate-limit headers for the request's count and
// refuses it past the limit.
func (h *Handler) applyLimit(c *fiber.Ctx, count int64) error {
	if h.rateLimit <= 0 {
		return nil
	}
	now := h.now()
	reset := int(now.Truncate(time.Hour).Add(time.Hour).Sub(now).Seconds())
	if reset < 1 {
		reset = 1
	}
	remaining := max(h.rateLimit-int(count), 0)
	c.Set("X-RateLimit-Limit", strconv.Itoa(h.rateLimit))
	c.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	c.Set("X-RateLimit-Reset", strconv.Itoa(reset))
	if count > int64(h.rateLimit) {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(reset))
		return &httperr.Error{Status: fiber.StatusTooManyRequests, Code: "rate_limited", Message: "Rate limit exceeded; try again after the time in Retry-After"}
	}
	return nil
}
