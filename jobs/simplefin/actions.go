package simplefin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/jobs"
	"coffer/jobs/simplefin/bridge"
	"coffer/models"
)

// Actions are what a user does to a connection, the same from the JSON
// API and from the screens: each one checks, writes the store, then
// queues the work once the write has committed. Queuing that fails after
// the commit is logged, not returned: the sweep queues the claims and
// syncs that have no task. Who may act (a family admin for a purge) is
// the caller's to check.
type Actions struct {
	Store *models.Store
	Queue *asynq.Client
	// Redis holds the request budget and the queue; nil: the budget is not
	// read, a scheduled sync is not run at once, and a disconnect leaves
	// Redis as it is.
	Redis       redis.UniversalClient
	Log         *slog.Logger
	DailyBudget int              // requests per connection and rolling day; 0: DefaultDailyBudget
	AllowHTTP   bool             // setup tokens may hold http claim URLs (tests only)
	Now         func() time.Time // nil: time.Now
}

// Outcomes the callers tell apart; each wraps models.ErrConflict, so a
// caller that does not is still answered with a conflict.
var (
	// ErrClaiming refuses a new setup token while a claim is under way.
	ErrClaiming = fmt.Errorf("simplefin: the connection is already being claimed: %w", models.ErrConflict)
	// ErrNotRetryable refuses to retry a claim unless it failed without
	// using its token.
	ErrNotRetryable = fmt.Errorf("simplefin: only a failed claim whose token was not used can be retried: %w", models.ErrConflict)
	// ErrLinkedElsewhere refuses to link a ledger account that another
	// remote account feeds already.
	ErrLinkedElsewhere = fmt.Errorf("simplefin: the account is linked to another remote account: %w", models.ErrConflict)
)

// ErrPurgeNotQueued says that a disconnect was done but the purge of what
// the connection imported could not be queued.
var ErrPurgeNotQueued = errors.New("simplefin: the purge was not queued")

// StateError refuses an action the connection's status does not allow
// (a sync while it is being claimed, after a failed claim, or once
// disconnected).
type StateError struct {
	Status string
}

func (e *StateError) Error() string { return "simplefin: the connection is " + e.Status }

// Unwrap makes a StateError a conflict.
func (e *StateError) Unwrap() error { return models.ErrConflict }

func (a *Actions) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *Actions) budget() int {
	if a.DailyBudget > 0 {
		return a.DailyBudget
	}
	return DefaultDailyBudget
}

// NewConnection is what a user gives to connect.
type NewConnection struct {
	FamilyID       uuid.UUID
	CreatedBy      uuid.UUID
	Name           string // "": SimpleFIN
	SetupToken     string
	LookbackDays   *int // nil: the server's default
	IncludePending bool
}

// Connect checks the setup token (a *bridge.TokenError says what is
// wrong with it), stores the connection with the token sealed, and
// queues its claim.
func (a *Actions) Connect(ctx context.Context, n NewConnection) (*models.Connection, error) {
	token := strings.TrimSpace(n.SetupToken)
	if _, err := bridge.ParseSetupToken(token, a.AllowHTTP); err != nil {
		return nil, err
	}
	if n.Name == "" {
		n.Name = "SimpleFIN"
	}
	conn := &models.Connection{FamilyID: n.FamilyID, Name: n.Name, CreatedBy: &n.CreatedBy, LookbackDays: n.LookbackDays}
	if err := a.Store.CreateConnection(ctx, conn, token); err != nil {
		return nil, err
	}
	if !n.IncludePending {
		conn.IncludePending = false
		if err := a.Store.UpdateConnection(ctx, conn, "include_pending"); err != nil {
			return nil, err
		}
	}
	a.enqueueClaim(ctx, conn)
	return conn, nil
}

// ConnectionChange is what an update changes; nil fields stay as they are.
type ConnectionChange struct {
	Name           *string
	IncludePending *bool
	// SetLookback sets LookbackDays (nil: back to the server's default).
	SetLookback  bool
	LookbackDays *int
	// SetupToken, when set, reconnects: the connection is claimed again
	// with this new token, keeping its remote accounts and links.
	SetupToken *string
}

// Update changes a connection's settings and, with a new setup token,
// reconnects it. The token is checked before anything is saved (a
// *bridge.TokenError); a connection being claimed already is ErrClaiming.
func (a *Actions) Update(ctx context.Context, familyID, id uuid.UUID, ch ConnectionChange) (*models.Connection, error) {
	conn, err := a.Store.Connection(ctx, familyID, id)
	if err != nil {
		return nil, err
	}
	var token string
	if ch.SetupToken != nil {
		token = strings.TrimSpace(*ch.SetupToken)
		if _, err := bridge.ParseSetupToken(token, a.AllowHTTP); err != nil {
			return nil, err
		}
	}
	var cols []string
	if ch.Name != nil {
		conn.Name, cols = *ch.Name, append(cols, "name")
	}
	if ch.IncludePending != nil {
		conn.IncludePending, cols = *ch.IncludePending, append(cols, "include_pending")
	}
	if ch.SetLookback {
		conn.LookbackDays, cols = ch.LookbackDays, append(cols, "lookback_days")
	}
	if len(cols) > 0 {
		if err := a.Store.UpdateConnection(ctx, conn, cols...); err != nil {
			return nil, err
		}
	}
	if ch.SetupToken == nil {
		return conn, nil
	}
	if err := a.Store.ReconnectConnection(ctx, conn, token); errors.Is(err, models.ErrConflict) {
		return nil, ErrClaiming
	} else if err != nil {
		return nil, err
	}
	a.enqueueClaim(ctx, conn)
	return conn, nil
}

// RetryClaim claims again with the kept token of a failed claim that did
// not use it; any other connection is ErrNotRetryable.
func (a *Actions) RetryClaim(ctx context.Context, familyID, id uuid.UUID) (*models.Connection, error) {
	conn, err := a.Store.Connection(ctx, familyID, id)
	if err != nil {
		return nil, err
	}
	if err := a.Store.RetryClaim(ctx, conn); errors.Is(err, models.ErrConflict) {
		return nil, ErrNotRetryable
	} else if err != nil {
		return nil, err
	}
	a.enqueueClaim(ctx, conn)
	return conn, nil
}

// enqueueClaim queues a connection's claim after its row committed.
func (a *Actions) enqueueClaim(ctx context.Context, conn *models.Connection) {
	task, err := NewClaimTask(conn.FamilyID, conn.ID, conn.ClaimSeq)
	if err == nil {
		_, err = a.Queue.EnqueueContext(ctx, task)
	}
	if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
		a.Log.ErrorContext(ctx, "claim not queued; the sweep will queue it", "connection_id", conn.ID, "error", err)
	}
}

// SyncStart is what StartSync did.
type SyncStart struct {
	Sync *models.Sync
	// Created is false when the connection's queued or running sync is
	// answered instead of a new one: one sync at a time, one task.
	Created bool
	// WaitsForBudget: the request budget is used up, so the new sync
	// waits until Sync.NotBefore, when a request fits again.
	WaitsForBudget bool
	// Hurried: the sync answered was a scheduled one waiting for its
	// jitter, and is due now.
	Hurried bool
}

// StartSync is Sync now. It makes a manual sync of the connection (a full
// one when full is set) and queues it; with the request budget used up,
// the sync waits for the first free slot. When a sync is queued or
// running already it is answered instead; a scheduled one still waiting
// for its jitter runs at once, a deferred one keeps its time. A
// connection that cannot sync is a *StateError.
func (a *Actions) StartSync(ctx context.Context, familyID, id uuid.UUID, full bool) (*SyncStart, error) {
	conn, err := a.Store.Connection(ctx, familyID, id)
	if err != nil {
		return nil, err
	}
	if !syncable(conn.Status) {
		return nil, &StateError{Status: conn.Status}
	}
	now := a.now()
	notBefore := now
	if a.Redis != nil {
		// Unreadable, the budget is the worker's to enforce.
		if at, err := BudgetFreeAt(ctx, a.Redis, conn.ID, a.budget(), now); err == nil {
			notBefore = at
		}
	}
	sy, created, err := a.Store.CreateSync(ctx, &models.Sync{FamilyID: familyID, ConnectionID: conn.ID, Trigger: models.TriggerManual,
		Full: full, NotBefore: notBefore.UTC().Truncate(time.Microsecond)})
	if err != nil {
		return nil, err
	}
	if created {
		if err := EnqueueSync(ctx, a.Queue, sy, 0); err != nil {
			a.Log.ErrorContext(ctx, "sync not queued; the sweep will queue it", "sync_id", sy.ID, "error", err)
		}
		return &SyncStart{Sync: sy, Created: true, WaitsForBudget: notBefore.After(now)}, nil
	}
	hurried, err := a.Store.HurrySync(ctx, sy)
	if err != nil {
		return nil, err
	}
	if hurried && a.Redis != nil {
		if err := asynq.NewInspectorFromRedisClient(a.Redis).RunTask(jobs.QueueDefault, syncTaskID(sy.ID)); err != nil {
			a.Log.WarnContext(ctx, "scheduled sync not run now", "sync_id", sy.ID, "error", err)
		}
	}
	return &SyncStart{Sync: sy, Hurried: hurried}, nil
}

// Disconnect destroys the connection's credentials, ends its syncs and
// forgets its queued tasks and request budget; imported data is kept
// unless purge is set, which queues the purge of what the connection
// imported. It returns the disconnected connection. A connection that is
// gone or disconnected already is models.ErrNotFound. When the purge
// cannot be queued, the connection is disconnected all the same and the
// error wraps ErrPurgeNotQueued.
func (a *Actions) Disconnect(ctx context.Context, familyID, id uuid.UUID, purge bool) (*models.Connection, error) {
	ended, err := a.Store.DisconnectConnection(ctx, familyID, id)
	if err != nil {
		return nil, err
	}
	if a.Redis != nil {
		ForgetConnection(ctx, a.Redis, id, ended)
	}
	if purge {
		task, err := NewPurgeTask(familyID, id)
		if err == nil {
			_, err = a.Queue.EnqueueContext(ctx, task)
		}
		if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
			return nil, fmt.Errorf("%w: %w", ErrPurgeNotQueued, err)
		}
	}
	return a.Store.Connection(ctx, familyID, id)
}

// LinkAccount links a remote account of the connection to a ledger
// account of the same currency (when link is set) and switches its import
// on or off (when importEnabled is set). A remote account of another
// connection is models.ErrNotFound; a ledger account fed by another
// remote account is ErrLinkedElsewhere; a missing ledger account or one
// of another currency is a *models.InvalidError.
func (a *Actions) LinkAccount(ctx context.Context, familyID, connectionID, accountID uuid.UUID, link *uuid.UUID, importEnabled *bool) (*models.ProviderAccount, error) {
	pa, err := a.Store.ProviderAccount(ctx, familyID, accountID)
	if err != nil {
		return nil, err
	}
	if pa.ConnectionID != connectionID {
		return nil, models.ErrNotFound
	}
	if importEnabled != nil {
		pa.ImportEnabled = *importEnabled
	}
	if err := a.Store.UpdateProviderAccount(ctx, pa, link); errors.Is(err, models.ErrConflict) {
		return nil, ErrLinkedElsewhere
	} else if err != nil {
		return nil, err
	}
	return pa, nil
}
