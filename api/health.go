package api

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
)

// healthz answers while the process runs.
func (h *Handler) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

// readyz answers 200 only when the database and Redis both answer.
func (h *Handler) readyz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	if err := h.store.Ping(ctx); err != nil {
		c.Set(fiber.HeaderRetryAfter, "5")
		return &apiError{status: fiber.StatusServiceUnavailable, code: "service_unavailable", message: "The database is unreachable"}
	}
	if err := h.redis.Ping(ctx).Err(); err != nil {
		c.Set(fiber.HeaderRetryAfter, "5")
		return &apiError{status: fiber.StatusServiceUnavailable, code: "service_unavailable", message: "Redis is unreachable"}
	}
	return c.JSON(fiber.Map{"status": "ok"})
}
