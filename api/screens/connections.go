package screens

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/jobs"
	"coffer/jobs/simplefin"
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
			card.Requests, _ = jobs.RequestsLast24h(ctx, h.redis, conn.ID, h.now())
		}
		d.Connections = append(d.Connections, card)
	}
	return h.pages.Render(c, status, "connections", web.Page{Title: "Bank connections", Error: msg, Data: d})
}

// tokenProblem is the user's sentence for a malformed setup token.
func (h *Handler) tokenProblem(token string) string {
	if _, err := simplefin.ParseSetupToken(token, h.simplefinHTTP); err != nil {
		var te *simplefin.TokenError
		if errors.As(err, &te) {
			return te.Message
		}
		return "The setup token is not valid."
	}
	return ""
}

func (h *Handler) createConnectionScreen(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	token := strings.TrimSpace(c.FormValue("setup_token"))
	if msg := h.tokenProblem(token); msg != "" {
		return h.connectionsPage(c, fiber.StatusUnprocessableEntity, msg)
	}
	name := strings.TrimSpace(c.FormValue("name"))
	if name == "" {
		name = "SimpleFIN"
	}
	if len(name) > maxName {
		return h.connectionsPage(c, fiber.StatusUnprocessableEntity, "Name must be at most 255 characters.")
	}
	conn := &models.Connection{FamilyID: u.FamilyID, Name: strings.Clone(name), CreatedBy: &u.ID}
	if v := strings.TrimSpace(c.FormValue("lookback_days")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 730 {
			return h.connectionsPage(c, fiber.StatusUnprocessableEntity, "History must be a whole number of days from 1 to 730.")
		}
		conn.LookbackDays = &n
	}
	if err := h.store.CreateConnection(c.UserContext(), conn, strings.Clone(token)); err != nil {
		return err
	}
	if c.FormValue("include_pending") == "" {
		conn.IncludePending = false
		if err := h.store.UpdateConnection(c.UserContext(), conn, "include_pending"); err != nil {
			return err
		}
	}
	h.enqueueClaim(c, conn)
	return h.site.Redirect(c, "/settings/connections", "Connecting to SimpleFIN Bridge…")
}

// screenConnection loads the connection named in the path, of the
// signed-in user's family.
func (h *Handler) screenConnection(c *fiber.Ctx) (*models.Connection, error) {
	id, err := httperr.PathID(c)
	if err != nil {
		return nil, err
	}
	return h.store.Connection(c.UserContext(), web.SessionOf(c).User.FamilyID, id)
}

func (h *Handler) syncConnectionScreen(c *fiber.Ctx) error {
	conn, err := h.screenConnection(c)
	if err != nil {
		return err
	}
	switch conn.Status {
	case models.ConnClaiming, models.ConnClaimFailed, models.ConnDisconnected:
		return h.site.Redirect(c, "/settings/connections", "This connection cannot sync now.")
	}
	sy, created, err := h.store.CreateSync(c.UserContext(), &models.Sync{FamilyID: conn.FamilyID, ConnectionID: conn.ID, Trigger: models.TriggerManual})
	if err != nil {
		return err
	}
	if created {
		if err := jobs.EnqueueSync(c.UserContext(), h.queue, sy, 0); err != nil {
			h.log.Error("enqueue sync", "request_id", httperr.RequestID(c), "sync_id", sy.ID, "error", err)
		}
		return h.site.Redirect(c, "/settings/connections", "Sync started.")
	}
	return h.site.Redirect(c, "/settings/connections", "A sync is already queued.")
}

func (h *Handler) reconnectScreen(c *fiber.Ctx) error {
	conn, err := h.screenConnection(c)
	if err != nil {
		return err
	}
	token := strings.TrimSpace(c.FormValue("setup_token"))
	if msg := h.tokenProblem(token); msg != "" {
		return h.connectionsPage(c, fiber.StatusUnprocessableEntity, msg)
	}
	if err := h.store.ReconnectConnection(c.UserContext(), conn, strings.Clone(token)); errors.Is(err, models.ErrConflict) {
		return h.site.Redirect(c, "/settings/connections", "The connection is already being claimed.")
	} else if err != nil {
		return err
	}
	h.enqueueClaim(c, conn)
	return h.site.Redirect(c, "/settings/connections", "Reconnecting…")
}

func (h *Handler) retryClaimScreen(c *fiber.Ctx) error {
	conn, err := h.screenConnection(c)
	if err != nil {
		return err
	}
	if err := h.store.RetryClaim(c.UserContext(), conn); errors.Is(err, models.ErrConflict) {
		return h.site.Redirect(c, "/settings/connections", "This claim cannot be retried; connect with a new token.")
	} else if err != nil {
		return err
	}
	h.enqueueClaim(c, conn)
	return h.site.Redirect(c, "/settings/connections", "Retrying the claim…")
}

func (h *Handler) disconnectScreen(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	conn, err := h.screenConnection(c)
	if err != nil {
		return err
	}
	purge := c.FormValue("delete_transactions") != ""
	if purge && u.Role != models.RoleAdmin && u.Role != models.RoleSuperAdmin {
		return h.connectionsPage(c, fiber.StatusForbidden, "Only a family admin can delete imported transactions.")
	}
	ended, err := h.store.DisconnectConnection(c.UserContext(), conn.FamilyID, conn.ID)
	if err != nil {
		return err
	}
	if h.redis != nil {
		jobs.ForgetConnection(c.UserContext(), h.redis, conn.ID, ended)
	}
	if purge {
		task, err := jobs.NewSimplefinPurgeTask(conn.FamilyID, conn.ID)
		if err == nil {
			_, err = h.queue.EnqueueContext(c.UserContext(), task)
		}
		if err != nil {
			h.log.Error("enqueue purge", "request_id", httperr.RequestID(c), "connection_id", conn.ID, "error", err)
		}
	}
	return h.site.Redirect(c, "/settings/connections", "Disconnected. Also revoke the access at SimpleFIN Bridge.")
}

func (h *Handler) linkAccountScreen(c *fiber.Ctx) error {
	conn, err := h.screenConnection(c)
	if err != nil {
		return err
	}
	paID, err := uuid.Parse(c.Params("account_id"))
	if err != nil {
		return httperr.NotFound()
	}
	pa, err := h.store.ProviderAccount(c.UserContext(), conn.FamilyID, paID)
	if err != nil {
		return err
	}
	if pa.ConnectionID != conn.ID {
		return httperr.NotFound()
	}
	var link *uuid.UUID
	if v := c.FormValue("account_id"); v != "" {
		id, err := uuid.Parse(v)
		if err != nil {
			return h.connectionsPage(c, fiber.StatusUnprocessableEntity, "Choose an account.")
		}
		link = &id
	}
	pa.ImportEnabled = c.FormValue("import_enabled") != ""
	err = h.store.UpdateProviderAccount(c.UserContext(), pa, link)
	var inv *models.InvalidError
	switch {
	case errors.Is(err, models.ErrConflict):
		return h.connectionsPage(c, fiber.StatusConflict, "That account is already linked to another bank account.")
	case errors.As(err, &inv):
		return h.connectionsPage(c, fiber.StatusUnprocessableEntity, strings.Join(inv.Problems, " "))
	case err != nil:
		return err
	}
	return h.site.Redirect(c, "/settings/connections", "Saved.")
}

// enqueueClaim queues a connection's claim after its row committed; a
// failure is only logged, because the sweeper queues claims that have no
// task.
func (h *Handler) enqueueClaim(c *fiber.Ctx, conn *models.Connection) {
	task, err := jobs.NewSimplefinClaimTask(conn.FamilyID, conn.ID, conn.ClaimSeq)
	if err == nil {
		_, err = h.queue.EnqueueContext(c.UserContext(), task)
	}
	if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
		h.log.Error("enqueue claim", "request_id", httperr.RequestID(c), "connection_id", conn.ID, "error", err)
	}
}
