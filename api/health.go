package api

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
)

// healthz answers while the process runs.
func (s *server) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

// readyz answers 200 only when the database and Redis both answer.
func (s *server) readyz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		c.Set(fiber.HeaderRetryAfter, "5")
		return &httperr.Error{Status: fiber.StatusServiceUnavailable, Code: "service_unavailable", Message: "The database is unreachable"}
	}
	if err := s.redis.Ping(ctx).Err(); err != nil {
		c.Set(fiber.HeaderRetryAfter, "5")
		return &httperr.Error{Status: fiber.StatusServiceUnavailable, Code: "service_unavailable", Message: "Redis is unreachable"}
	}
	return c.JSON(fiber.Map{"status": "ok"})
}
