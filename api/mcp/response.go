package mcp

import (
	"log/slog"
	"mime"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"coffer/api/httperr"
	"coffer/api/web"
)

// rpcError is a JSON-RPC error response without an id: the SDK's
// transport refusals (a body that is not JSON-RPC, a missing Accept) are
// plain text, and a JSON-RPC client reads only JSON-RPC.
type rpcError struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      any            `json:"id"`
	Error   *jsonrpc.Error `json:"error"`
}

// send copies the SDK's answer to c. A plain-text refusal becomes a
// JSON-RPC error with the same 4xx status and the SDK's sentence (it
// names what was wrong with the request, nothing of the service); a 5xx
// is logged and becomes an internal error that says nothing more.
func (h *Handler) send(c *fiber.Ctx, w *web.Recorder) error {
	w.CopyHeaders(c)
	body := w.Body.Bytes()
	ct, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type"))
	if w.Status >= 400 && ct != fiber.MIMEApplicationJSON {
		text := strings.TrimSpace(w.Body.String())
		if w.Status >= 500 {
			h.log.Error("mcp: transport failed", slog.String("request_id", httperr.RequestID(c)),
				slog.Int("status", w.Status), slog.String("error", text))
			return refuseRPC(c, w.Status, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "The service could not answer; try again later."})
		}
		return refuseRPC(c, w.Status, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: text})
	}
	return c.Status(w.Status).Send(body)
}
