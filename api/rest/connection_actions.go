package rest

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/jobs/simplefin"
	"coffer/models"
	"coffer/models/money"
)

type providerAccountJSON struct {
	ID               string  `json:"id"`
	Name             string  `json:"name"`
	OrgName          *string `json:"org_name"`
	Currency         string  `json:"currency"`
	Balance          *string `json:"balance"`
	AvailableBalance *string `json:"available_balance"`
	BalanceDate      *string `json:"balance_date"`
	AccountID        *string `json:"account_id"`
	ImportEnabled    bool    `json:"import_enabled"`
	Attention        *string `json:"attention"`
	LastSeenAt       *string `json:"last_seen_at"`
}

func optAmount(a *money.Amount) *string {
	if a == nil {
		return nil
	}
	s := a.String()
	return &s
}

func optID(id *uuid.UUID) *string {
	if id == nil {
		return nil
	}
	s := id.String()
	return &s
}

func renderProviderAccount(pa *models.ProviderAccount) providerAccountJSON {
	return providerAccountJSON{ID: pa.ID.String(), Name: pa.Name, OrgName: pa.OrgName, Currency: pa.Currency,
		Balance: optAmount(pa.Balance), AvailableBalance: optAmount(pa.AvailableBalance), BalanceDate: optTimestamp(pa.BalanceDate),
		AccountID: optID(pa.AccountID), ImportEnabled: pa.ImportEnabled, Attention: pa.Attention, LastSeenAt: optTimestamp(pa.LastSeenAt)}
}

// describeConnections renders connections with their remote accounts,
// next sync and request budget use: one query for all their accounts, one
// for their active syncs and one Redis round trip, whatever their number.
func (h *Handler) describeConnections(c *fiber.Ctx, conns []models.Connection) ([]connectionJSON, error) {
	ctx := c.UserContext()
	out := make([]connectionJSON, len(conns))
	if len(conns) == 0 {
		return out, nil
	}
	fam := conns[0].FamilyID
	ids := make([]uuid.UUID, len(conns))
	for i := range conns {
		ids[i] = conns[i].ID
	}
	accounts, err := h.store.ProviderAccountsOf(ctx, fam, ids)
	if err != nil {
		return nil, err
	}
	active, err := h.store.ActiveSyncs(ctx, fam, ids)
	if err != nil {
		return nil, err
	}
	var used map[uuid.UUID]int
	if h.redis != nil {
		if used, err = simplefin.RequestsLast24hOf(ctx, h.redis, ids, h.now()); err != nil {
			// The ledger answers without it; the budget itself is enforced by the worker.
			h.log.Warn("request budget unreadable", "request_id", httperr.RequestID(c), "error", err)
		}
	}
	for i := range conns {
		conn := &conns[i]
		out[i] = h.renderConnection(conn)
		pas := accounts[conn.ID]
		out[i].Accounts = renderAll(pas, renderProviderAccount)
		out[i].NextSyncAt = optTimestamp(h.calendar.NextSync(conn, active[conn.ID], h.now()))
		if n, ok := used[conn.ID]; ok {
			out[i].RequestsLast24h = &n
		}
	}
	return out, nil
}

// respondConnection answers with one connection as describeConnections
// renders it.
func (h *Handler) respondConnection(c *fiber.Ctx, conn *models.Connection) error {
	out, err := h.describeConnections(c, []models.Connection{*conn})
	if err != nil {
		return err
	}
	return c.JSON(out[0])
}

// connectionSettings reads include_pending and lookback_days (1 to 730).
func connectionSettings(f *fields) (includePending *bool, lookback *int) {
	if f.has("include_pending") {
		var b bool
		if err := json.Unmarshal(f.raw["include_pending"], &b); err != nil {
			f.add("include_pending must be true or false")
		} else {
			includePending = &b
		}
	}
	if f.has("lookback_days") && !f.isNull("lookback_days") {
		var n int
		if err := json.Unmarshal(f.raw["lookback_days"], &n); err != nil || n < 1 || n > 730 {
			f.add("lookback_days must be a whole number from 1 to 730")
		} else {
			lookback = &n
		}
	}
	return includePending, lookback
}

// connectionObject returns the members under "provider_connection" when
// the body is resource-wrapped, like every other write body; otherwise f.
func connectionObject(f *fields) (*fields, error) {
	inner, ok := f.raw["provider_connection"]
	if !ok {
		return f, nil
	}
	raw, err := objectMembers(inner)
	if err != nil {
		return nil, httperr.BadRequest("The request body's \"provider_connection\" must be an object")
	}
	return &fields{raw: raw}, nil
}

func conflict(msg string) error {
	return &httperr.Error{Status: fiber.StatusConflict, Code: "conflict", Message: msg}
}

// updateConnection changes a connection's settings, or reconnects it with
// a new setup token (202: the claim runs in the background).
func (h *Handler) updateConnection(c *fiber.Ctx) error {
	ctx, k := c.UserContext(), KeyOf(c)
	id, f, err := idAndObject(c, "")
	if err != nil {
		return err
	}
	if f, err = connectionObject(f); err != nil {
		return err
	}
	name, _ := f.str("name", maxName, true)
	token, _ := f.str("setup_token", 4096, false)
	includePending, lookback := connectionSettings(f)
	if f.has("name") && name == "" {
		f.add("name can't be blank")
	}
	if err := f.err(); err != nil {
		return err
	}
	ch := simplefin.ConnectionChange{IncludePending: includePending, SetLookback: f.has("lookback_days"), LookbackDays: lookback}
	if f.has("name") {
		ch.Name = &name
	}
	if f.has("setup_token") {
		ch.SetupToken = &token
	}
	conn, err := h.connections.Update(ctx, k.FamilyID, id, ch)
	if err != nil {
		return connectionError(err)
	}
	if ch.SetupToken != nil {
		return c.Status(fiber.StatusAccepted).JSON(h.renderConnection(conn))
	}
	return h.respondConnection(c, conn)
}

// retryClaim claims again with the kept token of a retryable failure.
func (h *Handler) retryClaim(c *fiber.Ctx) error {
	conn, err := byPathID(c, h.connections.RetryClaim)
	if err != nil {
		return connectionError(err)
	}
	return c.Status(fiber.StatusAccepted).JSON(h.renderConnection(conn))
}

// syncConnection is Sync now: 202 with a new sync, or 200 with the one
// already queued or running (no second task). A scheduled sync still
// waiting for its jitter runs at once; a deferred one keeps its time.
func (h *Handler) syncConnection(c *fiber.Ctx) error {
	ctx, k := c.UserContext(), KeyOf(c)
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	full := false
	if len(c.Body()) > 0 {
		f, err := decodeObject(c, "")
		if err != nil {
			return err
		}
		if f.has("full") {
			if err := json.Unmarshal(f.raw["full"], &full); err != nil {
				return httperr.Invalid([]string{"full must be true or false"})
			}
		}
	}
	start, err := h.connections.StartSync(ctx, k.FamilyID, id, full)
	if err != nil {
		return connectionError(err)
	}
	if start.Created {
		return c.Status(fiber.StatusAccepted).JSON(renderSync(start.Sync))
	}
	return c.JSON(renderSync(start.Sync))
}

// updateProviderAccount links a remote account to an existing ledger
// account of the same currency, or switches its import on or off.
func (h *Handler) updateProviderAccount(c *fiber.Ctx) error {
	ctx, k := c.UserContext(), KeyOf(c)
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	paID, err := uuid.Parse(c.Params("account_id"))
	if err != nil {
		return httperr.NotFound()
	}
	f, err := decodeObject(c, "")
	if err != nil {
		return err
	}
	link := f.id("account_id")
	var enabled *bool
	if f.has("import_enabled") {
		var b bool
		if err := json.Unmarshal(f.raw["import_enabled"], &b); err != nil {
			f.add("import_enabled must be true or false")
		}
		enabled = &b
	}
	if err := f.err(); err != nil {
		return err
	}
	pa, err := h.connections.LinkAccount(ctx, k.FamilyID, id, paID, link, enabled)
	if err != nil {
		return connectionError(err)
	}
	return c.JSON(renderProviderAccount(pa))
}
