// Package jobs holds the generic background tasks (balances, audit
// retention, chats, role syncs, family purges, the queue rebuild, the
// secrets backfill, the OAuth cleanup): their types, payloads, constructors and handlers,
// and the Table through which the worker registers every task type.
// Handlers are idempotent (asynq delivers at least once) and reload
// current rows from the store rather than trusting the payload. Each
// aggregator's jobs live in a sub-package (jobs/simplefin) that may
// import this one; this one imports none of them.
package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs/mail"
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

// Handlers runs the generic task types against the store.
type Handlers struct {
	Store *models.Store
	Queue *asynq.Client // to fan out follow-up tasks
	Log   *slog.Logger

	Retention  Retention        // audit retention tier
	ArchiveDir string           // where audit archive files go
	Now        func() time.Time // nil: time.Now
	// Rates is the exchange-rate service; nil: manual rates only.
	Rates *RatesClient
	// WebhookClient posts webhook deliveries (NewWebhookClient).
	WebhookClient *http.Client
	// Mail sends the notification emails; nil: none are sent (they wait
	// in the outbox).
	Mail *mail.Mailer
	// AppURL is the public base URL the emails' links start with.
	AppURL string
	// Hook, when set, is called with the task's context at the named
	// points of the jobs (tests stop a worker there), each after some of
	// the job's work has committed.
	Hook func(ctx context.Context, point string)
}

// Points where Handlers.Hook is called.
const (
	HookImportStep     = "import:step"        // after each committed step of an import
	HookImportReverted = "import:reverted"    // after a revert committed (its balances queued)
	HookBalanceSaved   = "balance:saved"      // after an account's balance committed
	HookBalanceQueued  = "balance:queued"     // after the sweep queued one account's recalculation
	HookAuditWritten   = "audit:written"      // after a batch's archive file is written, before its records go
	HookAuditBatch     = "audit:batch"        // after a batch of records left the database
	HookRoleApplied    = "roles:applied"      // after a user's mapped role committed
	HookFamilyPurged   = "family:purged"      // after a family's purge committed
	HookOAuthCleanStep = "oauth:cleanup_step" // after each of the cleanup's deletes
	HookRequeued       = "queue:requeued"     // after each task the queue rebuild queued
	HookNotifyClaimed  = "notify:claimed"     // after a send claimed its outbox row, before it mails
)

func (h *Handlers) hook(ctx context.Context, point string) {
	if h.Hook != nil {
		h.Hook(ctx, point)
	}
}

// Table lists the generic task types with their handlers.
func (h *Handlers) Table() Table {
	return Table{
		TypeAccountBalance:     {Handler: h.AccountBalance},
		TypeBalanceSweep:       {Handler: h.BalanceSweep},
		TypeBalanceMovesSweep:  {Handler: h.BalanceMovesSweep},
		TypeSumsCompactSweep:   {Handler: h.SumsCompactSweep},
		TypeRequeue:            {Handler: h.Requeue},
		TypeAuditArchive:       {Handler: h.AuditArchive},
		TypeRolesSync:          {Handler: h.RolesSync},
		TypeSecretsBackfill:    {Handler: h.SecretsBackfill},
		TypeFamilyPurge:        {Handler: h.FamilyPurge},
		TypeFamilyReset:        {Handler: h.FamilyReset},
		TypeFamilyExport:       {Handler: h.FamilyExport},
		TypeOAuthCleanup:       {Handler: h.OAuthCleanup},
		TypeImportPublish:      {Handler: h.ImportPublish},
		TypeImportRevert:       {Handler: h.ImportRevert},
		TypeRestoreRun:         {Handler: h.RestoreRun},
		TypeRuleApply:          {Handler: h.RuleApply},
		TypeExchangeRatesFetch: {Handler: h.ExchangeRatesFetch, RetryDelay: ratesRetryDelay},
		TypeWebhookSweep:       {Handler: h.WebhookSweep},
		TypeWebhookScan:        {Handler: h.WebhookScan},
		TypeWebhookDeliver:     {Handler: h.WebhookDeliver},
		TypeRecurringDetect:    {Handler: h.RecurringDetect},
		TypeRecurringSweep:     {Handler: h.RecurringSweep},
		TypeRecurringMissed:    {Handler: h.RecurringMissed},
		TypeNotifySweep:        {Handler: h.NotifySweep},
		TypeNotifyPlan:         {Handler: h.NotifyPlan},
		TypeNotifySend:         {Handler: h.NotifySend},
	}
}

func (h *Handlers) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// NewTask builds a task of type typ whose payload is v as JSON, the
// payload that Decode reads back.
func NewTask(typ string, v any, opts ...asynq.Option) (*asynq.Task, error) {
	payload, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("jobs: %s: payload: %w", typ, err)
	}
	return asynq.NewTask(typ, payload, opts...), nil
}

// EnqueueOnce queues t. A task of the same id already waiting or running
// is this same work, so that conflict is no error.
func EnqueueOnce(ctx context.Context, q *asynq.Client, t *asynq.Task) error {
	if _, err := q.EnqueueContext(ctx, t); err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
		return err
	}
	return nil
}

// Decode reads a task payload into v; one that does not decode will never
// succeed, so the error wraps asynq.SkipRetry and the task is not retried.
func Decode(t *asynq.Task, v any) error {
	if err := json.Unmarshal(t.Payload(), v); err != nil {
		return fmt.Errorf("jobs: %s: bad payload: %v: %w", t.Type(), err, asynq.SkipRetry)
	}
	return nil
}

// IgnoreNotFound is err, or nil when err is models.ErrNotFound: a row
// deleted (or finished) since its task was queued leaves nothing to do.
func IgnoreNotFound(err error) error {
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	return err
}

// TaskLog is log with the task's type and id, as every job log line
// carries them.
func TaskLog(ctx context.Context, log *slog.Logger, t *asynq.Task) *slog.Logger {
	id, _ := asynq.GetTaskID(ctx)
	return log.With(slog.String("task_type", t.Type()), slog.String("task_id", id))
}

func (h *Handlers) logger(ctx context.Context, t *asynq.Task) *slog.Logger {
	return TaskLog(ctx, h.Log, t)
}
