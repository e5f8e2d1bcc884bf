package rest

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge"
	"coffer/models"
)

type connectionJSON struct {
	ID              string                 `json:"id"`
	Provider        string                 `json:"provider"`
	Name            string                 `json:"name"`
	Status          string                 `json:"status"`
	StatusMessage   *string                `json:"status_message"`
	ClaimRetryable  bool                   `json:"claim_retryable"`
	IncludePending  bool                   `json:"include_pending"`
	LookbackDays    *int                   `json:"lookback_days"`
	ProviderErrors  []models.ProviderError `json:"provider_errors"`
	ServerVersions  []string               `json:"server_versions"`
	RetryAfter      *string                `json:"retry_after"`
	LastSyncedAt    *string                `json:"last_synced_at"`
	NextSyncAt      *string                `json:"next_sync_at"`
	CreatedAt       string                 `json:"created_at"`
	UpdatedAt       string                 `json:"updated_at"`
	DisconnectedAt  *string                `json:"disconnected_at"`
	RequestsLast24h *int                   `json:"requests_last_24h"`
	RequestBudget   int                    `json:"request_budget"`

	Accounts []providerAccountJSON `json:"accounts"`
}

// renderConnection shows a connection without its secrets (the setup
// token and the access URL never leave the store in a response) and with
// the request budget; describeConnections adds what needs more queries.
func (h *Handler) renderConnection(c *models.Connection) connectionJSON {
	out := connectionJSON{
		ID: c.ID.String(), Provider: c.Provider, Name: c.Name, Status: c.Status, StatusMessage: c.StatusMessage,
		ClaimRetryable: c.ClaimRetryable, IncludePending: c.IncludePending, LookbackDays: c.LookbackDays,
		ProviderErrors: c.ProviderErrors, ServerVersions: c.ServerVersions,
		RetryAfter: optTimestamp(c.RetryAfter), LastSyncedAt: optTimestamp(c.LastSyncedAt),
		CreatedAt: timestamp(c.CreatedAt), UpdatedAt: timestamp(c.UpdatedAt), DisconnectedAt: optTimestamp(c.DisconnectedAt),
		Accounts: []providerAccountJSON{}, RequestBudget: h.dailyBudget,
	}
	if out.ProviderErrors == nil {
		out.ProviderErrors = []models.ProviderError{}
	}
	if out.ServerVersions == nil {
		out.ServerVersions = []string{}
	}
	return out
}

type connectionsJSON struct {
	Connections []connectionJSON `json:"provider_connections"`
	Pagination  Pagination       `json:"pagination"`
}

func (h *Handler) listConnections(c *fiber.Ctx) error {
	p, err := parsePage(c)
	if err != nil {
		return err
	}
	ctx, fam := c.UserContext(), KeyOf(c).FamilyID
	cs, total, err := h.store.Connections(ctx, fam, p)
	if err != nil {
		return err
	}
	list, err := h.describeConnections(c, cs)
	if err != nil {
		return err
	}
	return c.JSON(connectionsJSON{Connections: list, Pagination: pagination(p, total)})
}

func (h *Handler) showConnection(c *fiber.Ctx) error {
	conn, err := byPathID(c, h.store.Connection)
	if err != nil {
		return err
	}
	return h.respondConnection(c, conn)
}

// createConnection stores a connection with its setup token sealed and
// queues the claim; the answer is 202 because the claim happens in a
// worker. A bad token is a 422 whose code says what is wrong with it.
func (h *Handler) createConnection(c *fiber.Ctx) error {
	ctx, k := c.UserContext(), KeyOf(c)
	f, err := decodeObject(c, "")
	if err != nil {
		return err
	}
	if !f.has("setup_token") {
		if f, err = connectionObject(f); err != nil {
			return err
		}
	}
	token, _ := f.str("setup_token", 4096, false)
	name, _ := f.str("name", maxName, true)
	includePending, lookback := connectionSettings(f)
	if err := f.err(); err != nil {
		return err
	}
	conn, err := h.connections.Connect(ctx, simplefin.NewConnection{FamilyID: k.FamilyID, CreatedBy: k.UserID, Name: name,
		SetupToken: token, LookbackDays: lookback, IncludePending: includePending == nil || *includePending})
	if err != nil {
		return connectionError(err)
	}
	return c.Status(fiber.StatusAccepted).JSON(h.renderConnection(conn))
}

// connectionError turns the refusals of simplefin.Actions into answers: a
// bad setup token is a 422 whose code says what is wrong with it, each
// conflict a 409 with its own sentence.
func connectionError(err error) error {
	var te *bridge.TokenError
	var se *simplefin.StateError
	switch {
	case errors.As(err, &te):
		return &httperr.Error{Status: fiber.StatusUnprocessableEntity, Code: te.Code, Message: te.Message}
	case errors.As(err, &se):
		return conflict("The connection is " + strings.ReplaceAll(se.Status, "_", " ") + "; it cannot sync")
	case errors.Is(err, simplefin.ErrClaiming):
		return conflict("The connection is already being claimed")
	case errors.Is(err, simplefin.ErrNotRetryable):
		return conflict("Only a failed claim whose token was not used can be retried; connect with a new token")
	case errors.Is(err, simplefin.ErrLinkedElsewhere):
		return conflict("That account is already linked to another bank account")
	}
	return err
}

// deleteConnection disconnects: the stored credentials are destroyed and
// the imported data is kept, unless delete_transactions=true (a family
// admin only), which queues the purge of what the connection imported.
func (h *Handler) deleteConnection(c *fiber.Ctx) error {
	ctx, k := c.UserContext(), KeyOf(c)
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	purge := false
	switch c.Query("delete_transactions") {
	case "", "false":
	case "true":
		purge = true
		u, err := h.store.User(ctx, k.FamilyID, k.UserID)
		if err != nil {
			return err
		}
		if u.Role != models.RoleAdmin && u.Role != models.RoleSuperAdmin {
			return &httperr.Error{Status: fiber.StatusForbidden, Code: "forbidden", Message: "Only a family admin can delete imported transactions"}
		}
	default:
		return httperr.Invalid([]string{"delete_transactions must be true or false"})
	}
	// A purge that could not be queued fails the request, after the
	// disconnect.
	conn, err := h.connections.Disconnect(ctx, k.FamilyID, id, purge)
	if err != nil {
		return err
	}
	return h.respondConnection(c, conn)
}
