package simplefin

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/simplefin/bridge"
	"coffer/models"
	"coffer/models/civil"
)

// TypeImport imports one remote account's fetched transactions
// into its ledger account: one account step of a sync.
const TypeImport = "simplefin:import"

const importTimeout = 10 * time.Minute

// NewImportTask builds one account step, unique per step.
func NewImportTask(familyID, stepID uuid.UUID) (*asynq.Task, error) {
	return jobs.NewTask(TypeImport, SyncPayload{FamilyID: familyID, SyncID: stepID},
		asynq.Queue(jobs.QueueDefault), asynq.MaxRetry(5), asynq.Timeout(importTimeout),
		asynq.TaskID(importTaskID(stepID)))
}

func importTaskID(stepID uuid.UUID) string { return "simplefin:import:" + stepID.String() }

// Import handles TypeImport. The whole step (rows, aliases, counts, the
// step's completion and maybe the parent's) commits in one transaction, so
// a worker killed at any point leaves nothing half-done and the
// re-delivered task reaches the same end.
func (h *Handlers) Import(ctx context.Context, t *asynq.Task) error {
	var p SyncPayload
	if err := jobs.Decode(t, &p); err != nil {
		return err
	}
	step, err := h.Store.LeaseSync(ctx, p.FamilyID, p.SyncID, importTimeout+5*time.Minute)
	if err != nil {
		return jobs.IgnoreNotFound(err)
	}
	if step.ParentID == nil || step.ProviderAccountID == nil {
		return h.Store.FailSync(ctx, step, "not an account step")
	}
	if err := h.importStep(ctx, step); err != nil {
		if errors.Is(err, errStepFailed) {
			return h.Store.FailSync(ctx, step, err.Error())
		}
		return h.retryLater(ctx, step, err, "the import failed")
	}
	return nil
}

var errStepFailed = errors.New("account step cannot run")

func (h *Handlers) importStep(ctx context.Context, step *models.Sync) error {
	conn, err := h.Store.Connection(ctx, step.FamilyID, step.ConnectionID)
	if err != nil {
		return err
	}
	if conn.Status == models.ConnDisconnected {
		return fmt.Errorf("%w: disconnected", errStepFailed)
	}
	pa, err := h.Store.ProviderAccount(ctx, step.FamilyID, *step.ProviderAccountID)
	if err != nil {
		return err
	}
	if pa.AccountID == nil || !pa.ImportEnabled {
		return fmt.Errorf("%w: the account is not linked or its import is off", errStepFailed)
	}
	payloads, err := h.Store.SyncPayloads(ctx, step.FamilyID, *step.ParentID, pa.RemoteID)
	if err != nil {
		return err
	}
	var all []bridge.Transaction
	for _, pl := range payloads {
		var ts []bridge.Transaction
		if err := gunzipJSON(pl.BodyGz, &ts); err != nil {
			return fmt.Errorf("%w: unreadable payload", errStepFailed)
		}
		all = append(all, ts...)
	}
	rows := bridge.NormalizeTransactions(all, h.now())
	step.TransactionsRejected, step.TransactionsSkipped = rows.Rejected, rows.Skipped
	for _, w := range rows.Warnings {
		if len(step.Warnings) < 100 {
			step.Warnings = append(step.Warnings, w)
		}
	}
	o := h.Options.withDefaults()
	h.hook(ctx, HookImport)
	err = h.Store.ImportTransactions(ctx, step, *pa.AccountID, rows.Rows, models.ImportOptions{
		ConnectionID: conn.ID, IncludePending: conn.IncludePending, MatchDays: o.PendingMatchDays,
		StaleDays: o.StalePendingDays, Today: civil.DateOf(h.now()), Balance: pa.Balance})
	if errors.Is(err, models.ErrNotFound) {
		return fmt.Errorf("%w: the ledger account is gone", errStepFailed)
	}
	if err != nil {
		return err
	}
	h.hook(ctx, HookImported) // the store reported the balance change (see jobs.Balances)
	// New rows may complete a recurring series: one detection per family
	// waits at a time, however many accounts the sync imports; the
	// nightly sweep catches one that could not be queued.
	if h.Queue != nil {
		if err := jobs.QueueRecurringDetect(ctx, h.Queue, step.FamilyID); err != nil {
			h.Log.Warn("recurring detection not queued", "family_id", step.FamilyID, slog.Any("error", err))
		}
	}
	return nil
}

func gunzipJSON(b []byte, v any) error {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer zr.Close()
	data, err := io.ReadAll(zr)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
