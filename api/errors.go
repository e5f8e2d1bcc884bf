package api

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgconn"

	"coffer/models"
)

// ErrorResponse is the body of every error answer.
type ErrorResponse struct {
	Error   string   `json:"error"`
	Message string   `json:"message"`
	Details any      `json:"details,omitempty"`
	Errors  []string `json:"errors,omitempty"`
}

// apiError is an error a handler returns with its status and safe text.
type apiError struct {
	status  int
	code    string
	message string
	errors  []string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message) }

func badRequest(msg string) error {
	return &apiError{status: fiber.StatusBadRequest, code: "bad_request", message: msg}
}

func notFound() error {
	return &apiError{status: fiber.StatusNotFound, code: "not_found", message: "Resource not found"}
}

func invalid(problems []string) error {
	return &apiError{status: fiber.StatusUnprocessableEntity, code: "validation_failed", message: "Validation failed", errors: problems}
}

const (
	msgInvalidKey   = "Access token or API key is invalid, expired, or missing"
	msgInternal     = "An unexpected error occurred"
	msgUnavailable  = "The service is temporarily unavailable; try again shortly"
	retryAfterShort = 5
)

// fiberCodes names the statuses fiber itself produces.
var fiberCodes = map[int][2]string{
	fiber.StatusBadRequest:                  {"bad_request", "The request could not be read"},
	fiber.StatusNotFound:                    {"not_found", "Resource not found"},
	fiber.StatusMethodNotAllowed:            {"method_not_allowed", "This method is not allowed on this resource"},
	fiber.StatusRequestEntityTooLarge:       {"payload_too_large", "The request body is larger than 1 MiB"},
	fiber.StatusRequestHeaderFieldsTooLarge: {"bad_request", "The request headers are too large"},
	fiber.StatusUnsupportedMediaType:        {"bad_request", "The request body must be JSON"},
}

// handleError is the one place that turns errors into responses. The real
// error is logged; the client gets a stable code and a sentence we wrote.
func (h *Handler) handleError(c *fiber.Ctx, err error) error {
	resp := ErrorResponse{Error: "internal_server_error", Message: msgInternal}
	status := fiber.StatusInternalServerError

	var ae *apiError
	var fe *fiber.Error
	var inv *models.InvalidError
	switch {
	case errors.As(err, &ae):
		status, resp.Error, resp.Message, resp.Errors = ae.status, ae.code, ae.message, ae.errors
	case errors.As(err, &inv):
		status, resp.Error, resp.Message, resp.Errors = fiber.StatusUnprocessableEntity, "validation_failed", "Validation failed", inv.Problems
	case errors.Is(err, models.ErrNotFound):
		status, resp.Error, resp.Message = fiber.StatusNotFound, "not_found", "Resource not found"
	case errors.Is(err, models.ErrForbidden):
		status, resp.Error, resp.Message = fiber.StatusForbidden, "forbidden", "You are not authorized to access this area."
	case errors.Is(err, models.ErrConflict):
		status, resp.Error, resp.Message = fiber.StatusConflict, "conflict", "A record with these values already exists"
	case errors.As(err, &fe):
		status = fe.Code
		if known, ok := fiberCodes[fe.Code]; ok {
			resp.Error, resp.Message = known[0], known[1]
		} else if fe.Code < 500 {
			resp.Error, resp.Message = "bad_request", "The request could not be processed"
		}
	case unavailable(err):
		status, resp.Error, resp.Message = fiber.StatusServiceUnavailable, "service_unavailable", msgUnavailable
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(retryAfterShort))
	}

	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	attrs := []any{
		slog.String("request_id", requestIDOf(c)),
		slog.String("method", c.Method()),
		slog.String("path", c.Path()),
		slog.Int("status", status),
		slog.Any("error", err),
	}
	if k := keyOf(c); k != nil {
		attrs = append(attrs, slog.String("family_id", k.FamilyID.String()))
	}
	h.log.Log(c.UserContext(), level, "request failed", attrs...)
	if screenPath(c.Path()) {
		title := resp.Message
		if status == fiber.StatusNotFound {
			title = "Page not found"
		}
		if rerr := h.render(c, status, "error", page{Title: title}); rerr == nil {
			return nil
		}
	}
	return c.Status(status).JSON(resp, fiber.MIMEApplicationJSONCharsetUTF8)
}

// unavailable reports whether err means a backing service did not answer.
func unavailable(err error) bool {
	var netErr *net.OpError
	var connErr *pgconn.ConnectError
	return errors.As(err, &netErr) || errors.As(err, &connErr) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, context.DeadlineExceeded)
}

func (h *Handler) logPanic(c *fiber.Ctx, e any) {
	h.log.Error("panic", slog.String("request_id", requestIDOf(c)), slog.String("path", c.Path()),
		slog.Any("panic", e), slog.String("stack", string(debug.Stack())))
}

// screenPath reports whether a path is a browser screen (HTML errors)
// rather than part of the JSON API.
func screenPath(p string) bool {
	return !strings.HasPrefix(p, "/api/") && p != "/healthz" && p != "/readyz"
}
