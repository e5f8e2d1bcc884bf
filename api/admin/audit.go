package admin

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"coffer/api/web"
	"coffer/models"
)

var auditRanges = map[string]time.Duration{"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour, "90d": 90 * 24 * time.Hour, "all": 0}

type auditData struct {
	Logs                 []models.AuditLog
	Events, Ranges       []string
	EventType, Range     string
	Query                string
	Page                 int
	More                 bool
	PrevQuery, NextQuery string
}

// auditFilter reads event_type and range; unknown values fall back to the
// defaults and say so.
func (h *Handler) auditFilter(c *fiber.Ctx) (models.AuditFilter, string, string, string) {
	var f models.AuditFilter
	var notice string
	event, rng := c.Query("event_type"), c.Query("range", "7d")
	known := event == ""
	for _, e := range models.AuditEvents {
		known = known || e == event
	}
	if !known {
		event, notice = "", "Unknown filter value ignored."
	}
	window, ok := auditRanges[rng]
	if !ok {
		rng, window, notice = "7d", auditRanges["7d"], "Unknown filter value ignored."
	}
	f.EventType = strings.Clone(event)
	if window > 0 {
		f.Since = h.now().UTC().Add(-window)
	}
	return f, f.EventType, strings.Clone(rng), notice
}

func (h *Handler) adminAuditLogs(c *fiber.Ctx) error {
	f, event, rng, notice := h.auditFilter(c)
	p := models.Page{Number: 1, Size: 50}
	if n, err := strconv.Atoi(c.Query("page")); err == nil && n > 0 && n <= 100_000 {
		p.Number = n
	}
	logs, more, err := h.store.AuditLogPage(c.UserContext(), f, p)
	if err != nil {
		return err
	}
	q := url.Values{"event_type": {event}, "range": {rng}}
	query := q.Encode()
	link := func(n int) string { q.Set("page", strconv.Itoa(n)); return q.Encode() }
	ranges := []string{"24h", "7d", "30d", "90d", "all"}
	return h.pages.Render(c, fiber.StatusOK, "audit", web.Page{Title: "Audit log", Flash: notice, Data: auditData{
		Logs: logs, Events: models.AuditEvents, Ranges: ranges, EventType: event, Range: rng, Query: query,
		Page: p.Number, More: more, PrevQuery: link(p.Number - 1), NextQuery: link(p.Number + 1),
	}})
}

// adminAuditExport streams the filtered records as CSV, batch by batch.
func (h *Handler) adminAuditExport(c *fiber.Ctx) error {
	f, _, _, _ := h.auditFilter(c)
	ctx := c.UserContext()
	store := h.store
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="sso_audit_logs.csv"`)
	c.Set("Cache-Control", "no-store")
	// Check the query once before streaming, so a failure is still a
	// proper error page rather than a cut-off file.
	if _, _, err := store.AuditLogPage(ctx, f, models.Page{Number: 1, Size: 1}); err != nil {
		return err
	}
	// The stream is written after the handler returns, when the request's
	// deadline has been cancelled; a client that goes away ends it instead.
	ctx = context.WithoutCancel(ctx)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		out := csv.NewWriter(w)
		_ = out.Write([]string{"id", "created_at", "event_type", "user_id", "user_email", "provider", "ip", "user_agent", "metadata"})
		err := store.EachAuditLog(ctx, f, 1000, func(l *models.AuditLog) error {
			meta, _ := json.Marshal(l.Metadata)
			return out.Write([]string{
				l.ID.String(), l.CreatedAt.UTC().Format(time.RFC3339), l.EventType, optUUID(l.UserID),
				csvCell(deref(l.UserEmail)), csvCell(deref(l.Provider)), csvCell(deref(l.IP)), csvCell(deref(l.UserAgent)), csvCell(string(meta)),
			})
		})
		out.Flush()
		if err != nil {
			h.log.Error("audit export stopped", "error", err)
		}
	})
	return nil
}

// csvCell defuses text a spreadsheet would run as a formula.
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func optUUID[T interface{ String() string }](id *T) string {
	if id == nil {
		return ""
	}
	return (*id).String()
}
