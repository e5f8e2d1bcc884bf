package jobs

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs/simplefin/bridge"
	"coffer/models"
)

// TypeSimplefinSync fetches a connection's accounts for one sync and fans
// out one import step per account.
const TypeSimplefinSync = "simplefin:sync"

const syncTimeout = 20 * time.Minute

// Messages a user sees on a connection after a failed fetch.
const (
	MsgReconnect       = "SimpleFIN Bridge refused the access; reconnect with a new setup token."
	MsgPaymentRequired = "Your SimpleFIN Bridge subscription needs attention."
	MsgRateLimited     = "SimpleFIN Bridge asked us to slow down; the next sync waits until the time shown."
	MsgUnreadable      = "The bridge sent an unreadable response"
)

// SimplefinOptions are the sync settings (spec/aggregator.md §2); zero
// fields take the defaults, except OverlapDays, where zero means none.
type SimplefinOptions struct {
	LookbackDays     int
	ChunkDays        int
	OverlapDays      int
	DailyBudget      int
	PendingMatchDays int
	StalePendingDays int
	Jitter           time.Duration
	Cooldown         time.Duration
	MaxBody          int64
	Location         *time.Location // of the daily schedule; nil: UTC
	RetryBase        time.Duration  // first asynq retry delay; zero: 2 min (tests shorten it)
}

func (o SimplefinOptions) withDefaults() SimplefinOptions {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.LookbackDays, 90)
	def(&o.ChunkDays, 90)
	def(&o.DailyBudget, DefaultDailyBudget)
	def(&o.PendingMatchDays, 8)
	def(&o.StalePendingDays, 14)
	if o.OverlapDays < 0 {
		o.OverlapDays = 7
	}
	if o.Cooldown <= 0 {
		o.Cooldown = time.Hour
	}
	if o.Jitter <= 0 {
		o.Jitter = 30 * time.Minute
	}
	return o
}

// SyncPayload names a sync (a parent for TypeSimplefinSync, a step for
// TypeSimplefinImport).
type SyncPayload struct {
	FamilyID uuid.UUID `json:"family_id"`
	SyncID   uuid.UUID `json:"sync_id"`
}

// DeferError ends a run that must wait (a full budget, a rate limit): the
// worker retries the task at Until without counting a failure.
type DeferError struct {
	Until time.Time
}

func (e *DeferError) Error() string { return "jobs: deferred until " + e.Until.Format(time.RFC3339) }

// NewSimplefinSyncTask builds the fetch of one sync, unique per sync.
func NewSimplefinSyncTask(familyID, syncID uuid.UUID) (*asynq.Task, error) {
	payload, err := json.Marshal(SyncPayload{FamilyID: familyID, SyncID: syncID})
	if err != nil {
		return nil, fmt.Errorf("jobs: sync payload: %w", err)
	}
	return asynq.NewTask(TypeSimplefinSync, payload, asynq.Queue(QueueDefault), asynq.MaxRetry(3),
		asynq.Timeout(syncTimeout), asynq.TaskID(syncTaskID(syncID))), nil
}

func syncTaskID(syncID uuid.UUID) string { return "simplefin:sync:" + syncID.String() }

// EnqueueSync queues a sync's fetch, at once or at the sync's not_before;
// a task already queued for it counts as success.
func EnqueueSync(ctx context.Context, q *asynq.Client, sy *models.Sync, delay time.Duration) error {
	task, err := NewSimplefinSyncTask(sy.FamilyID, sy.ID)
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

// SimplefinSync handles TypeSimplefinSync: take the lease, plan the
// windows, reserve the budget, fetch each window not fetched yet, store
// the remote accounts and payloads, then start one import step per
// account. Every outcome that is not a plain failure ends the run
// without an asynq retry: a refused budget or a rate limit defers it.
func (h *Handlers) SimplefinSync(ctx context.Context, t *asynq.Task) error {
	var p SyncPayload
	if err := decode(t, &p); err != nil {
		return err
	}
	sy, err := h.Store.LeaseSync(ctx, p.FamilyID, p.SyncID, syncTimeout+5*time.Minute)
	if errors.Is(err, models.ErrNotFound) {
		return nil // another worker has it, or it is done
	}
	if err != nil {
		return err
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
	case conn.Status == models.ConnClaiming || conn.Status == models.ConnClaimFailed || conn.Status == models.ConnDisconnected:
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

// fetch reads every window still missing into sync_payloads.
func (h *Handlers) fetch(ctx context.Context, sy *models.Sync, conn *models.Connection) error {
	o := h.SyncOptions.withDefaults()
	plan := bridge.Plan{Now: h.now(), LookbackDays: o.LookbackDays, ChunkDays: o.ChunkDays, OverlapDays: o.OverlapDays, Full: sy.Full}
	if conn.LookbackDays != nil {
		plan.LookbackDays = *conn.LookbackDays
	}
	last, err := h.Store.LastCompletedSync(ctx, sy.FamilyID, sy.ConnectionID)
	switch {
	case err == nil:
		// Incremental: from the day the last completed sync started, less
		// the overlap that catches late arrivals.
		plan.LastStart = last.StartedAt
	case !errors.Is(err, models.ErrNotFound):
		return err
	}
	windows := plan.Windows()
	sy.WindowStart, sy.WindowEnd = &windows[len(windows)-1].Start, &windows[0].End
	have, err := h.Store.SyncPayloadChunks(ctx, sy.FamilyID, sy.ID)
	if err != nil {
		return err
	}
	todo := 0
	for i := range windows {
		if !have[i] {
			todo++
		}
	}
	b := budget{rdb: h.Redis, limit: o.DailyBudget}
	var slots []string // one per request still to send; given back if it never leaves
	if todo > 0 {
		var freeAt time.Time
		slots, freeAt, err = b.reserve(ctx, conn.ID, todo, h.now())
		if err != nil {
			return err
		}
		if slots == nil {
			return h.deferSync(ctx, sy, freeAt, "request budget used up; deferred")
		}
	}
	access, err := h.Store.AccessURL(conn)
	if err != nil {
		return h.Store.FailSync(ctx, sy, "the connection has no usable access URL")
	}
	seen := map[string]bool{}
	for i, w := range windows {
		if have[i] {
			continue
		}
		slot := slots[0]
		slots = slots[1:]
		h.hook(ctx, HookFetch)
		set, err := h.SimpleFIN.Accounts(ctx, access, bridge.FetchOptions{Start: w.Start, End: w.End, Pending: conn.IncludePending,
			MaxBody: o.MaxBody, Attempt: func(n int) error {
				sy.RequestsUsed++
				if n == 0 {
					return nil // reserved with the plan
				}
				more, freeAt, err := b.reserve(ctx, conn.ID, 1, h.now())
				if err == nil && more == nil {
					return &DeferError{Until: freeAt}
				}
				if err == nil {
					slot = more[0]
				}
				return err
			}, NotSent: func(int) {
				sy.RequestsUsed--
				if err := b.release(ctx, conn.ID, slot); err != nil {
					h.Log.WarnContext(ctx, "request budget slot not released", "connection_id", conn.ID, "error", err)
				}
			}})
		if err != nil {
			return h.fetchFailed(ctx, sy, conn, err)
		}
		// A disconnect while the request ran wins: nothing is written.
		if now, err := h.Store.Connection(ctx, sy.FamilyID, conn.ID); err != nil || now.Status == models.ConnDisconnected {
			if err != nil {
				return err
			}
			return h.Store.FailSync(ctx, sy, "disconnected")
		}
		if kind := classify(set); kind != 0 {
			errs := providerErrors(set)
			if err := h.Store.SetProviderErrors(ctx, conn, errs); err != nil {
				return err
			}
			detail := "refused inside the answer"
			if len(errs) > 0 {
				detail += ": " + errs[0].Message
			}
			return h.fetchFailed(ctx, sy, conn, &bridge.FetchError{Kind: kind, Detail: detail})
		}
		if err := h.storeWindow(ctx, sy, conn, i, w, set, seen); err != nil {
			return err
		}
		if err := h.Store.ConnectionFetched(ctx, conn, providerErrors(set)); err != nil {
			return err
		}
	}
	return nil
}

// classify finds the refusals a 200 can carry: a credential failure or a
// quota message with no accounts at all.
func classify(set *bridge.AccountSet) bridge.FetchKind {
	if len(set.Accounts) > 0 {
		return 0
	}
	for _, e := range set.ErrList {
		if e.Code == "gen.auth" || strings.HasPrefix(e.Code, "gen.auth.") {
			return bridge.AuthFailed
		}
	}
	texts := append([]string{}, set.Errors...)
	for _, e := range set.ErrList {
		texts = append(texts, e.Text())
	}
	for _, m := range texts {
		l := strings.ToLower(m)
		if strings.Contains(l, "make fewer requests") || strings.Contains(l, "only refreshed once every 24 hours") || strings.Contains(l, "rate limit") {
			return bridge.RateLimited
		}
	}
	return 0
}

func providerErrors(set *bridge.AccountSet) []models.ProviderError {
	var out []models.ProviderError
	add := func(e models.ProviderError) {
		if e.Message = bridge.SanitizeMessage(e.Message); e.Message != "" && len(out) < 50 {
			// Codes and ids are the Bridge's text too.
			e.Code = bridge.SanitizeMessage(e.Code)
			e.ConnID = bridge.SanitizeMessage(e.ConnID)
			e.RemoteAccountID = bridge.SanitizeMessage(e.RemoteAccountID)
			out = append(out, e)
		}
	}
	for _, e := range set.Errors {
		add(models.ProviderError{Message: e})
	}
	for _, e := range set.ErrList {
		if !strings.HasPrefix(e.Code, "gen.api") {
			add(models.ProviderError{Message: e.Text(), Code: e.Code, ConnID: string(e.ConnID), RemoteAccountID: string(e.AccountID)})
		}
	}
	return out
}

// storeWindow upserts the window's remote accounts (creating and linking
// a ledger account on first sight) and stores each account's
// transactions as a payload for its import step.
func (h *Handlers) storeWindow(ctx context.Context, sy *models.Sync, conn *models.Connection, index int, w bridge.Window,
	set *bridge.AccountSet, seen map[string]bool) error {
	attention := map[string]string{} // remote account id or bank login id → message
	for _, e := range set.ErrList {
		switch {
		case strings.HasPrefix(e.Code, "con.") && e.ConnID != "":
			attention["conn:"+string(e.ConnID)] = bridge.SanitizeMessage(e.Text())
		case strings.HasPrefix(e.Code, "act.") && e.AccountID != "":
			attention[string(e.AccountID)] = bridge.SanitizeMessage(e.Text())
		case strings.HasPrefix(e.Code, "gen.api"):
			sy.Warnings = append(sy.Warnings, bridge.SanitizeMessage(e.Text()))
		}
	}
	for _, m := range set.APIMessages {
		sy.Warnings = append(sy.Warnings, bridge.SanitizeMessage(m))
	}
	banks := map[string]string{}
	for _, c := range set.Connections {
		banks[string(c.ConnID)] = c.Name
	}
	var payloads []models.SyncPayload
	for _, a := range set.Accounts {
		id := strings.TrimSpace(string(a.ID))
		if id == "" || len(id) > 255 {
			sy.AccountsSkipped++
			sy.Warnings = append(sy.Warnings, "an account without an id was skipped")
			continue
		}
		ra := models.RemoteAccount{RemoteID: id, Name: simplefinName(a.Name, id), BalanceDate: a.BalanceDate.Time()}
		ra.Currency, ra.CurrencyRaw = bridge.NormalizeCurrency(a.Currency)
		if ra.CurrencyRaw != "" {
			sy.Warnings = append(sy.Warnings, fmt.Sprintf("account %s: currency %q is not an ISO code; stored as XXX", id, bridge.SanitizeMessage(a.Currency)))
		}
		if a.Org != nil {
			ra.OrgName = a.Org.Name
			if ra.OrgName == "" {
				ra.OrgName = a.Org.Domain
			}
		}
		if n, ok := banks[string(a.ConnID)]; ok && n != "" {
			ra.OrgName = n
		}
		ra.OrgName = bridge.SanitizeMessage(ra.OrgName)
		ra.Attention = attention[id]
		if ra.Attention == "" && a.ConnID != "" {
			ra.Attention = attention["conn:"+string(a.ConnID)]
		}
		if bal, _, err := bridge.ParseRemoteAmount(string(a.Balance)); err == nil && a.BalanceDate != bridge.BadEpoch {
			ra.Balance = &bal
			if avail, _, err := bridge.ParseRemoteAmount(string(a.AvailableBalance)); err == nil {
				ra.AvailableBalance = &avail
			}
		} else {
			sy.Warnings = append(sy.Warnings, fmt.Sprintf("account %s: unreadable balance; the previous one is kept", id))
		}
		_, created, err := h.Store.SaveProviderAccount(ctx, sy.FamilyID, conn.ID, ra)
		if err != nil {
			return err
		}
		if !seen[id] {
			seen[id] = true
			if created {
				sy.AccountsCreated++
			} else {
				sy.AccountsUpdated++
			}
		}
		body, err := gzipJSON(a.Transactions)
		if err != nil {
			return err
		}
		payloads = append(payloads, models.SyncPayload{SyncID: sy.ID, FamilyID: sy.FamilyID, ChunkIndex: index, RemoteID: id,
			WindowStart: w.Start, WindowEnd: w.End, BodyGz: body})
	}
	if len(payloads) == 0 {
		// Mark the window fetched even when it held no account.
		payloads = append(payloads, models.SyncPayload{SyncID: sy.ID, FamilyID: sy.FamilyID, ChunkIndex: index, RemoteID: "",
			WindowStart: w.Start, WindowEnd: w.End, BodyGz: []byte{}})
	}
	if err := h.Store.SaveSyncPayloads(ctx, payloads); err != nil {
		return err
	}
	return h.Store.SaveSyncProgress(ctx, sy)
}

func simplefinName(name, id string) string {
	if n := bridge.SanitizeMessage(name); n != "" {
		return n
	}
	return "Account " + id
}

func gzipJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		return nil, fmt.Errorf("jobs: encode payload: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("jobs: compress payload: %w", err)
	}
	return buf.Bytes(), nil
}

// startImport creates the account steps and queues them; a parent
// delivered again in this phase only re-queues the steps not done.
func (h *Handlers) startImport(ctx context.Context, t *asynq.Task, sy *models.Sync) error {
	ids, err := h.Store.ImportableAccounts(ctx, sy.FamilyID, sy.ID)
	if err != nil {
		return err
	}
	steps, err := h.Store.StartImport(ctx, sy, ids)
	if errors.Is(err, models.ErrNotFound) {
		return nil // the sync ended meanwhile (a disconnect)
	}
	if err != nil {
		return err
	}
	h.hook(ctx, HookSteps)
	for i := range steps {
		task, err := NewSimplefinImportTask(steps[i].FamilyID, steps[i].ID)
		if err != nil {
			return err
		}
		if _, err := h.Queue.EnqueueContext(ctx, task); err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) && !errors.Is(err, asynq.ErrDuplicateTask) {
			h.logger(ctx, t).Warn("import step not queued", "sync_id", steps[i].ID, "error", err)
		}
	}
	return nil
}

// fetchFailed turns a failed request into the connection state and the
// sync outcome of spec §7.
func (h *Handlers) fetchFailed(ctx context.Context, sy *models.Sync, conn *models.Connection, err error) error {
	var de *DeferError
	if errors.As(err, &de) {
		return h.deferSync(ctx, sy, de.Until, "request budget used up; deferred")
	}
	var fe *bridge.FetchError
	if !errors.As(err, &fe) {
		return h.retryLater(ctx, sy, err)
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
		return h.retryLater(ctx, sy, &retryAfterError{msg: msg, after: min(fe.RetryAfter, 24*time.Hour)})
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
	d := h.SyncOptions.withDefaults().Cooldown
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
	return &DeferError{Until: until}
}

// retryAfterError is a failure worth an asynq retry, not sooner than
// after when the Bridge said so (Retry-After on a 5xx).
type retryAfterError struct {
	msg   string
	after time.Duration
}

func (e *retryAfterError) Error() string { return e.msg }

// retryLater hands the sync back for an asynq retry, or fails it on the
// last one.
func (h *Handlers) retryLater(ctx context.Context, sy *models.Sync, cause error) error {
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, ok := asynq.GetMaxRetry(ctx)
	if ok && retried >= maxRetry {
		if err := h.Store.FailSync(ctx, sy, cause.Error()); err != nil {
			return err
		}
		return fmt.Errorf("jobs: sync %s failed: %v: %w", sy.ID, cause, asynq.SkipRetry)
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
	return fmt.Errorf("jobs: sync %s: %w", sy.ID, cause)
}
