// Package httperr is how every audience of the web app fails a request: an
// Error with its status and safe text, the ErrorResponse body, and the one
// mapping from store sentinels to statuses that api's error handler
// applies. It writes no response itself.
package httperr

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"coffer/models"
	"coffer/models/importfile"
)

// Response is the body of every error answer.
type Response struct {
	Error   string   `json:"error"`
	Message string   `json:"message"`
	Details any      `json:"details,omitempty"`
	Errors  []string `json:"errors,omitempty"`
}

// Error is an error a handler returns with its status and safe text.
type Error struct {
	Status  int
	Code    string
	Message string
	Errors  []string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// New returns an Error with this status, code and message.
func New(status int, code, message string) error {
	return &Error{Status: status, Code: code, Message: message}
}

// BadRequest is a 400 with msg.
func BadRequest(msg string) error {
	return &Error{Status: fiber.StatusBadRequest, Code: "bad_request", Message: msg}
}

// NotFound is the 404 of a resource that does not exist or that belongs to
// another family.
func NotFound() error {
	return &Error{Status: fiber.StatusNotFound, Code: "not_found", Message: "Resource not found"}
}

// NotFoundOf is the 404 of a missing record that says what it is
// ("Sync not found"): a record of another family reads the same.
func NotFoundOf(resource string) error {
	return &Error{Status: fiber.StatusNotFound, Code: "not_found", Message: resource + " not found"}
}

// RouteNotFound is the 404 of a request that no route takes. Its own code
// and a message naming the method and path ("No route GET /api/v1/nope")
// tell a client that the route is wrong (a typo, an older server), where
// not_found says a record is missing.
func RouteNotFound(method, path string) error {
	if r := []rune(path); len(r) > 200 { // the path is the client's; keep the echo short
		path = string(r[:200]) + "…"
	}
	return &Error{Status: fiber.StatusNotFound, Code: "route_not_found", Message: "No route " + method + " " + path}
}

// Invalid is the 422 listing every problem of a request.
func Invalid(problems []string) error {
	return &Error{Status: fiber.StatusUnprocessableEntity, Code: "validation_failed", Message: "Validation failed", Errors: problems}
}

// Forbidden is a 403 with msg.
func Forbidden(msg string) error {
	return &Error{Status: fiber.StatusForbidden, Code: "forbidden", Message: msg}
}

// Unavailable is a 503 with msg that also keeps the error behind it for
// the log.
func Unavailable(msg string, err error) error {
	return fmt.Errorf("%w: %w", &Error{Status: fiber.StatusServiceUnavailable, Code: "service_unavailable", Message: msg}, err)
}

// Messages every audience shares.
const (
	MsgInternal    = "An unexpected error occurred"
	MsgUnavailable = "The service is temporarily unavailable; try again shortly"
	MsgBadCSRF     = "Invalid or missing CSRF token"
	// RetryAfterShort is the Retry-After, in seconds, of a 503.
	RetryAfterShort = 5
)

// fiberCodes names the statuses fiber itself produces.
var fiberCodes = map[int][2]string{
	fiber.StatusBadRequest:                  {"bad_request", "The request could not be read"},
	fiber.StatusNotFound:                    {"not_found", "Resource not found"},
	fiber.StatusMethodNotAllowed:            {"method_not_allowed", "This method is not allowed on this resource"},
	fiber.StatusRequestEntityTooLarge:       {"payload_too_large", "The request body is too large: at most 1 MiB, or 16 MiB for a file upload"},
	fiber.StatusRequestHeaderFieldsTooLarge: {"bad_request", "The request headers are too large"},
	fiber.StatusUnsupportedMediaType:        {"bad_request", "The request body must be JSON"},
}

// Classify maps any error to its status and the body a client may see.
// Only errors of known kinds speak; anything else is a 500 with a fixed
// sentence, so no internal text leaves the process.
func Classify(err error) (int, Response) {
	resp := Response{Error: "internal_server_error", Message: MsgInternal}
	status := fiber.StatusInternalServerError

	var ae *Error
	var fe *fiber.Error
	var inv *models.InvalidError
	var badFile *importfile.Error
	var badExport *importfile.SureError
	switch {
	case errors.As(err, &ae):
		status, resp.Error, resp.Message, resp.Errors = ae.Status, ae.Code, ae.Message, ae.Errors
	case errors.As(err, &inv):
		status, resp.Error, resp.Message, resp.Errors = fiber.StatusUnprocessableEntity, "validation_failed", "Validation failed", inv.Problems
	case errors.As(err, &badFile):
		status, resp.Error, resp.Message, resp.Errors = fiber.StatusUnprocessableEntity, "validation_failed", "Validation failed", badFile.Problems
	case errors.As(err, &badExport):
		// A restore's file: the line (0 for the file as a whole) and why.
		status, resp.Error, resp.Message = fiber.StatusUnprocessableEntity, "validation_failed", "The file cannot be restored"
		resp.Errors = []string{badExport.Reason}
		if badExport.Line > 0 {
			resp.Errors[0] = fmt.Sprintf("line %d: %s", badExport.Line, badExport.Reason)
		}
		resp.Details = map[string]any{"line": badExport.Line, "reason": badExport.Reason}
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
		status, resp.Error, resp.Message = fiber.StatusServiceUnavailable, "service_unavailable", MsgUnavailable
	}
	return status, resp
}

// unavailable reports whether err means a backing service did not answer:
// the database, as the store reports it, or Redis (a network error, a
// deadline, or no connection free in time).
func unavailable(err error) bool {
	var netErr net.Error
	return errors.Is(err, models.ErrUnavailable) || errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, redis.ErrPoolTimeout)
}

// PathID reads the :id path parameter.
func PathID(c *fiber.Ctx) (uuid.UUID, error) { return ParamID(c, "id") }

// ParamID reads a path parameter that holds an id. A value that is not a
// plain UUID names nothing, so it is a 404 without a database lookup.
func ParamID(c *fiber.Ctx, name string) (uuid.UUID, error) {
	s := c.Params(name)
	if len(s) != 36 {
		return uuid.Nil, NotFound()
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, NotFound()
	}
	return id, nil
}

// localRequestID is where api's request-id middleware keeps the id.
const localRequestID = "request_id"

// SetRequestID records the request's id for RequestID.
func SetRequestID(c *fiber.Ctx, id string) { c.Locals(localRequestID, id) }

// RequestID is the request's id, for log lines.
func RequestID(c *fiber.Ctx) string {
	id, _ := c.Locals(localRequestID).(string)
	return id
}
