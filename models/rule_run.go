package models

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Rule run statuses, as the reference names them.
const (
	RuleRunPending = "pending"
	RuleRunSuccess = "success"
	RuleRunFailed  = "failed"
)

// RuleRun is one application of a rule to the family's existing
// transactions, done in batches by the rule:apply job.
type RuleRun struct {
	bun.BaseModel `bun:"table:rule_runs,alias:rr"`

	ID                    uuid.UUID  `bun:"id,pk"`
	FamilyID              uuid.UUID  `bun:"family_id"`
	RuleID                *uuid.UUID `bun:"rule_id"` // nil once the rule is deleted
	RuleName              *string    `bun:"rule_name"`
	ExecutionType         string     `bun:"execution_type"`
	AllRules              bool       `bun:"all_rules"` // every active rule, in order, not one
	Status                string     `bun:"status"`
	TransactionsQueued    int        `bun:"transactions_queued"`
	TransactionsProcessed int        `bun:"transactions_processed"`
	TransactionsModified  int        `bun:"transactions_modified"`
	PendingJobsCount      int        `bun:"pending_jobs_count"`
	Cursor                *uuid.UUID `bun:"progress_cursor"` // last transaction id of the last committed batch
	ErrorMessage          *string    `bun:"error_message"`
	ExecutedAt            time.Time  `bun:"executed_at"`
	CreatedAt             time.Time  `bun:"created_at"`
	UpdatedAt             time.Time  `bun:"updated_at"`

	Rule *Rule `bun:"rel:belongs-to,join:rule_id=id,join:family_id=family_id"`

	// TransactionsReconciled counts the rows the run left alone because
	// a finished reconciliation locked them.
	TransactionsReconciled int `bun:"transactions_reconciled"`
}

// RuleRunFilter narrows a list of runs; zero fields do not filter.
type RuleRunFilter struct {
	RuleID        *uuid.UUID
	Status        string
	ExecutionType string
	From, To      *time.Time // executed_at bounds, inclusive
}

// RuleRuns lists a page of the family's runs, latest first.
func (s *Store) RuleRuns(ctx context.Context, familyID uuid.UUID, f RuleRunFilter, p Page) ([]RuleRun, int, error) {
	runs := []RuleRun{}
	q := s.db.NewSelect().Model(&runs).Relation("Rule").Where("rr.family_id = ?", familyID).
		OrderExpr("rr.executed_at DESC, rr.id DESC")
	if f.RuleID != nil {
		q.Where("rr.rule_id = ?", *f.RuleID)
	}
	if f.Status != "" {
		q.Where("rr.status = ?", f.Status)
	}
	if f.ExecutionType != "" {
		q.Where("rr.execution_type = ?", f.ExecutionType)
	}
	if f.From != nil {
		q.Where("rr.executed_at >= ?", f.From.UTC())
	}
	if f.To != nil {
		q.Where("rr.executed_at <= ?", f.To.UTC())
	}
	n, err := p.scan(ctx, q)
	return runs, n, dbErr("list rule runs", err)
}

// RuleRun returns one run of the family.
func (s *Store) RuleRun(ctx context.Context, familyID, id uuid.UUID) (*RuleRun, error) {
	run := new(RuleRun)
	err := s.db.NewSelect().Model(run).Relation("Rule").Where("rr.family_id = ?", familyID).Where("rr.id = ?", id).Scan(ctx)
	return run, dbErr("get rule run", err)
}

// CreateRuleRun records a pending run of a rule of the family over its
// transactions; the caller enqueues the job after this commits.
func (s *Store) CreateRuleRun(ctx context.Context, familyID, ruleID uuid.UUID, executionType string) (*RuleRun, error) {
	r, err := oneOf[Rule](ctx, s, familyID, ruleID, "get rule")
	if err != nil {
		return nil, err
	}
	return s.createRuleRun(ctx, familyID, r, executionType)
}

// CreateAllRulesRun records a pending run of every active rule, in their
// order, over all the family's transactions ("Apply all"): the rules
// interact as they do on a new row, the first to set a field winning.
func (s *Store) CreateAllRulesRun(ctx context.Context, familyID uuid.UUID) (*RuleRun, error) {
	return s.createRuleRun(ctx, familyID, nil, "manual")
}

// createRuleRun records a pending run of rule r, or of every rule when r
// is nil, counting the transactions it will look at.
func (s *Store) createRuleRun(ctx context.Context, familyID uuid.UUID, r *Rule, executionType string) (*RuleRun, error) {
	q := s.db.NewSelect().Model((*Transaction)(nil)).Where("family_id = ?", familyID).Where("deleted_at IS NULL")
	if r != nil && r.EffectiveDate != nil {
		q.Where("date >= ?", *r.EffectiveDate)
	}
	queued, err := q.Count(ctx)
	if err != nil {
		return nil, dbErr("count transactions", err)
	}
	now := s.now()
	run := &RuleRun{ID: NewID(), FamilyID: familyID, ExecutionType: executionType,
		Status: RuleRunPending, TransactionsQueued: int(queued), PendingJobsCount: 1, ExecutedAt: now, CreatedAt: now, UpdatedAt: now}
	if r != nil {
		run.RuleID, run.RuleName, run.Rule = &r.ID, r.Name, r
	} else {
		run.AllRules, run.RuleName = true, Ptr("All rules")
	}
	if _, err := s.db.NewInsert().Model(run).Exec(ctx); err != nil {
		return nil, dbErr("create rule run", err)
	}
	return run, nil
}

// PendingRuleRuns lists every pending run of every family, for the queue
// rebuild after the embedded mode restarts.
func (s *Store) PendingRuleRuns(ctx context.Context) ([]RuleRun, error) {
	var runs []RuleRun
	err := s.db.NewSelect().Model(&runs).Column("id", "family_id").Where("status = ?", RuleRunPending).Scan(ctx)
	return runs, dbErr("list pending rule runs", err)
}

// RuleRunStep applies a pending run's rule to the next batch of at most
// size transactions after its cursor, writes the changes, advances the
// cursor and the counts, all in one database transaction: a worker that
// dies mid-batch leaves the run where the last commit put it, and the
// re-run does that batch again from scratch. The run row is locked for the
// batch, so two deliveries of the same task never interleave. done is true
// once the run has ended (now or before); accounts are those whose
// balances changed.
func (s *Store) RuleRunStep(ctx context.Context, familyID, runID uuid.UUID, size int) (done bool, accounts []uuid.UUID, err error) {
	err = s.RunInTx(ctx, func(tx *Store) error {
		run := new(RuleRun)
		q := tx.db.NewSelect().Model(run).Where("rr.family_id = ?", familyID).Where("rr.id = ?", runID)
		if tx.Postgres() {
			q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return dbErr("lock rule run", err)
		}
		if run.Status != RuleRunPending {
			done = true
			return nil
		}
		if run.RuleID == nil && !run.AllRules {
			done = true
			return tx.endRuleRun(ctx, run, RuleRunFailed, "The rule was deleted before the run finished")
		}
		rs, err := tx.ActiveRules(ctx, familyID)
		if err != nil {
			return err
		}
		after := uuid.Nil
		if run.Cursor != nil {
			after = *run.Cursor
		}
		rows, _, err := tx.ruleRows(ctx, familyID, after, size, nil)
		if err != nil {
			return err
		}
		results := make([]RuleResult, len(rows))
		for i := range rows {
			if rows[i].Reconciled {
				run.TransactionsReconciled++ // Apply leaves it alone
			}
			if run.AllRules {
				results[i] = rs.Apply(rows[i])
			} else {
				results[i] = rs.ApplyOnly(rows[i], *run.RuleID)
			}
		}
		modified, acc, err := tx.writeRuleResults(ctx, familyID, results)
		if err != nil {
			return err
		}
		accounts = acc
		run.TransactionsProcessed += len(rows)
		run.TransactionsModified += modified
		if len(rows) > 0 {
			run.Cursor = &rows[len(rows)-1].ID
		}
		run.UpdatedAt = tx.now()
		columns := []string{"transactions_processed", "transactions_modified", "transactions_reconciled", "progress_cursor", "updated_at"}
		// The run goes on past a transfer it could not make; the first
		// reason is kept for the person to read.
		for _, r := range results {
			if r.TransferRefused != "" && run.ErrorMessage == nil {
				msg := r.TransferRefused
				run.ErrorMessage = &msg
				columns = append(columns, "error_message")
			}
		}
		if len(rows) < size {
			done = true
			run.Status, run.PendingJobsCount = RuleRunSuccess, 0
			columns = append(columns, "status", "pending_jobs_count")
		}
		_, err = tx.db.NewUpdate().Model(run).Column(columns...).Where("rr.family_id = ?", familyID).Where("rr.id = ?", runID).Exec(ctx)
		return dbErr("advance rule run", err)
	})
	return done, accounts, err
}

// FailRuleRun ends a pending run as failed with a message a person can
// read; a run already ended is left as it is.
func (s *Store) FailRuleRun(ctx context.Context, familyID, runID uuid.UUID, message string) error {
	run, err := s.RuleRun(ctx, familyID, runID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil || run.Status != RuleRunPending {
		return err
	}
	return s.endRuleRun(ctx, run, RuleRunFailed, message)
}

func (s *Store) endRuleRun(ctx context.Context, run *RuleRun, status, message string) error {
	run.Status, run.PendingJobsCount, run.UpdatedAt = status, 0, s.now()
	if message != "" {
		run.ErrorMessage = &message
	}
	_, err := s.db.NewUpdate().Model(run).Column("status", "pending_jobs_count", "error_message", "updated_at").
		Where("rr.family_id = ?", run.FamilyID).Where("rr.id = ?", run.ID).Where("rr.status = ?", RuleRunPending).Exec(ctx)
	return dbErr("end rule run", err)
}
