package screens

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge"
	"coffer/models"
)

type connectionCard struct {
	Conn     models.Connection
	Accounts []accountRow
	Syncs    []models.Sync
	// AccountNames names the remote accounts of the sync history's steps.
	AccountNames map[string]string
	NextSync     *time.Time // nil: none coming until the user acts
	Requests     int
	Budget       int
}

type accountRow struct {
	models.ProviderAccount
	BalanceText string
	NotSeen     bool
	Choices     []models.Account
}

type connectionsData struct {
	Connections []connectionCard
}

// connectionsScreen shows the family's connections, with their remote
// accounts, budget use and sync history.
func (h *Handler) connectionsScreen(c *fiber.Ctx) error {
	return h.connectionsPage(c, fiber.StatusOK, "")
}

func (h *Handler) connectionsPage(c *fiber.Ctx, status int, msg string) error {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	conns, _, err := h.store.Connections(ctx, fam, models.Page{Number: 1, Size: 100})
	if err != nil {
		return err
	}
	accounts, _, err := h.store.Accounts(ctx, fam, models.Page{Number: 1, Size: 100})
	if err != nil {
		return err
	}
	ids := make([]uuid.UUID, len(conns))
	for i := range conns {
		ids[i] = conns[i].ID
	}
	remote, err := h.store.ProviderAccountsOf(ctx, fam, ids)
	if err != nil {
		return err
	}
	active, err := h.store.ActiveSyncs(ctx, fam, ids)
	if err != nil {
		return err
	}
	d := connectionsData{}
	for _, conn := range conns {
		card := connectionCard{Conn: conn, Budget: h.dailyBudget, NextSync: h.calendar.NextSync(&conn, active[conn.ID], h.now())}
		pas := remote[conn.ID]
		latest := time.Time{}
		for _, pa := range pas {
			if pa.LastSeenAt != nil && pa.LastSeenAt.After(latest) {
				latest = *pa.LastSeenAt
			}
		}
		for _, pa := range pas {
			row := accountRow{ProviderAccount: pa, BalanceText: "–"}
			if pa.Balance != nil {
				row.BalanceText = pa.Balance.String()
			}
			row.NotSeen = pa.LastSeenAt != nil && latest.Sub(*pa.LastSeenAt) > time.Hour
			for _, a := range accounts {
				if a.Currency == pa.Currency {
					row.Choices = append(row.Choices, a)
				}
			}
			card.Accounts = append(card.Accounts, row)
		}
		if card.Syncs, _, err = h.store.Syncs(ctx, fam, models.SyncFilter{ConnectionID: &conn.ID}, models.Page{Number: 1, Size: 10}); err != nil {
			return err
		}
		if err := h.store.AttachChildren(ctx, fam, card.Syncs); err != nil {
			return err
		}
		card.AccountNames = make(map[string]string, len(pas))
		for _, pa := range pas {
			card.AccountNames[pa.ID.String()] = pa.Name
		}
		if h.redis != nil {
			card.Requests, _ = simplefin.RequestsLast24h(ctx, h.redis, conn.ID, h.now())
		}
		d.Connections = append(d.Connections, card)
	}
	return h.pages.Render(c, status, "connections", web.Page{Title: "Bank connections", Error: msg, Data: d})
}

// connectionProblem is the user's sentence, and its status, for what
// simplefin.Actions refuse; "" for any other error.
func connectionProblem(err error) (int, string) {
	var te *bridge.TokenError
	var inv *models.InvalidError
	switch {
	case errors.As(err, &te):
		return fiber.StatusUnprocessableEntity, te.Message
	case errors.As(err, &inv):
		return fiber.StatusUnprocessableEntity, strings.Join(inv.Problems, " ")
	case errors.Is(err, simplefin.ErrLinkedElsewhere):
		return fiber.StatusConflict, "That account is already linked to another bank account."
	}
	return 0, ""
}

func (h *Handler) createConnectionScreen(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	name := strings.TrimSpace(c.FormValue("name"))
	if len(name) > maxName {
		return h.connectionsPage(c, fiber.StatusUnprocessableEntity, "Name must be at most 255 characters.")
	}
	n := simplefin.NewConnection{FamilyID: u.FamilyID, CreatedBy: u.ID, Name: strings.Clone(name),
		SetupToken: strings.Clone(c.FormValue("setup_token")), IncludePending: c.FormValue("include_pending") != ""}
	if v := strings.TrimSpace(c.FormValue("lookback_days")); v != "" {
		days, err := strconv.Atoi(v)
		if err != nil || days < 1 || days > 730 {
			return h.connectionsPage(c, fiber.StatusUnprocessableEntity, "History must be a whole number of days from 1 to 730.")
		}
		n.LookbackDays = &days
	}
	if _, err := h.connections.Connect(c.UserContext(), n); err != nil {
		if status, msg := connectionProblem(err); msg != "" {
			return h.connectionsPage(c, status, msg)
		}
		return err
	}
	return h.site.Redirect(c, "/settings/connections", "Connecting to SimpleFIN Bridge…")
}

// connectionID is the connection named in the path.
func connectionID(c *fiber.Ctx) (familyID, id uuid.UUID, err error) {
	id, err = httperr.PathID(c)
	return web.SessionOf(c).User.FamilyID, id, err
}

func (h *Handler) syncConnectionScreen(c *fiber.Ctx) error {
	fam, id, err := connectionID(c)
	if err != nil {
		return err
	}
	start, err := h.connections.StartSync(c.UserContext(), fam, id, false)
	var se *simplefin.StateError
	switch {
	case errors.As(err, &se):
		return h.site.Redirect(c, "/settings/connections", "This connection cannot sync now.")
	case err != nil:
		return err
	case !start.Created:
		return h.site.Redirect(c, "/settings/connections", "A sync is already queued.")
	case start.WaitsForBudget:
		return h.site.Redirect(c, "/settings/connections", "The request budget is used up: the sync starts at "+
			start.Sync.NotBefore.UTC().Format("2006-01-02 15:04")+" UTC.")
	}
	return h.site.Redirect(c, "/settings/connections", "Sync started.")
}

func (h *Handler) reconnectScreen(c *fiber.Ctx) error {
	fam, id, err := connectionID(c)
	if err != nil {
		return err
	}
	token := strings.Clone(c.FormValue("setup_token"))
	_, err = h.connections.Update(c.UserContext(), fam, id, simplefin.ConnectionChange{SetupToken: &token})
	if errors.Is(err, simplefin.ErrClaiming) {
		return h.site.Redirect(c, "/settings/connections", "The connection is already being claimed.")
	}
	if status, msg := connectionProblem(err); msg != "" {
		return h.connectionsPage(c, status, msg)
	}
	if err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/connections", "Reconnecting…")
}

func (h *Handler) retryClaimScreen(c *fiber.Ctx) error {
	fam, id, err := connectionID(c)
	if err != nil {
		return err
	}
	if _, err := h.connections.RetryClaim(c.UserContext(), fam, id); errors.Is(err, simplefin.ErrNotRetryable) {
		return h.site.Redirect(c, "/settings/connections", "This claim cannot be retried; connect with a new token.")
	} else if err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/connections", "Retrying the claim…")
}

func (h *Handler) disconnectScreen(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	fam, id, err := connectionID(c)
	if err != nil {
		return err
	}
	purge := c.FormValue("delete_transactions") != ""
	if purge && u.Role != models.RoleAdmin && u.Role != models.RoleSuperAdmin {
		return h.connectionsPage(c, fiber.StatusForbidden, "Only a family admin can delete imported transactions.")
	}
	// A purge that could not be queued is logged: the connection is
	// disconnected, which is what the page says.
	if _, err := h.connections.Disconnect(c.UserContext(), fam, id, purge); errors.Is(err, simplefin.ErrPurgeNotQueued) {
		h.log.Error("enqueue purge", "request_id", httperr.RequestID(c), "connection_id", id, "error", err)
	} else if err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/connections", "Disconnected. Also revoke the access at SimpleFIN Bridge.")
}

func (h *Handler) linkAccountScreen(c *fiber.Ctx) error {
	fam, id, err := connectionID(c)
	if err != nil {
		return err
	}
	paID, err := uuid.Parse(c.Params("account_id"))
	if err != nil {
		return httperr.NotFound()
	}
	var link *uuid.UUID
	if v := c.FormValue("account_id"); v != "" {
		account, err := uuid.Parse(v)
		if err != nil {
			return h.connectionsPage(c, fiber.StatusUnprocessableEntity, "Choose an account.")
		}
		link = &account
	}
	enabled := c.FormValue("import_enabled") != ""
	if _, err := h.connections.LinkAccount(c.UserContext(), fam, id, paID, link, &enabled); err != nil {
		if status, msg := connectionProblem(err); msg != "" {
			return h.connectionsPage(c, status, msg)
		}
		return err
	}
	return h.site.Redirect(c, "/settings/connections", "Saved.")
}
