package simplefin

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/simplefin/bridge"
	"coffer/models"
)

// TypeSync fetches a connection's accounts for one sync and fans
// out one import step per account.
const TypeSync = "simplefin:sync"

const syncTimeout = 20 * time.Minute

// Messages a user sees on a connection after a failed fetch.
const (
	MsgReconnect       = "SimpleFIN Bridge refused the access; reconnect with a new setup token."
	MsgPaymentRequired = "Your SimpleFIN Bridge subscription needs attention."
	MsgRateLimited     = "SimpleFIN Bridge asked us to slow down; the next sync waits until the time shown."
	MsgUnreadable      = "The bridge sent an unreadable response"
)

// Options are the sync settings (spec/aggregator.md §2); zero
// fields take the defaults, except OverlapDays, where zero means none.
type Options struct {
	LookbackDays     int            `env:"SIMPLEFIN_LOOKBACK_DAYS" default:"90" min:"1" max:"730"`
	ChunkDays        int            `env:"SIMPLEFIN_CHUNK_DAYS" default:"90" min:"1" max:"90"`
	OverlapDays      int            `env:"SIMPLEFIN_OVERLAP_DAYS" default:"7" min:"0" max:"60"`
	DailyBudget      int            `env:"SIMPLEFIN_DAILY_REQUEST_BUDGET" default:"24" min:"1" max:"48"`
	PendingMatchDays int            `env:"SIMPLEFIN_PENDING_MATCH_DAYS" default:"8" min:"0" max:"60"`
	StalePendingDays int            `env:"SIMPLEFIN_STALE_PENDING_DAYS" default:"14" min:"1" max:"365"`
	Jitter           time.Duration  `env:"SIMPLEFIN_SYNC_JITTER" default:"30m"`
	Cooldown         time.Duration  `env:"SIMPLEFIN_RATE_LIMIT_COOLDOWN" default:"1h"`
	MaxBody          int64          `env:"SIMPLEFIN_MAX_BODY_BYTES" default:"268435456" min:"1048576" max:"2147483647"`
	Location         *time.Location // of the daily schedule; nil: UTC
	RetryBase        time.Duration  // first asynq retry delay; zero: 2 min (tests shorten it)
}

func (o Options) withDefaults() Options {
	d := optionDefaults()
	for _, f := range []struct{ v, d *int }{{&o.LookbackDays, &d.LookbackDays}, {&o.ChunkDays, &d.ChunkDays},
		{&o.DailyBudget, &d.DailyBudget}, {&o.PendingMatchDays, &d.PendingMatchDays}, {&o.StalePendingDays, &d.StalePendingDays}} {
		if *f.v <= 0 {
			*f.v = *f.d
		}
	}
	if o.OverlapDays < 0 {
		o.OverlapDays = d.OverlapDays
	}
	if o.Cooldown <= 0 {
		o.Cooldown = d.Cooldown
	}
	if o.Jitter <= 0 {
		o.Jitter = d.Jitter
	}
	return o
}

// optionDefaults are the values the `default` tags of Options give (the
// ones main's configuration loader reads), so that each is written once.
var optionDefaults = sync.OnceValue(func() Options {
	var o Options
	v := reflect.ValueOf(&o).Elem()
	for i := range v.NumField() {
		tag, ok := v.Type().Field(i).Tag.Lookup("default")
		if !ok {
			continue
		}
		f := v.Field(i)
		var n int64
		var err error
		if f.Type() == reflect.TypeFor[time.Duration]() {
			var d time.Duration
			d, err = time.ParseDuration(tag)
			n = int64(d)
		} else {
			n, err = strconv.ParseInt(tag, 10, 64)
		}
		if err != nil {
			panic("simplefin: the default of " + v.Type().Field(i).Name + ": " + err.Error()) // a typo in a tag above
		}
		f.SetInt(n)
	}
	return o
})

// SyncPayload names a sync (a parent for TypeSync, a step for
// TypeImport).
type SyncPayload struct {
	FamilyID uuid.UUID `json:"family_id"`
	SyncID   uuid.UUID `json:"sync_id"`
}

// NewSyncTask builds the fetch of one sync, unique per sync.
func NewSyncTask(familyID, syncID uuid.UUID) (*asynq.Task, error) {
	return jobs.NewTask(TypeSync, SyncPayload{FamilyID: familyID, SyncID: syncID},
		asynq.Queue(jobs.QueueDefault), asynq.MaxRetry(3), asynq.Timeout(syncTimeout),
		asynq.TaskID(syncTaskID(syncID)))
}

func syncTaskID(syncID uuid.UUID) string { return "simplefin:sync:" + syncID.String() }

// EnqueueSync queues a sync's fetch, at once or at the sync's not_before;
// a task already queued for it counts as success.
func EnqueueSync(ctx context.Context, q *asynq.Client, sy *models.Sync, delay time.Duration) error {
	task, err := NewSyncTask(sy.FamilyID, sy.ID)
	if err != nil {
		return err
	}
	opts := []asynq.Option{asynq.ProcessAt(sy.NotBefore)}
	if delay > 0 {
		opts = []asynq.Option{asynq.ProcessIn(delay)}
	}
	_, err = q.EnqueueContext(ctx, task, opts...)
	if errors.Is(err, asynq.ErrTaskIDConflict) || errors.Is(err, asynq.ErrDuplicateTask) {
		return nil
	}
	return err
}

func (h *Handlers) enqueueSync(ctx context.Context, t *asynq.Task, sy *models.Sync) {
	if sy == nil || h.Queue == nil {
		return
	}
	if err := EnqueueSync(ctx, h.Queue, sy, 0); err != nil {
		// The sync row is stored: the sweeper queues it.
		h.logger(ctx, t).Warn("sync not queued", "sync_id", sy.ID, "error", err)
	}
}

// Sync handles TypeSync: take the lease, plan the windows, reserve the
// budget, fetch each window not fetched yet, store the remote accounts and
// payloads, then start one import step per account. Every outcome that is
// not a plain failure ends the run without an asynq retry: a refused
// budget or a rate limit defers it.
func (h *Handlers) Sync(ctx context.Context, t *asynq.Task) error {
	var p SyncPayload
	if err := jobs.Decode(t, &p); err != nil {
		return err
	}
	sy, err := h.Store.LeaseSync(ctx, p.FamilyID, p.SyncID, syncTimeout+5*time.Minute)
	if err != nil {
		return jobs.IgnoreNotFound(err) // another worker has it, or it is done
	}
	lease := *sy.LeaseUntil // the run may clear it on a write that the cancellation then undoes
	err = h.runSync(ctx, t, sy)
	if ctx.Err() != nil {
		// The worker is stopping (asynq has put the task back in the queue)
		// or the run timed out: hand the sync back, so that the next
		// delivery takes it at once instead of finding it leased by a run
		// that is over.
		if rerr := h.Store.ReleaseSync(context.WithoutCancel(ctx), sy, lease); rerr != nil {
			h.logger(ctx, t).Warn("sync lease not released", "sync_id", sy.ID, "error", rerr)
		}
	}
	return err
}

func (h *Handlers) runSync(ctx context.Context, t *asynq.Task, sy *models.Sync) error {
	conn, err := h.Store.Connection(ctx, sy.FamilyID, sy.ConnectionID)
	if err != nil {
		return err
	}
	switch {
	case !syncable(conn.Status):
		return h.Store.FailSync(ctx, sy, "the connection is "+strings.ReplaceAll(conn.Status, "_", " "))
	case conn.Status == models.ConnRateLimited && conn.RetryAfter != nil && conn.RetryAfter.After(h.now()):
		return h.deferSync(ctx, sy, *conn.RetryAfter, "")
	}
	if sy.Phase == models.PhaseFetch {
		if err := h.fetch(ctx, sy, conn); err != nil {
			return err
		}
		if sy.Status != models.SyncRunning {
			return nil
		}
	}
	return h.startImport(ctx, t, sy)
}

// startImport creates the account steps and queues them; a parent
// delivered again in this phase only re-queues the steps not done.
func (h *Handlers) startImport(ctx context.Context, t *asynq.Task, sy *models.Sync) error {
	ids, err := h.Store.ImportableAccounts(ctx, sy.FamilyID, sy.ID)
	if err != nil {
		return err
	}
	steps, err := h.Store.StartImport(ctx, sy, ids)
	if err != nil {
		return jobs.IgnoreNotFound(err) // the sync ended meanwhile (a disconnect)
	}
	h.hook(ctx, HookSteps)
	for i := range steps {
		task, err := NewImportTask(steps[i].FamilyID, steps[i].ID)
		if err != nil {
			return err
		}
		if _, err := h.Queue.EnqueueContext(ctx, task); err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) && !errors.Is(err, asynq.ErrDuplicateTask) {
			h.logger(ctx, t).Warn("import step not queued", "sync_id", steps[i].ID, "error", err)
		}
	}
	return nil
}

// syncable reports whether a connection in that status can sync.
func syncable(status string) bool {
	switch status {
	case models.ConnClaiming, models.ConnClaimFailed, models.ConnDisconnected:
		return false
	}
	return true
}

// fetchFailed turns a failed request into the connection state and the
// sync outcome of spec §7.
func (h *Handlers) fetchFailed(ctx context.Context, sy *models.Sync, conn *models.Connection, err error) error {
	var de *jobs.DeferError
	if errors.As(err, &de) {
		return h.deferSync(ctx, sy, de.Until, "request budget used up; deferred")
	}
	var fe *bridge.FetchError
	if !errors.As(err, &fe) {
		return h.retryLater(ctx, sy, err, "")
	}
	switch {
	case fe.Kind == bridge.AuthFailed:
		if err := h.Store.ConnectionFetchFailed(ctx, conn, models.ConnRequiresReconnect, MsgReconnect, nil); err != nil {
			return err
		}
		return h.Store.FailSync(ctx, sy, fe.Detail)
	case fe.Kind == bridge.PaymentRequired:
		if err := h.Store.ConnectionFetchFailed(ctx, conn, models.ConnPaymentRequired, MsgPaymentRequired, nil); err != nil {
			return err
		}
		return h.Store.FailSync(ctx, sy, fe.Detail)
	case fe.Kind == bridge.RateLimited:
		until := h.now().Add(h.cooldown(conn, fe.RetryAfter)).UTC().Truncate(time.Microsecond)
		if err := h.Store.ConnectionFetchFailed(ctx, conn, models.ConnRateLimited, MsgRateLimited, &until); err != nil {
			return err
		}
		return h.deferSync(ctx, sy, until, "rate limited: "+fe.Detail)
	case fe.Kind == bridge.Unavailable || (fe.Kind == bridge.BadAnswer && fe.Retry):
		msg := fe.Detail
		if fe.Kind == bridge.BadAnswer {
			msg = MsgUnreadable
		}
		// A Bridge asking for more than a day is waited for a day at most,
		// as a rate limit is.
		return h.retryLater(ctx, sy, &retryAfterError{msg: msg, after: min(fe.RetryAfter, 24*time.Hour)}, "")
	default:
		return h.Store.FailSync(ctx, sy, fe.Detail)
	}
}

// cooldown is how long a rate limit lasts: Retry-After clamped to 15 min
// to 24 h, else the base cooldown doubled per consecutive rate limit.
func (h *Handlers) cooldown(conn *models.Connection, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(max(retryAfter, 15*time.Minute), 24*time.Hour)
	}
	d := h.Options.withDefaults().Cooldown
	for i := 0; i < conn.RateLimits && d < 24*time.Hour; i++ {
		d *= 2
	}
	return min(d, 24*time.Hour)
}

// deferSync puts the sync back to pending until `until` and ends the run
// with a DeferError, so the worker runs the same task then.
func (h *Handlers) deferSync(ctx context.Context, sy *models.Sync, until time.Time, warning string) error {
	until = until.UTC().Truncate(time.Microsecond)
	if err := h.Store.DeferSync(ctx, sy, until, warning); err != nil {
		return err
	}
	return &jobs.DeferError{Until: until}
}

// retryAfterError is a failure worth an asynq retry, not sooner than
// after when the Bridge said so (Retry-After on a 5xx).
type retryAfterError struct {
	msg   string
	after time.Duration
}

func (e *retryAfterError) Error() string { return e.msg }

// retryLater hands a sync or an import step back for an asynq retry, or
// fails it on the last one with failed (the cause's text when empty). The
// row is written even when ctx ends: the task is being cut short.
func (h *Handlers) retryLater(ctx context.Context, sy *models.Sync, cause error, failed string) error {
	ctx = context.WithoutCancel(ctx)
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, ok := asynq.GetMaxRetry(ctx)
	if ok && retried >= maxRetry {
		if failed == "" {
			failed = cause.Error()
		}
		if err := h.Store.FailSync(ctx, sy, failed); err != nil {
			return err
		}
		return fmt.Errorf("simplefin: sync %s failed: %v: %w", sy.ID, cause, asynq.SkipRetry)
	}
	// The row is due when the retry may run, so that the sweep does not
	// hurry a retry the Bridge asked to wait for.
	due := h.now()
	var ra *retryAfterError
	if errors.As(cause, &ra) && ra.after > 0 {
		due = due.Add(ra.after)
	}
	if err := h.Store.DeferSync(ctx, sy, due, ""); err != nil {
		return err
	}
	return fmt.Errorf("simplefin: sync %s: %w", sy.ID, cause)
}
