package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/models"
)

// TypeImportPublish writes a published file import's rows to its account.
const TypeImportPublish = "import:publish"

// TypeImportRevert removes the transactions a file import wrote.
const TypeImportRevert = "import:revert"

// ImportPayload names the import.
type ImportPayload struct {
	FamilyID uuid.UUID `json:"family_id"`
	ImportID uuid.UUID `json:"import_id"`
}

// importMaxRetry is how often an import job is retried before the import
// is marked failed.
const importMaxRetry = 8

// NewImportPublishTask builds the job of an import published at
// publishedAt. Its task id names the publication, so the same one is
// queued once, and a later one (after a revert) is not mistaken for it.
func NewImportPublishTask(familyID, importID uuid.UUID, publishedAt time.Time) (*asynq.Task, error) {
	return NewTask(TypeImportPublish, ImportPayload{FamilyID: familyID, ImportID: importID},
		asynq.TaskID(fmt.Sprintf("%s:%s:%d", TypeImportPublish, importID, publishedAt.UnixMicro())), asynq.Queue(QueueDefault),
		asynq.MaxRetry(importMaxRetry), asynq.Timeout(30*time.Minute))
}

// NewImportRevertTask builds the revert of an import asked for at at (its
// updated_at when it became reverting).
func NewImportRevertTask(familyID, importID uuid.UUID, at time.Time) (*asynq.Task, error) {
	return NewTask(TypeImportRevert, ImportPayload{FamilyID: familyID, ImportID: importID},
		asynq.TaskID(fmt.Sprintf("%s:%s:%d", TypeImportRevert, importID, at.UnixMicro())), asynq.Queue(QueueDefault),
		asynq.MaxRetry(importMaxRetry), asynq.Timeout(10*time.Minute))
}

// ImportTask is the task that carries an importing or reverting import on.
func ImportTask(im *models.Import) (*asynq.Task, error) {
	if im.Status == models.ImportReverting {
		return NewImportRevertTask(im.FamilyID, im.ID, im.UpdatedAt)
	}
	var at time.Time
	if im.PublishedAt != nil {
		at = *im.PublishedAt
	}
	return NewImportPublishTask(im.FamilyID, im.ID, at)
}

// EnqueueImport queues t, an import job; one already queued for the import
// is the same work.
func EnqueueImport(ctx context.Context, q *asynq.Client, t *asynq.Task) error {
	if err := EnqueueOnce(ctx, q, t); err != nil {
		return fmt.Errorf("jobs: enqueue %s: %w", t.Type(), err)
	}
	return nil
}

// ImportPublish handles TypeImportPublish: it runs the import's steps
// (models.ImportStep, one batch per database transaction) until none is
// left; the store reports the balances it changed (see Balances). Each step commits its
// rows with their outcomes, so a run cut short (a worker killed, a
// deploy) resumes where the last commit left it; an import that is no
// longer importing ends the run. After the last retry the import is
// marked failed, keeping what was written (a revert removes it).
func (h *Handlers) ImportPublish(ctx context.Context, t *asynq.Task) error {
	var p ImportPayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	run := &models.ImportRun{}
	for {
		im, done, err := h.Store.ImportStep(ctx, p.FamilyID, p.ImportID, run)
		if errors.Is(err, models.ErrNotFound) {
			return nil // deleted with its family or account
		}
		if err != nil {
			return h.importFailed(ctx, t, p, models.ImportFailed, err)
		}
		if done {
			if im.Status == models.ImportComplete {
				h.logger(ctx, t).Info("import complete", "import_id", im.ID, "imported", im.ImportedRowsCount,
					"duplicates", im.DuplicateRowsCount)
				// New rows may complete a recurring series; the nightly sweep
				// catches a detection that could not be queued.
				if err := QueueRecurringDetect(ctx, h.Queue, p.FamilyID); err != nil {
					h.logger(ctx, t).Warn("recurring detection not queued", slog.Any("error", err))
				}
			}
			return nil
		}
		h.hook(ctx, HookImportStep)
		if err := ctx.Err(); err != nil {
			return err // shutting down: the task goes back to the queue
		}
	}
}

// ImportRevert handles TypeImportRevert: one transaction removes the
// import's transactions and returns it to pending.
func (h *Handlers) ImportRevert(ctx context.Context, t *asynq.Task) error {
	var p ImportPayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	_, err := h.Store.RevertImport(ctx, p.FamilyID, p.ImportID)
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	if err != nil {
		return h.importFailed(ctx, t, p, models.ImportRevertFailed, err)
	}
	h.hook(ctx, HookImportReverted)
	return nil
}

// importFailed returns err for a retry, and on the last attempt records
// the failure on the import first.
func (h *Handlers) importFailed(ctx context.Context, t *asynq.Task, p ImportPayload, status string, err error) error {
	retried, _ := asynq.GetRetryCount(ctx)
	most, _ := asynq.GetMaxRetry(ctx)
	if retried >= most {
		h.logger(ctx, t).Error("import job gave up", "import_id", p.ImportID, "error", err)
		if ferr := h.Store.FailImport(ctx, p.FamilyID, p.ImportID, status, "The import stopped on an internal error; try again later"); ferr != nil {
			return errors.Join(err, ferr)
		}
	}
	return err
}
