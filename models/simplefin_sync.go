package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
)

// Sync kinds, triggers and states (spec/aggregator.md §3, §8).
const (
	SyncKindConnection = "connection"
	SyncKindAccount    = "account"

	TriggerConnect  = "connect"
	TriggerManual   = "manual"
	TriggerSchedule = "schedule"

	SyncPending   = "pending"
	SyncRunning   = "running"
	SyncCompleted = "completed"
	SyncFailed    = "failed"

	PhaseFetch  = "fetch"
	PhaseImport = "import"
)

// SyncCounts are what one sync did; a parent's are its children's sums.
type SyncCounts struct {
	AccountsCreated      int `bun:"accounts_created" json:"accounts_created"`
	AccountsUpdated      int `bun:"accounts_updated" json:"accounts_updated"`
	AccountsSkipped      int `bun:"accounts_skipped" json:"accounts_skipped"`
	TransactionsCreated  int `bun:"transactions_created" json:"transactions_created"`
	TransactionsUpdated  int `bun:"transactions_updated" json:"transactions_updated"`
	TransactionsSkipped  int `bun:"transactions_skipped" json:"transactions_skipped"`
	TransactionsRejected int `bun:"transactions_rejected" json:"transactions_rejected"`
	PendingReconciled    int `bun:"pending_reconciled" json:"pending_reconciled"`
	StalePendingExcluded int `bun:"stale_pending_excluded" json:"stale_pending_excluded"`
	ReissuedSuppressed   int `bun:"reissued_suppressed" json:"reissued_suppressed"`
}

func (c *SyncCounts) add(o SyncCounts) {
	c.AccountsCreated += o.AccountsCreated
	c.AccountsUpdated += o.AccountsUpdated
	c.AccountsSkipped += o.AccountsSkipped
	c.TransactionsCreated += o.TransactionsCreated
	c.TransactionsUpdated += o.TransactionsUpdated
	c.TransactionsSkipped += o.TransactionsSkipped
	c.TransactionsRejected += o.TransactionsRejected
	c.PendingReconciled += o.PendingReconciled
	c.StalePendingExcluded += o.StalePendingExcluded
	c.ReissuedSuppressed += o.ReissuedSuppressed
}

// Sync is one run against the Bridge: a connection-level parent that
// fetches, and one child per remote account that imports. A parent
// finishes only after every child has.
type Sync struct {
	bun.BaseModel `bun:"table:syncs,alias:sy"`

	ID                uuid.UUID   `bun:"id,pk"`
	FamilyID          uuid.UUID   `bun:"family_id"`
	ConnectionID      uuid.UUID   `bun:"connection_id"`
	ParentID          *uuid.UUID  `bun:"parent_id"`
	ProviderAccountID *uuid.UUID  `bun:"provider_account_id"`
	Kind              string      `bun:"kind"`
	Trigger           string      `bun:"trigger"`
	Full              bool        `bun:"full"`
	Status            string      `bun:"status"`
	Phase             string      `bun:"phase"`
	WindowStart       *time.Time  `bun:"window_start"`
	WindowEnd         *time.Time  `bun:"window_end"`
	NotBefore         time.Time   `bun:"not_before"`
	LeaseUntil        *time.Time  `bun:"lease_until"`
	ScheduledFor      *civil.Date `bun:"scheduled_for"`
	RequestsUsed      int         `bun:"requests_used"`
	SyncCounts
	Warnings   []string   `bun:"warnings"`
	Error      *string    `bun:"error"`
	CreatedAt  time.Time  `bun:"created_at"`
	StartedAt  *time.Time `bun:"started_at"`
	FinishedAt *time.Time `bun:"finished_at"`

	Children []Sync `bun:"-"`
}

// Active reports whether the sync is still queued or running.
func (s *Sync) Active() bool { return s.Status == SyncPending || s.Status == SyncRunning }

// CreateSync inserts a connection-level sync unless the connection already
// has an active one (or, for a scheduled sync, one for that day): the
// unique indexes decide, so concurrent requests make one row. It returns
// the new sync and true, or the active one and false.
func (s *Store) CreateSync(ctx context.Context, sy *Sync) (*Sync, bool, error) {
	sy.ID = NewID()
	sy.Kind = SyncKindConnection
	sy.Status = SyncPending
	sy.Phase = PhaseFetch
	sy.CreatedAt = s.now()
	if sy.NotBefore.IsZero() {
		sy.NotBefore = sy.CreatedAt
	}
	res, err := s.db.NewInsert().Model(sy).On("CONFLICT DO NOTHING").Exec(ctx)
	if err != nil {
		return nil, false, dbErr("create sync", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return sy, true, nil
	}
	active, err := s.ActiveSync(ctx, sy.FamilyID, sy.ConnectionID)
	if errors.Is(err, ErrNotFound) && sy.ScheduledFor != nil {
		return nil, false, nil // today's scheduled sync already ran
	}
	return active, false, err
}

// ActiveSync returns the connection's queued or running sync.
func (s *Store) ActiveSync(ctx context.Context, familyID, connectionID uuid.UUID) (*Sync, error) {
	sy := new(Sync)
	err := s.db.NewSelect().Model(sy).Where("sy.family_id = ?", familyID).Where("sy.connection_id = ?", connectionID).
		Where("sy.kind = ?", SyncKindConnection).Where("sy.status IN (?)", bun.List([]string{SyncPending, SyncRunning})).
		Limit(1).Scan(ctx)
	return sy, dbErr("get active sync", err)
}

// ActiveSyncs returns the queued or running sync of each of the given
// connections that has one, in one query (a list page shows many).
func (s *Store) ActiveSyncs(ctx context.Context, familyID uuid.UUID, connectionIDs []uuid.UUID) (map[uuid.UUID]*Sync, error) {
	out := map[uuid.UUID]*Sync{}
	if len(connectionIDs) == 0 {
		return out, nil
	}
	var syncs []Sync
	err := s.db.NewSelect().Model(&syncs).Where("sy.family_id = ?", familyID).Where("sy.connection_id IN (?)", bun.List(connectionIDs)).
		Where("sy.kind = ?", SyncKindConnection).Where("sy.status IN (?)", bun.List([]string{SyncPending, SyncRunning})).Scan(ctx)
	if err != nil {
		return nil, dbErr("list active syncs", err)
	}
	for i := range syncs {
		out[syncs[i].ConnectionID] = &syncs[i]
	}
	return out, nil
}

// HurrySync lets a pending sync that waits for its jitter run now; a
// deferred one (budget, rate limit) keeps its time. It reports whether
// the sync may run now.
func (s *Store) HurrySync(ctx context.Context, sy *Sync) (bool, error) {
	if sy.Status != SyncPending || sy.Trigger != TriggerSchedule || len(sy.Warnings) > 0 {
		return false, nil
	}
	now := s.now()
	res, err := s.db.NewUpdate().Model((*Sync)(nil)).Set("not_before = ?", now).
		Where("family_id = ?", sy.FamilyID).Where("id = ?", sy.ID).Where("status = ?", SyncPending).Where("not_before > ?", now).Exec(ctx)
	if err != nil {
		return false, dbErr("hurry sync", err)
	}
	n, _ := res.RowsAffected()
	if n == 1 {
		sy.NotBefore = now
	}
	return n == 1, nil
}

// LatestSync returns the family's newest parent sync, of one connection
// when connectionID is set.
func (s *Store) LatestSync(ctx context.Context, familyID uuid.UUID, connectionID *uuid.UUID) (*Sync, error) {
	syncs, _, err := s.Syncs(ctx, familyID, SyncFilter{ConnectionID: connectionID}, Page{Number: 1, Size: 1})
	if err != nil {
		return nil, err
	}
	if len(syncs) == 0 {
		return nil, ErrNotFound
	}
	return s.Sync(ctx, familyID, syncs[0].ID)
}

// Sync returns one sync of the family; a parent comes with its children.
func (s *Store) Sync(ctx context.Context, familyID, id uuid.UUID) (*Sync, error) {
	sy := new(Sync)
	if err := s.db.NewSelect().Model(sy).Where("sy.family_id = ?", familyID).Where("sy.id = ?", id).Scan(ctx); err != nil {
		return nil, dbErr("get sync", err)
	}
	if sy.Kind == SyncKindConnection {
		sy.Children = []Sync{}
		err := s.db.NewSelect().Model(&sy.Children).Where("sy.family_id = ?", familyID).Where("sy.parent_id = ?", id).
			OrderExpr("sy.created_at, sy.id").Scan(ctx)
		if err != nil {
			return nil, dbErr("get sync steps", err)
		}
	}
	return sy, nil
}

// AttachChildren fills the Children of each parent sync with one query,
// for lists that show every parent's account steps.
func (s *Store) AttachChildren(ctx context.Context, familyID uuid.UUID, parents []Sync) error {
	if len(parents) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(parents))
	at := make(map[uuid.UUID]int, len(parents))
	for i := range parents {
		ids[i], at[parents[i].ID] = parents[i].ID, i
		parents[i].Children = []Sync{}
	}
	var children []Sync
	err := s.db.NewSelect().Model(&children).Where("sy.family_id = ?", familyID).Where("sy.parent_id IN (?)", bun.List(ids)).
		OrderExpr("sy.created_at, sy.id").Scan(ctx)
	if err != nil {
		return dbErr("list sync steps", err)
	}
	for _, c := range children {
		i := at[*c.ParentID]
		parents[i].Children = append(parents[i].Children, c)
	}
	return nil
}

// SyncFilter narrows a list of parent syncs.
type SyncFilter struct {
	ConnectionID *uuid.UUID
	Status       string
}

// Syncs lists a page of the family's parent syncs, newest first.
func (s *Store) Syncs(ctx context.Context, familyID uuid.UUID, f SyncFilter, p Page) ([]Sync, int, error) {
	out := []Sync{}
	q := s.db.NewSelect().Model(&out).Where("sy.family_id = ?", familyID).Where("sy.kind = ?", SyncKindConnection).
		OrderExpr("sy.created_at DESC, sy.id DESC")
	if f.ConnectionID != nil {
		q.Where("sy.connection_id = ?", *f.ConnectionID)
	}
	if f.Status != "" {
		q.Where("sy.status = ?", f.Status)
	}
	n, err := p.scan(ctx, q)
	return out, n, dbErr("list syncs", err)
}

// LeaseSync takes a sync for one worker: a pending sync whose time has
// come, or a running one whose lease ran out (its worker died). Any other
// state is ErrNotFound: another worker owns it, or it is done.
func (s *Store) LeaseSync(ctx context.Context, familyID, id uuid.UUID, lease time.Duration) (*Sync, error) {
	now := s.now()
	sy := new(Sync)
	res, err := s.db.NewUpdate().Model(sy).
		Set("status = ?", SyncRunning).Set("lease_until = ?", now.Add(lease)).
		Set("started_at = COALESCE(started_at, ?)", now).
		Where("family_id = ?", familyID).Where("id = ?", id).
		Where("((status = ? AND not_before <= ?) OR (status = ? AND lease_until < ?))", SyncPending, now, SyncRunning, now).
		Returning("*").Exec(ctx, sy)
	if err := affectedOne(res, err, "lease sync"); err != nil {
		return nil, err
	}
	return sy, nil
}

// DeferSync puts a running sync back to pending until notBefore, for a
// refused budget or a rate limit; it uses up no retry.
func (s *Store) DeferSync(ctx context.Context, sy *Sync, notBefore time.Time, warning string) error {
	sy.Status, sy.NotBefore, sy.LeaseUntil = SyncPending, notBefore.UTC().Truncate(time.Microsecond), nil
	if warning != "" {
		sy.Warnings = appendWarning(sy.Warnings, warning)
	}
	// Only a run that still holds the sync hands it back: a step another
	// worker completed meanwhile stays completed.
	_, err := s.db.NewUpdate().Model(sy).Column("status", "not_before", "lease_until", "warnings", "requests_used").
		Where("family_id = ?", sy.FamilyID).WherePK().Where("status = ?", SyncRunning).Exec(ctx)
	return dbErr("defer sync", err)
}

// SaveSyncProgress records the requests and warnings of a running sync.
func (s *Store) SaveSyncProgress(ctx context.Context, sy *Sync) error {
	_, err := s.db.NewUpdate().Model(sy).Column("requests_used", "warnings", "window_start", "window_end", "accounts_created", "accounts_updated", "accounts_skipped").
		Where("family_id = ?", sy.FamilyID).WherePK().Exec(ctx)
	return dbErr("save sync", err)
}

// FailSync ends a sync (parent or child) as failed. A failed child then
// lets its parent finish.
func (s *Store) FailSync(ctx context.Context, sy *Sync, message string) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		now := tx.now()
		res, err := tx.db.NewUpdate().Model((*Sync)(nil)).
			Set("status = ?", SyncFailed).Set("error = ?", message).Set("finished_at = ?", now).Set("lease_until = NULL").
			Set("requests_used = ?", sy.RequestsUsed).Set("warnings = ?", jsonList(sy.Warnings)).
			Where("family_id = ?", sy.FamilyID).Where("id = ?", sy.ID).Where("status IN (?)", bun.List([]string{SyncPending, SyncRunning})).
			Exec(ctx)
		if err != nil {
			return dbErr("fail sync", err)
		}
		if n, _ := res.RowsAffected(); n == 1 && sy.ParentID != nil {
			return tx.finishParentIfDone(ctx, sy.FamilyID, *sy.ParentID)
		}
		if n, _ := res.RowsAffected(); n == 1 && sy.Kind == SyncKindConnection {
			return tx.deletePayloads(ctx, sy.FamilyID, sy.ID)
		}
		return nil
	})
}

// StartImport creates one child per remote account (ids given) and moves
// the parent to the import phase, in one transaction. A parent with no
// children completes at once. It returns the children still to run.
func (s *Store) StartImport(ctx context.Context, parent *Sync, providerAccountIDs []uuid.UUID) ([]Sync, error) {
	var todo []Sync
	err := s.RunInTx(ctx, func(tx *Store) error {
		now := tx.now()
		for _, pa := range providerAccountIDs {
			c := &Sync{ID: NewID(), FamilyID: parent.FamilyID, ConnectionID: parent.ConnectionID, ParentID: &parent.ID,
				ProviderAccountID: &pa, Kind: SyncKindAccount, Trigger: parent.Trigger, Full: parent.Full,
				Status: SyncPending, Phase: PhaseImport, WindowStart: parent.WindowStart, WindowEnd: parent.WindowEnd,
				NotBefore: now, CreatedAt: now}
			if _, err := tx.db.NewInsert().Model(c).On("CONFLICT DO NOTHING").Exec(ctx); err != nil {
				return dbErr("create sync step", err)
			}
		}
		parent.Phase = PhaseImport
		// A parent failed meanwhile (a disconnect) gets no steps.
		res, err := tx.db.NewUpdate().Model(parent).Column("phase", "requests_used", "warnings", "window_start", "window_end",
			"accounts_created", "accounts_updated", "accounts_skipped").
			Where("family_id = ?", parent.FamilyID).WherePK().Where("status = ?", SyncRunning).Exec(ctx)
		if err := affectedOne(res, err, "start import"); err != nil {
			return err
		}
		err = tx.db.NewSelect().Model(&todo).Where("sy.family_id = ?", parent.FamilyID).Where("sy.parent_id = ?", parent.ID).
			Where("sy.status IN (?)", bun.List([]string{SyncPending, SyncRunning})).OrderExpr("sy.id").Scan(ctx)
		if err != nil {
			return dbErr("list sync steps", err)
		}
		if len(todo) == 0 {
			return tx.finishParentIfDone(ctx, parent.FamilyID, parent.ID)
		}
		return nil
	})
	return todo, err
}

// completeChild marks an account step completed with its counts and
// finishes the parent when it was the last; it runs inside the import's
// transaction, so the rows and the bookkeeping commit together.
func (s *Store) completeChild(ctx context.Context, child *Sync) error {
	now := s.now()
	child.Status, child.FinishedAt, child.LeaseUntil = SyncCompleted, &now, nil
	res, err := s.db.NewUpdate().Model(child).
		Column("status", "finished_at", "lease_until", "warnings", "accounts_created", "accounts_updated", "accounts_skipped",
			"transactions_created", "transactions_updated", "transactions_skipped", "transactions_rejected",
			"pending_reconciled", "stale_pending_excluded", "reissued_suppressed").
		Where("family_id = ?", child.FamilyID).WherePK().Where("status = ?", SyncRunning).Exec(ctx)
	if err := affectedOne(res, err, "complete sync step"); err != nil {
		return err
	}
	return s.finishParentIfDone(ctx, child.FamilyID, *child.ParentID)
}

// finishParentIfDone locks the parent and, when no step is left pending or
// running, sums the steps into it and ends it: completed only if every
// step completed. It is never finished earlier, and only once.
func (s *Store) finishParentIfDone(ctx context.Context, familyID, parentID uuid.UUID) error {
	parent := new(Sync)
	q := s.db.NewSelect().Model(parent).Where("sy.family_id = ?", familyID).Where("sy.id = ?", parentID)
	if s.Postgres() {
		q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return dbErr("lock parent sync", err)
	}
	if !parent.Active() {
		return nil
	}
	var steps []Sync
	if err := s.db.NewSelect().Model(&steps).Where("sy.family_id = ?", familyID).Where("sy.parent_id = ?", parentID).Scan(ctx); err != nil {
		return dbErr("list sync steps", err)
	}
	var total SyncCounts
	failed := 0
	var firstErr string
	for _, st := range steps {
		if st.Active() {
			return nil
		}
		total.add(st.SyncCounts)
		if st.Status == SyncFailed {
			failed++
			if firstErr == "" && st.Error != nil {
				firstErr = *st.Error
			}
		}
		for _, w := range st.Warnings {
			parent.Warnings = appendWarning(parent.Warnings, w)
		}
	}
	// Account-level counts come from the fetch, not from the steps.
	total.AccountsCreated, total.AccountsUpdated, total.AccountsSkipped = parent.AccountsCreated, parent.AccountsUpdated, parent.AccountsSkipped
	now := s.now()
	parent.SyncCounts, parent.FinishedAt, parent.LeaseUntil = total, &now, nil
	parent.Status = SyncCompleted
	if failed > 0 {
		parent.Status = SyncFailed
		msg := fmt.Sprintf("%d of %d accounts failed: %s", failed, len(steps), firstErr)
		parent.Error = &msg
	}
	if _, err := s.db.NewUpdate().Model(parent).ExcludeColumn("id", "family_id", "connection_id", "created_at").
		Where("family_id = ?", familyID).WherePK().Exec(ctx); err != nil {
		return dbErr("finish sync", err)
	}
	if parent.Status == SyncCompleted {
		if _, err := s.db.NewUpdate().Model((*Connection)(nil)).
			Set("last_synced_at = ?", now).Set("last_success_sync_id = ?", parent.ID).
			Where("family_id = ?", familyID).Where("id = ?", parent.ConnectionID).Exec(ctx); err != nil {
			return dbErr("mark connection synced", err)
		}
	}
	return s.deletePayloads(ctx, familyID, parentID)
}

// LastCompletedSync returns the connection's newest completed parent.
func (s *Store) LastCompletedSync(ctx context.Context, familyID, connectionID uuid.UUID) (*Sync, error) {
	sy := new(Sync)
	err := s.db.NewSelect().Model(sy).Where("sy.family_id = ?", familyID).Where("sy.connection_id = ?", connectionID).
		Where("sy.kind = ?", SyncKindConnection).Where("sy.status = ?", SyncCompleted).
		OrderExpr("sy.finished_at DESC, sy.id DESC").Limit(1).Scan(ctx)
	return sy, dbErr("get last sync", err)
}

// StaleSyncs lists, across families (ids only, for the sweeper), the
// pending syncs that are due and the running ones whose lease ran out.
func (s *Store) StaleSyncs(ctx context.Context, now time.Time, limit int) ([]Sync, error) {
	var out []Sync
	err := s.db.NewSelect().Model(&out).
		Where("(sy.status = ? AND sy.not_before <= ?) OR (sy.status = ? AND sy.lease_until < ?)", SyncPending, now, SyncRunning, now).
		OrderExpr("sy.created_at").Limit(int64(limit)).Scan(ctx)
	return out, dbErr("list stale syncs", err)
}

// ExpireSyncs fails the pending parents whose start was due more than a
// day ago; it returns how many.
func (s *Store) ExpireSyncs(ctx context.Context, now time.Time) (int, error) {
	var stuck []Sync
	err := s.db.NewSelect().Model(&stuck).Where("sy.kind = ?", SyncKindConnection).
		Where("sy.status = ?", SyncPending).Where("sy.not_before < ?", now.Add(-24*time.Hour)).Scan(ctx)
	if err != nil {
		return 0, dbErr("list expired syncs", err)
	}
	for i := range stuck {
		if err := s.FailSync(ctx, &stuck[i], "expired"); err != nil {
			return i, err
		}
	}
	return len(stuck), nil
}

// LostSyncs lists, across families (for the sweeper), the parents still
// fetching whose lease ran out more than 10 minutes ago: their worker is
// gone, and the caller fails those that no task will run again.
func (s *Store) LostSyncs(ctx context.Context, now time.Time, limit int) ([]Sync, error) {
	var out []Sync
	err := s.db.NewSelect().Model(&out).Where("sy.kind = ?", SyncKindConnection).
		Where("sy.status = ?", SyncRunning).Where("sy.phase = ?", PhaseFetch).Where("sy.lease_until < ?", now.Add(-10*time.Minute)).
		OrderExpr("sy.created_at").Limit(int64(limit)).Scan(ctx)
	return out, dbErr("list lost syncs", err)
}

// ReleaseSync hands back the lease of a run that stopped early (its
// worker is shutting down): the sync is pending and due now, so the
// re-delivered task takes it at once instead of waiting out the lease.
// Only the lease the run took (lease) is handed back: one another worker
// has taken since is left alone.
func (s *Store) ReleaseSync(ctx context.Context, sy *Sync, lease time.Time) error {
	res, err := s.db.NewUpdate().Model((*Sync)(nil)).
		Set("status = ?", SyncPending).Set("not_before = ?", s.now()).Set("lease_until = NULL").
		Set("requests_used = ?", sy.RequestsUsed).Set("warnings = ?", jsonList(sy.Warnings)).
		Where("family_id = ?", sy.FamilyID).Where("id = ?", sy.ID).Where("status = ?", SyncRunning).
		Where("lease_until = ?", lease).Exec(ctx)
	if err != nil {
		return dbErr("release sync", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		sy.Status, sy.LeaseUntil = SyncPending, nil
	}
	return nil
}

func appendWarning(ws []string, w string) []string {
	if len(ws) >= 100 {
		return ws
	}
	return append(ws, w)
}
