package rest

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/models"
)

type syncJSON struct {
	ID                   string            `json:"id"`
	ProviderConnectionID string            `json:"provider_connection_id"`
	ParentID             *string           `json:"parent_id"`
	ProviderAccountID    *string           `json:"provider_account_id"`
	Kind                 string            `json:"kind"`
	Trigger              string            `json:"trigger"`
	Full                 bool              `json:"full"`
	Status               string            `json:"status"`
	WindowStart          *string           `json:"window_start"`
	WindowEnd            *string           `json:"window_end"`
	NotBefore            string            `json:"not_before"`
	StartedAt            *string           `json:"started_at"`
	FinishedAt           *string           `json:"finished_at"`
	RequestsUsed         int               `json:"requests_used"`
	Counts               models.SyncCounts `json:"counts"`
	Warnings             []string          `json:"warnings"`
	Error                *string           `json:"error"`
	CreatedAt            string            `json:"created_at"`
	Children             *[]syncJSON       `json:"children,omitempty"` // detail views only, [] when none
}

func renderSync(sy *models.Sync) syncJSON {
	out := syncJSON{ID: sy.ID.String(), ProviderConnectionID: sy.ConnectionID.String(), ParentID: optID(sy.ParentID),
		ProviderAccountID: optID(sy.ProviderAccountID), Kind: sy.Kind, Trigger: sy.Trigger, Full: sy.Full, Status: sy.Status,
		WindowStart: optTimestamp(sy.WindowStart), WindowEnd: optTimestamp(sy.WindowEnd), NotBefore: timestamp(sy.NotBefore),
		StartedAt: optTimestamp(sy.StartedAt), FinishedAt: optTimestamp(sy.FinishedAt), RequestsUsed: sy.RequestsUsed,
		Counts: sy.SyncCounts, Warnings: sy.Warnings, Error: sy.Error, CreatedAt: timestamp(sy.CreatedAt)}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	return out
}

// renderSyncDetail is a sync with its children, as the detail views show it.
func renderSyncDetail(sy *models.Sync) syncJSON {
	out := renderSync(sy)
	children := renderAll(sy.Children, renderSync)
	out.Children = &children
	return out
}

type syncsJSON struct {
	Syncs      []syncJSON `json:"syncs"`
	Pagination Pagination `json:"pagination"`
}

// syncFilter reads provider_connection_id and status; a value that can
// name nothing is a 422.
func syncFilter(c *fiber.Ctx) (models.SyncFilter, error) {
	var f models.SyncFilter
	var problems []string
	if v := c.Query("provider_connection_id"); v != "" {
		id, err := uuid.Parse(v)
		if err != nil {
			problems = append(problems, "provider_connection_id must be a UUID")
		}
		f.ConnectionID = &id
	}
	switch v := c.Query("status"); v {
	case "", models.SyncPending, models.SyncRunning, models.SyncCompleted, models.SyncFailed:
		f.Status = v
	default:
		problems = append(problems, "status must be one of: pending, running, completed, failed")
	}
	if len(problems) > 0 {
		return f, httperr.Invalid(problems)
	}
	return f, nil
}

func (h *Handler) listSyncs(c *fiber.Ctx) error {
	f, err := syncFilter(c)
	if err != nil {
		return err
	}
	syncs, pg, err := listPage(c, withFilter(h.store.Syncs, f), renderSync)
	if err != nil {
		return err
	}
	return c.JSON(syncsJSON{Syncs: syncs, Pagination: pg})
}

func (h *Handler) latestSync(c *fiber.Ctx) error {
	f, err := syncFilter(c)
	if err != nil {
		return err
	}
	sy, err := h.store.LatestSync(c.UserContext(), KeyOf(c).FamilyID, f.ConnectionID)
	if err != nil {
		return err
	}
	return c.JSON(renderSyncDetail(sy))
}

func (h *Handler) showSync(c *fiber.Ctx) error {
	return showOne(c, h.store.Sync, renderSyncDetail)
}
