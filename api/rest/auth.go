package rest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

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

// APIKey authenticates X-Api-Key, counts the request against the key's
// hourly limit and checks that the key's scope allows the route.
func (h *Handler) APIKey(scope string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		secret := c.Get(headerAPIKey)
		if token, ok := bearerToken(c); ok && secret == "" {
			return h.bearerAuth(c, token, scope)
		}
		if secret == "" || len(secret) > 256 {
			return &httperr.Error{Status: fiber.StatusUnauthorized, Code: "unauthorized", Message: msgInvalidKey}
		}
		ctx := c.UserContext()
		k, err := h.store.APIKeyBySecret(ctx, secret)
		if errors.Is(err, models.ErrNotFound) {
			return &httperr.Error{Status: fiber.StatusUnauthorized, Code: "unauthorized", Message: msgInvalidKey}
		}
		if err != nil {
			return err
		}
		if k.User == nil || k.Family == nil || k.User.Status != models.UserActive {
			return &httperr.Error{Status: fiber.StatusUnauthorized, Code: "unauthorized", Message: "Account has been deactivated"}
		}
		c.Locals(localKey, k)
		if err := h.countRequest(ctx, c, k); err != nil {
			return err
		}
		if scope == models.ScopeReadWrite && !k.Writable() {
			return &httperr.Error{Status: fiber.StatusForbidden, Code: "insufficient_scope", Message: "This action requires the 'write' scope"}
		}
		if k.LastUsedAt == nil || h.now().Sub(*k.LastUsedAt) > time.Minute {
			if err := h.store.TouchAPIKey(ctx, k.FamilyID, k.ID); err != nil {
				return err
			}
		}
		return c.Next()
	}
}

// countRequest applies the per-key hourly limit in a fixed window counted
// in Redis, so that every web process shares one count.
func (h *Handler) countRequest(ctx context.Context, c *fiber.Ctx, k *models.APIKey) error {
	if h.rateLimit <= 0 {
		return nil
	}
	now := h.now()
	window := now.Truncate(time.Hour)
	reset := int(window.Add(time.Hour).Sub(now).Seconds())
	if reset < 1 {
		reset = 1
	}
	key := fmt.Sprintf("coffer:ratelimit:api:%s:%d", k.ID, window.Unix())
	pipe := h.redis.Pipeline()
	incr := pipe.Incr(ctx, key)
	pipe.ExpireNX(ctx, key, time.Hour+time.Minute)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("api: rate limit: %w", err)
	}
	count := int(incr.Val())
	remaining := h.rateLimit - count
	if remaining < 0 {
		remaining = 0
	}
	c.Set("X-RateLimit-Limit", strconv.Itoa(h.rateLimit))
	c.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	c.Set("X-RateLimit-Reset", strconv.Itoa(reset))
	if count > h.rateLimit {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(reset))
		return &httperr.Error{Status: fiber.StatusTooManyRequests, Code: "rate_limited", Message: "Rate limit exceeded; try again after the time in Retry-After"}
	}
	return nil
}
