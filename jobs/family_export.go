package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// TypeFamilyExport writes a family's whole data as the reference app's
// export ZIP (POST /api/v1/family_exports, the settings screen).
const TypeFamilyExport = "family:export"

// FamilyExportPayload names the export.
type FamilyExportPayload struct {
	FamilyID uuid.UUID `json:"family_id"`
	ExportID uuid.UUID `json:"export_id"`
}

// NewFamilyExportTask builds the job of one export, unique by the export.
func NewFamilyExportTask(familyID, exportID uuid.UUID) (*asynq.Task, error) {
	return NewTask(TypeFamilyExport, FamilyExportPayload{FamilyID: familyID, ExportID: exportID},
		asynq.TaskID(TypeFamilyExport+":"+exportID.String()), asynq.Queue(QueueLow), asynq.MaxRetry(3),
		asynq.Timeout(30*time.Minute))
}

// EnqueueFamilyExport queues the job of an export; one already queued
// for it is left as it is.
func EnqueueFamilyExport(ctx context.Context, q *asynq.Client, familyID, exportID uuid.UUID) error {
	t, err := NewFamilyExportTask(familyID, exportID)
	if err != nil {
		return err
	}
	if err := EnqueueOnce(ctx, q, t); err != nil {
		return fmt.Errorf("jobs: enqueue family export: %w", err)
	}
	return nil
}

// FamilyExport handles TypeFamilyExport. A completed export is left alone
// (a retry does nothing); any other starts over, its earlier file removed.
// The last attempt that fails marks the export failed.
func (h *Handlers) FamilyExport(ctx context.Context, t *asynq.Task) error {
	var p FamilyExportPayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	start, err := h.Store.StartFamilyExport(ctx, p.FamilyID, p.ExportID)
	if err != nil || !start {
		return IgnoreNotFound(err)
	}
	f := h.Store.FamilyExportFile(ctx, p.FamilyID, p.ExportID)
	err = h.Store.WriteFamilyData(ctx, p.FamilyID, f)
	if err == nil {
		err = f.Close()
	}
	if err == nil {
		err = h.Store.FinishFamilyExport(ctx, p.FamilyID, p.ExportID, f.Size())
	}
	if err != nil {
		retried, _ := asynq.GetRetryCount(ctx)
		maxRetry, _ := asynq.GetMaxRetry(ctx)
		if retried >= maxRetry {
			if ferr := h.Store.FailFamilyExport(context.WithoutCancel(ctx), p.FamilyID, p.ExportID,
				"The export could not be written"); ferr != nil {
				h.logger(ctx, t).Error("family export not marked failed", "family_id", p.FamilyID, "error", ferr)
			}
		}
		return err
	}
	h.logger(ctx, t).Info("family exported", "family_id", p.FamilyID, "export_id", p.ExportID, "bytes", f.Size())
	return nil
}
