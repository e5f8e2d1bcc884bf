package rest

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/jobs"
	"coffer/models"
	"coffer/models/importfile"
)

// A SureImport restores a family from the reference app's export: the
// ZIP its Family::DataExporter writes, or the all.ndjson in it (what the
// reference's own SureImport takes), sent as the multipart part "file".
// It is checked whole before anything is stored (a file that cannot be
// restored is a 422 naming the line), then stored and restored by a job,
// all or nothing, in one database transaction.

// sureDryRunKeys are the reference's dry-run totals, always answered.
var sureDryRunKeys = []string{"accounts", "categories", "tags", "merchants", "transactions", "trades", "valuations",
	"budgets", "budget_categories", "rules"}

// SureDryRun counts a scanned file's records by the reference's keys.
func SureDryRun(s *importfile.SureScan) map[string]int {
	out := map[string]int{}
	for _, k := range sureDryRunKeys {
		out[k] = 0
	}
	for typ, n := range s.Counts {
		out[models.SureKind(typ)] += n
	}
	return out
}

// SureLeftOut is a sentence for each kind of record the file holds that
// a restore does not write.
func SureLeftOut(s *importfile.SureScan) []string {
	written := map[string]bool{}
	for _, t := range importfile.SureTypes {
		written[t] = true
	}
	var out []string
	for typ, n := range s.Counts {
		switch {
		case typ == "Balance":
			out = append(out, fmt.Sprintf("%d daily balances are not kept: coffer derives balances from the valuations and transactions.", n))
		case !written[typ]:
			out = append(out, fmt.Sprintf("%d %s records are left out: coffer does not keep them.", n, typ))
		}
	}
	sort.Strings(out)
	return out
}

type sureRestoreJSON struct {
	ID          string                 `json:"id"`
	Type        string                 `json:"type"`
	Status      string                 `json:"status"` // importing, complete or failed
	Filename    *string                `json:"filename"`
	DryRun      map[string]int         `json:"dry_run"`
	Summary     *models.RestoreSummary `json:"summary"` // once complete
	Error       *string                `json:"error"`
	Warnings    []string               `json:"warnings"`
	CreatedAt   string                 `json:"created_at"`
	CompletedAt *string                `json:"completed_at"`
}

func renderRestore(r *models.Restore, warnings []string) sureRestoreJSON {
	if warnings == nil {
		warnings = []string{}
	}
	return sureRestoreJSON{ID: r.ID.String(), Type: importfile.Sure, Status: r.Status, Filename: r.Filename, DryRun: r.Counts(),
		Summary: r.Written(), Error: r.Error, Warnings: warnings, CreatedAt: timestamp(r.CreatedAt), CompletedAt: optTimestamp(r.CompletedAt)}
}

func (p *importParams) sureFile() error {
	if len(p.problems) > 0 || p.file == nil {
		if p.file == nil {
			p.problems = append(p.problems, "file (a multipart upload of the export's ZIP or its all.ndjson) is required")
		}
		return httperr.Invalid(p.problems)
	}
	return nil
}

// restoreSure checks and stores the file, then queues the job that
// writes it (after the commit, so the worker finds it): 202, importing.
func (h *Handler) restoreSure(c *fiber.Ctx, p *importParams) error {
	if err := p.sureFile(); err != nil {
		return err
	}
	r, scan, err := h.store.CreateRestore(c.UserContext(), KeyOf(c).FamilyID, p.filename, bytes.Clone(p.file))
	if err != nil {
		return err
	}
	task, err := jobs.NewRestoreRunTask(r.FamilyID, r.ID)
	if err != nil {
		return err
	}
	if err := jobs.EnqueueImport(c.UserContext(), h.queue, task); err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(dataJSON[sureRestoreJSON]{renderRestore(r, SureLeftOut(scan))})
}

func (h *Handler) showRestore(c *fiber.Ctx) error {
	r, err := byPathID(c, h.store.Restore)
	if err != nil {
		return err
	}
	return c.JSON(dataJSON[sureRestoreJSON]{renderRestore(r, nil)})
}

func (h *Handler) preflightSure(c *fiber.Ctx, p *importParams) error {
	if err := p.sureFile(); err != nil {
		return err
	}
	scan, err := importfile.ScanSure(p.file)
	if err != nil {
		return err
	}
	name, ctype := "all.ndjson", "application/x-ndjson"
	if bytes.HasPrefix(p.file, []byte("PK")) {
		name, ctype = "export.zip", "application/zip"
	}
	if p.filename != nil {
		name = *p.filename
	}
	out := preflightJSON{Type: importfile.Sure, Valid: true, Content: preflightContentJSON{Filename: name, ContentType: ctype, ByteSize: len(p.file)},
		Stats:   preflightStatsJSON{RowsCount: scan.Lines, ValidRowsCount: scan.Lines},
		Headers: []string{}, RequiredHeaders: []string{}, MissingRequiredHeaders: []string{}, Errors: []preflightErrorJSON{},
		Warnings: SureLeftOut(scan), Encoding: "UTF-8", Problems: []string{}, RowsCount: scan.Lines, ValidRowsCount: scan.Lines,
		SampleRows: []importRowJSON{}, DryRun: SureDryRun(scan), Configuration: config(importfile.DefaultSettings(), nil)}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	return c.JSON(dataJSON[preflightJSON]{out})
}
