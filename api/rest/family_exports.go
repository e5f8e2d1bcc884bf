package rest

import (
	"bufio"
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/jobs"
	"coffer/models"
)

// familyExportJSON is an export of the family's whole data.
type familyExportJSON struct {
	ID          uuid.UUID  `json:"id"`
	Status      string     `json:"status"`
	Filename    string     `json:"filename"`
	ByteSize    *int64     `json:"byte_size"`
	Error       *string    `json:"error"`
	DownloadURL *string    `json:"download_url"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	CompletedAt *time.Time `json:"completed_at"`
}

func renderFamilyExport(e *models.FamilyExport) familyExportJSON {
	out := familyExportJSON{ID: e.ID, Status: e.Status, Filename: e.Filename(), Error: e.Error,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, CompletedAt: e.CompletedAt}
	if e.Downloadable() {
		out.ByteSize = &e.ByteSize
		out.DownloadURL = models.Ptr("/api/v1/family_exports/" + e.ID.String() + "/download")
	}
	return out
}

// createFamilyExport is POST /api/v1/family_exports: a family admin asks
// for an export; it is built in the background (202, the export pending).
func (h *Handler) createFamilyExport(c *fiber.Ctx) error {
	u, err := h.adminOf(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	e, err := h.store.CreateFamilyExport(ctx, u.FamilyID)
	if err != nil {
		return err
	}
	if err := jobs.EnqueueFamilyExport(ctx, h.queue, u.FamilyID, e.ID); err != nil {
		h.log.Error("family export not queued", "family_id", u.FamilyID, "export_id", e.ID, "error", err)
		_ = h.store.FailFamilyExport(context.WithoutCancel(ctx), u.FamilyID, e.ID, "The export could not be queued")
		return httperr.New(fiber.StatusInternalServerError, "export_enqueue_failed", "The export could not be queued")
	}
	return c.Status(fiber.StatusAccepted).JSON(dataJSON[familyExportJSON]{renderFamilyExport(e)})
}

func (h *Handler) listFamilyExports(c *fiber.Ctx) error {
	u, err := h.adminOf(c)
	if err != nil {
		return err
	}
	page, err := parsePage(c)
	if err != nil {
		return err
	}
	es, total, err := h.store.FamilyExports(c.UserContext(), u.FamilyID, page)
	if err != nil {
		return err
	}
	return c.JSON(dataListJSON[familyExportJSON]{Data: renderAll(es, renderFamilyExport), Meta: metaOf(page, total)})
}

func (h *Handler) showFamilyExport(c *fiber.Ctx) error {
	if _, err := h.adminOf(c); err != nil {
		return err
	}
	e, err := byPathID(c, h.store.FamilyExport)
	if err != nil {
		return err
	}
	return c.JSON(dataJSON[familyExportJSON]{renderFamilyExport(e)})
}

// downloadFamilyExport is GET /api/v1/family_exports/:id/download: the
// ZIP of a completed export, streamed from its chunks; one not completed
// yet is a 422 (the reference's "Export not ready for download").
func (h *Handler) downloadFamilyExport(c *fiber.Ctx) error {
	if _, err := h.adminOf(c); err != nil {
		return err
	}
	e, err := byPathID(c, h.store.FamilyExport)
	if err != nil {
		return err
	}
	if !e.Downloadable() {
		return httperr.New(fiber.StatusUnprocessableEntity, "export_not_ready", "Export not ready for download")
	}
	c.Set(fiber.HeaderContentType, "application/zip")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+e.Filename()+`"`)
	familyID, id, store, log := e.FamilyID, e.ID, h.store, h.log
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		// The handler has returned: the request's context is gone, the ids
		// above are copies.
		if err := store.WriteFamilyExportFile(context.Background(), familyID, id, w); err != nil {
			log.Error("family export download broke off", "family_id", familyID, "export_id", id, "error", err)
		}
		_ = w.Flush()
	})
	return nil
}
