// Package mcp is the MCP server at /mcp: the assistant's tools (one table
// in jobs/assistant, shared with the chat) over the Streamable HTTP
// transport of the official SDK. It keeps no session between requests,
// so that any web process answers any of them; authentication is the
// JSON API's (rest.Handler.Resource).
package mcp

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"coffer/api/httperr"
	"coffer/api/rest"
	"coffer/api/web"
	"coffer/jobs/assistant"
	"coffer/models"
)

// Options is what the MCP server needs.
type Options struct {
	Store  *models.Store
	Logger *slog.Logger
}

// version is told to clients at initialization: the version of the
// tools' contract, like /api/v1's.
const version = "1.0.0"

// Handler serves /mcp.
type Handler struct {
	store *models.Store
	log   *slog.Logger
	// read lists the read tools, write all of them: a client is shown only
	// what its credential may call, and calling another is an unknown tool.
	read, write http.Handler
}

// callerKey carries the assistant.Caller of a request to the tools.
type callerKey struct{}

// New builds the two servers, each with its tools registered once.
func New(o Options) *Handler {
	h := &Handler{store: o.Store, log: o.Logger}
	h.read = h.transport(false)
	h.write = h.transport(true)
	return h
}

// Routes mounts /mcp behind auth. The transport is POST only (stateless,
// so no GET stream and no session to DELETE); the SDK answers the other
// two with 405, which the MCP clients expect.
func (h *Handler) Routes(app fiber.Router, auth fiber.Handler) {
	app.Post("/mcp", auth, h.serve)
	app.Get("/mcp", auth, h.serve)
	app.Delete("/mcp", auth, h.serve)
}

func (h *Handler) transport(mayWrite bool) http.Handler {
	srv := sdk.NewServer(&sdk.Implementation{Name: "coffer", Title: "Coffer", Version: version}, &sdk.ServerOptions{
		Logger:       quiet(h.log),
		Instructions: "Tools over one household's ledger. Money is a decimal string in the account's currency; ids come from the tools' own results.",
	})
	for _, t := range assistant.Offered(assistant.Caller{MayWrite: mayWrite}) {
		srv.AddTool(&sdk.Tool{
			Name: t.Name, Description: t.Description, InputSchema: t.Schema,
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: !t.Write, OpenWorldHint: new(false)},
		}, h.call(t.Name))
	}
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
		// Each POST gets a session of its own that ends with it; a
		// response is one JSON body, which fits fiber's buffered writes.
		Stateless:    true,
		JSONResponse: true,
		Logger:       quiet(h.log),
		// The SDK refuses a loopback connection whose Host is not loopback
		// (DNS rebinding against a local server with no credentials). Here
		// every request carries a token or key, and a reverse proxy on the
		// same machine sends APP_URL's host over loopback.
		DisableLocalhostProtection: true,
	})
}

// serve hands the authenticated request to the SDK, with the caller the
// credential names: its family, its user, and whether its scope writes
// (as the JSON API decides: a read_write credential may write whatever
// its user's role).
func (h *Handler) serve(c *fiber.Ctx) error {
	if e := malformed(c); e != nil {
		return refuseRPC(c, fiber.StatusBadRequest, e)
	}
	k := rest.KeyOf(c)
	caller := assistant.Caller{FamilyID: k.FamilyID, UserID: k.UserID, Role: k.User.Role, MayWrite: k.Writable()}
	r, err := adaptor.ConvertRequest(c, true)
	if err != nil {
		return httperr.BadRequest("The request could not be read.")
	}
	r = r.WithContext(context.WithValue(c.UserContext(), callerKey{}, caller))
	next := h.read
	if caller.MayWrite {
		next = h.write
	}
	w := web.NewRecorder()
	next.ServeHTTP(w, r)
	return h.send(c, w)
}
