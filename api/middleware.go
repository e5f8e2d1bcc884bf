package api

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"coffer/models"
)

const (
	headerRequestID = "X-Request-Id"
	headerAPIKey    = "X-Api-Key"
	localRequestID  = "request_id"
	localKey        = "api_key"
)

// requestID tags the request and the response with an id: the client's
// own when it is short and plain, else a new one.
func (h *Handler) requestID(c *fiber.Ctx) error {
	id := c.Get(headerRequestID)
	if !saneRequestID(id) {
		id = utils.UUIDv4()
	} else {
		id = strings.Clone(id)
	}
	c.Locals(localRequestID, id)
	c.Set(headerRequestID, id)
	return c.Next()
}

// jsonCharset labels JSON answers with their charset, as the API promises;
// fiber's c.JSON says only application/json.
func jsonCharset(c *fiber.Ctx) error {
	err := c.Next()
	if string(c.Response().Header.ContentType()) == fiber.MIMEApplicationJSON {
		c.Response().Header.SetContentType(fiber.MIMEApplicationJSONCharsetUTF8)
	}
	return err
}

func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		b := id[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '.' || b == '_' || b == '-') {
			return false
		}
	}
	return true
}

func requestIDOf(c *fiber.Ctx) string {
	id, _ := c.Locals(localRequestID).(string)
	return id
}

func keyOf(c *fiber.Ctx) *models.APIKey {
	k, _ := c.Locals(localKey).(*models.APIKey)
	return k
}

// apiKey authenticates X-Api-Key, counts the request against the key's
// hourly limit and checks that the key's scope allows the route.
func (h *Handler) apiKey(scope string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		secret := c.Get(headerAPIKey)
		if secret == "" || len(secret) > 256 {
			return &apiError{status: fiber.StatusUnauthorized, code: "unauthorized", message: msgInvalidKey}
		}
		ctx := c.UserContext()
		k, err := h.store.APIKeyBySecret(ctx, secret)
		if errors.Is(err, models.ErrNotFound) {
			return &apiError{status: fiber.StatusUnauthorized, code: "unauthorized", message: msgInvalidKey}
		}
		if err != nil {
			return err
		}
		if k.User == nil || k.Family == nil || k.User.Status != models.UserActive {
			return &apiError{status: fiber.StatusUnauthorized, code: "unauthorized", message: "Account has been deactivated"}
		}
		c.Locals(localKey, k)
		if err := h.countRequest(ctx, c, k); err != nil {
			return err
		}
		if scope == models.ScopeReadWrite && !k.Writable() {
			return &apiError{status: fiber.StatusForbidden, code: "insufficient_scope", message: "This action requires the 'write' scope"}
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
		return &apiError{status: fiber.StatusTooManyRequests, code: "rate_limited", message: "Rate limit exceeded; try again after the time in Retry-After"}
	}
	return nil
}

// adminRateLimit allows AdminRateLimit requests a minute per client IP
// under /admin/, counted in Redis so every web process shares the count.
// With Redis down it lets requests through: the screens behind it still
// need a session and a role.
func (h *Handler) adminRateLimit(c *fiber.Ctx) error {
	if h.web.AdminRateLimit <= 0 {
		return c.Next()
	}
	now := h.now()
	key := fmt.Sprintf("rl:admin:%s:%d", c.IP(), now.Unix()/60)
	n, err := h.incrWindow(c.UserContext(), key, time.Minute)
	if err != nil {
		h.log.Warn("admin rate limit unavailable", "error", err)
		return c.Next()
	}
	if int(n) > h.web.AdminRateLimit {
		wait := 60 - int(now.Unix()%60)
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(wait))
		return &apiError{status: fiber.StatusTooManyRequests, code: "rate_limited",
			message: fmt.Sprintf("Too many requests. Try again in %d seconds.", wait)}
	}
	return c.Next()
}
