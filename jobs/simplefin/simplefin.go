// Package simplefin is everything coffer does with SimpleFIN Bridge
// connections: the background tasks (claim, /info, sync, import, purge,
// the daily schedule and the sweep), the request budget, the sync
// calendar, and the actions the API and the screens share (connect,
// sync now, reconnect, disconnect, link an account). The protocol client
// is jobs/simplefin/bridge. It may import jobs; jobs never imports it.
package simplefin

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/jobs"
	"coffer/jobs/simplefin/bridge"
	"coffer/models"
)

// Handlers runs the SimpleFIN task types against the store and the
// Bridge.
type Handlers struct {
	Store *models.Store
	Queue *asynq.Client // to fan out follow-up tasks
	Log   *slog.Logger

	Bridge  *bridge.Client        // the aggregator client
	Options Options               // sync settings
	Redis   redis.UniversalClient // the request budget
	Now     func() time.Time      // nil: time.Now

	// Hook, when set, is called at the named points of the jobs (HookFetch,
	// HookSteps, HookImport, HookImported, HookPurged, HookClaimed) with the task's context, so that
	// a test can stop a worker exactly there. Nil in production.
	Hook func(ctx context.Context, point string)
}

// Points where Handlers.Hook is called.
const (
	HookFetch    = "fetch"    // before each /accounts request of a sync
	HookSteps    = "steps"    // after the account steps are stored, before they are queued
	HookImport   = "import"   // before an account step's transaction
	HookImported = "imported" // after an account step committed
	HookPurged   = "purged"   // after each committed batch of a purge
	HookClaimed  = "claimed"  // after a claim's access URL committed, before the first sync is queued
)

// Table lists the SimpleFIN task types with their handlers; all of them
// retry on the SimpleFIN schedule.
func (h *Handlers) Table() jobs.Table {
	if h == nil { // a worker without these handlers leaves their tasks queued
		return nil
	}
	job := func(fn asynq.HandlerFunc) jobs.Job { return jobs.Job{Handler: fn, RetryDelay: h.retryWait} }
	return jobs.Table{
		TypeClaim:     job(h.Claim),
		TypeFetchInfo: job(h.FetchInfo),
		TypeSync:      job(h.Sync),
		TypeImport:    job(h.Import),
		TypePurge:     job(h.Purge),
		TypeSchedule:  job(h.Schedule),
		TypeSweep:     job(h.Sweep),
	}
}

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

func (h *Handlers) logger(ctx context.Context, t *asynq.Task) *slog.Logger {
	return jobs.TaskLog(ctx, h.Log, t)
}

// ConnectionPayload names a connection: the payload of the /info read
// and of the purge.
type ConnectionPayload struct {
	FamilyID     uuid.UUID `json:"family_id"`
	ConnectionID uuid.UUID `json:"connection_id"`
}

// payloadConnection loads the connection that t's ConnectionPayload names.
func (h *Handlers) payloadConnection(ctx context.Context, t *asynq.Task) (*models.Connection, error) {
	var p ConnectionPayload
	if err := jobs.Decode(t, &p); err != nil {
		return nil, err
	}
	return h.Store.Connection(ctx, p.FamilyID, p.ConnectionID)
}
