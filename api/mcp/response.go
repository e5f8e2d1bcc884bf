package mcp

import (
	"bytes"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"coffer/api/httperr"
)

// recorder is the http.ResponseWriter the SDK writes to; send copies it
// to fiber. With JSON responses nothing needs flushing before the end.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}, status: http.StatusOK} }

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(p []byte) (int, error) { return r.body.Write(p) }
func (r *recorder) WriteHeader(status int)      { r.status = status }
func (r *recorder) Flush()                      {}

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
func (h *Handler) send(c *fiber.Ctx, w *recorder) error {
	for k, vs := range w.header {
		for _, v := range vs {
			c.Set(k, v)
		}
	}
	body := w.body.Bytes()
	ct, _, _ := mime.ParseMediaType(w.header.Get("Content-Type"))
	if w.status >= 400 && ct != fiber.MIMEApplicationJSON {
		text := strings.TrimSpace(w.body.String())
		if w.status >= 500 {
			h.log.Error("mcp: transport failed", slog.String("request_id", httperr.RequestID(c)),
				slog.Int("status", w.status), slog.String("error", text))
			return refuseRPC(c, w.status, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "The service could not answer; try again later."})
		}
		return refuseRPC(c, w.status, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: text})
	}
	return c.Status(w.status).Send(body)
}
