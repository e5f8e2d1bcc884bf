package api

import (
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/api/rest"
	"coffer/api/web"
)

// handleError is the one place that turns errors into responses. The real
// error is logged; the client gets a stable code and a sentence we wrote.
func (s *server) handleError(c *fiber.Ctx, err error) error {
	status, resp := httperr.Classify(err)
	if status == fiber.StatusServiceUnavailable && len(c.Response().Header.Peek(fiber.HeaderRetryAfter)) == 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(httperr.RetryAfterShort))
	}

	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	attrs := []any{
		slog.String("request_id", httperr.RequestID(c)),
		slog.String("method", c.Method()),
		slog.String("path", c.Path()),
		slog.Int("status", status),
		slog.Any("error", err),
	}
	if k := rest.KeyOf(c); k != nil {
		attrs = append(attrs, slog.String("family_id", k.FamilyID.String()))
	} else if ses := web.SessionOf(c); ses != nil {
		attrs = append(attrs, slog.String("family_id", ses.User.FamilyID.String()))
	}
	s.log.Log(c.UserContext(), level, "request failed", attrs...)
	if screenPath(c.Path()) {
		title := resp.Message
		if status == fiber.StatusNotFound {
			title = "Page not found"
		}
		if rerr := s.site.RenderError(c, status, title); rerr == nil {
			return nil
		}
	}
	return c.Status(status).JSON(resp, fiber.MIMEApplicationJSONCharsetUTF8)
}

func (s *server) logPanic(c *fiber.Ctx, e any) {
	s.log.Error("panic", slog.String("request_id", httperr.RequestID(c)), slog.String("path", c.Path()),
		slog.Any("panic", e), slog.String("stack", string(debug.Stack())))
}

// screenPath reports whether a path is a browser screen (HTML errors)
// rather than part of the JSON API.
func screenPath(p string) bool {
	if p == "/oauth/authorize" {
		return true // the consent screen; the other /oauth/ endpoints answer apps
	}
	return !strings.HasPrefix(p, "/api/") && !strings.HasPrefix(p, "/oauth/") && !strings.HasPrefix(p, "/.well-known/") &&
		p != "/healthz" && p != "/readyz" && p != "/mcp"
}
