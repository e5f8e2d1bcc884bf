// Package jobs holds every background task: its type, payload, constructor
// and handler. Handlers are idempotent (asynq delivers at least once) and
// reload current rows from the store rather than trusting the payload.
package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/jobs/simplefin/bridge"
	"coffer/models"
)

// Queue names, by priority.
const (
	QueueCritical = "critical"
	QueueDefault  = "default"
	QueueLow      = "low"
)

// Queues maps each queue to its weight for the asynq server.
func Queues() map[string]int {
	return map[string]int{QueueCritical: 6, QueueDefault: 3, QueueLow: 1}
}

// Handlers runs every task type against the store.
type Handlers struct {
	Store *models.Store
	Queue *asynq.Client // to fan out follow-up tasks
	Log   *slog.Logger

	SimpleFIN   *bridge.Client        // the aggregator client
	SyncOptions SimplefinOptions      // aggregator sync settings
	Redis       redis.UniversalClient // the aggregator request budget

	Retention  Retention        // audit retention tier
	ArchiveDir string           // where audit archive files go
	Now        func() time.Time // nil: time.Now

	// Hook, when set, is called at the named points of the SimpleFIN jobs
	// (HookFetch, HookSteps, HookImport, HookImported) with the task's
	// context, so that a test can stop a worker exactly there. Nil in
	// production.
	Hook func(ctx context.Context, point string)
}

// Points where Handlers.Hook is called.
const (
	HookFetch    = "fetch"    // before each /accounts request of a sync
	HookSteps    = "steps"    // after the account steps are stored, before they are queued
	HookImport   = "import"   // before an account step's transaction
	HookImported = "imported" // after an account step committed
)

func (h *Handlers) hook(ctx context.Context, point string) {
	if h.Hook != nil {
		h.Hook(ctx, point)
	}
}

func (h *Handlers) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// decode reads a task payload; one that does not decode will never
// succeed, so it is not retried.
func decode(t *asynq.Task, v any) error {
	if err := json.Unmarshal(t.Payload(), v); err != nil {
		return fmt.Errorf("jobs: %s: bad payload: %v: %w", t.Type(), err, asynq.SkipRetry)
	}
	return nil
}

func (h *Handlers) logger(ctx context.Context, t *asynq.Task) *slog.Logger {
	id, _ := asynq.GetTaskID(ctx)
	return h.Log.With(slog.String("task_type", t.Type()), slog.String("task_id", id))
}
