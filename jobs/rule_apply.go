package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/models"
)

// TypeRuleApply applies a rule to the family's existing transactions: the
// rule run it names, batch after batch, from the run's cursor.
const TypeRuleApply = "rule:apply"

// RuleApplyBatch is how many transactions one committed step of a rule
// run reads and changes.
const RuleApplyBatch = 1000

// RuleApplyPayload names the rule run to carry on.
type RuleApplyPayload struct {
	FamilyID  uuid.UUID `json:"family_id"`
	RuleRunID uuid.UUID `json:"rule_run_id"`
}

// NewRuleApplyTask builds the job of a rule run. Its task id makes it
// unique per run while it waits or runs.
func NewRuleApplyTask(familyID, runID uuid.UUID) (*asynq.Task, error) {
	return NewTask(TypeRuleApply, RuleApplyPayload{FamilyID: familyID, RuleRunID: runID},
		asynq.TaskID("rule:apply:"+runID.String()), asynq.Queue(QueueDefault), asynq.MaxRetry(5),
		asynq.Timeout(30*time.Minute), asynq.Retention(time.Hour))
}

// RuleApply handles TypeRuleApply. Each step commits its batch with the
// run's cursor and counts, so a task cut off anywhere (the worker killed,
// its context cancelled) is picked up by the retry where the last commit
// left it; a run that has ended is left alone. The last failed attempt
// marks the run failed. The store reports the balances each step changed
// (see Balances).
func (h *Handlers) RuleApply(ctx context.Context, t *asynq.Task) error {
	var p RuleApplyPayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	var err error
	for done := false; !done; {
		if err = ctx.Err(); err != nil {
			break
		}
		done, _, err = h.Store.RuleRunStep(ctx, p.FamilyID, p.RuleRunID, RuleApplyBatch)
		if err != nil {
			break
		}
	}
	if errors.Is(err, models.ErrNotFound) {
		return nil // the run (or its family) is gone
	}
	if err != nil {
		retried, _ := asynq.GetRetryCount(ctx)
		most, _ := asynq.GetMaxRetry(ctx)
		if retried >= most && ctx.Err() == nil {
			if ferr := h.Store.FailRuleRun(ctx, p.FamilyID, p.RuleRunID, "The rule could not be applied; try again"); ferr != nil {
				return fmt.Errorf("jobs: rule apply: %w (and marking it failed: %w)", err, ferr)
			}
		}
		return fmt.Errorf("jobs: rule apply: %w", err)
	}
	return nil
}
