package screens

import (
	"bufio"
	"context"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/jobs"
	"coffer/models"
)

// exportsShown is how many past exports the household screen lists.
const exportsShown = 10

// exportSize is a ZIP's size for people ("2.4 MB").
func exportSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// createExport queues an export of the household's whole data (the
// reference's "Export data").
func (h *Handler) createExport(c *fiber.Ctx) error {
	ctx, u := c.UserContext(), web.SessionOf(c).User
	e, err := h.store.CreateFamilyExport(ctx, u.FamilyID)
	if err != nil {
		return err
	}
	if err := jobs.EnqueueFamilyExport(ctx, h.queue, u.FamilyID, e.ID); err != nil {
		h.log.Error("family export not queued", "family_id", u.FamilyID, "export_id", e.ID, "error", err)
		_ = h.store.FailFamilyExport(context.WithoutCancel(ctx), u.FamilyID, e.ID, "The export could not be queued")
		return h.site.Redirect(c, "/settings/family#exports", "The export could not be started. Try again later.")
	}
	return h.site.Redirect(c, "/settings/family#exports", "Export started. You'll be able to download it shortly.")
}

// downloadExport sends a completed export's ZIP; one not ready goes back
// to the list with the reference's message.
func (h *Handler) downloadExport(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	e, err := h.store.FamilyExport(c.UserContext(), u.FamilyID, id)
	if err != nil {
		return err
	}
	if !e.Downloadable() {
		return h.site.Redirect(c, "/settings/family#exports", "Export not ready for download")
	}
	c.Set(fiber.HeaderContentType, "application/zip")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+e.Filename()+`"`)
	c.Set("Cache-Control", "no-store")
	familyID, exportID, store, log := e.FamilyID, e.ID, h.store, h.log
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		if err := store.WriteFamilyExportFile(context.Background(), familyID, exportID, w); err != nil {
			log.Error("family export download broke off", "family_id", familyID, "export_id", exportID, "error", err)
		}
		_ = w.Flush()
	})
	return nil
}

// recentExports are the household's latest exports, for its screen.
func (h *Handler) recentExports(c *fiber.Ctx) ([]models.FamilyExport, error) {
	es, _, err := h.store.FamilyExports(c.UserContext(), web.SessionOf(c).User.FamilyID, models.Page{Number: 1, Size: exportsShown})
	return es, err
}
