package rest

import (
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/models"
)

type ruleRunRuleJSON struct {
	ID           string  `json:"id"`
	Name         *string `json:"name"`
	ResourceType string  `json:"resource_type"`
	Active       bool    `json:"active"`
}

type ruleRunJSON struct {
	ID                    string           `json:"id"`
	RuleID                *string          `json:"rule_id"`
	RuleName              *string          `json:"rule_name"`
	ExecutionType         string           `json:"execution_type"`
	Status                string           `json:"status"`
	TransactionsQueued    int              `json:"transactions_queued"`
	TransactionsProcessed int              `json:"transactions_processed"`
	TransactionsModified  int              `json:"transactions_modified"`
	PendingJobsCount      int              `json:"pending_jobs_count"`
	ExecutedAt            string           `json:"executed_at"`
	ErrorMessage          *string          `json:"error_message"`
	Rule                  *ruleRunRuleJSON `json:"rule"`
	CreatedAt             string           `json:"created_at"`
	UpdatedAt             string           `json:"updated_at"`

	// TransactionsReconciled is coffer's own: rows left alone as reconciled.
	TransactionsReconciled int `json:"transactions_reconciled"`
}

func renderRuleRun(r *models.RuleRun) ruleRunJSON {
	out := ruleRunJSON{ID: r.ID.String(), RuleID: optID(r.RuleID), RuleName: r.RuleName, ExecutionType: r.ExecutionType,
		Status: r.Status, TransactionsQueued: r.TransactionsQueued, TransactionsProcessed: r.TransactionsProcessed,
		TransactionsModified: r.TransactionsModified, PendingJobsCount: r.PendingJobsCount, ExecutedAt: timestamp(r.ExecutedAt),
		ErrorMessage: r.ErrorMessage, CreatedAt: timestamp(r.CreatedAt), UpdatedAt: timestamp(r.UpdatedAt),
		TransactionsReconciled: r.TransactionsReconciled}
	if r.Rule != nil && r.RuleID != nil {
		out.Rule = &ruleRunRuleJSON{ID: r.Rule.ID.String(), Name: r.Rule.Name, ResourceType: r.Rule.ResourceType, Active: r.Rule.Active}
	}
	return out
}

// ruleRunFilter reads rule_id, status, execution_type, start_executed_at
// and end_executed_at; a value that can name nothing is a 422 listing each.
func ruleRunFilter(c *fiber.Ctx) (models.RuleRunFilter, error) {
	var f models.RuleRunFilter
	var problems []string
	if v := c.Query("rule_id"); v != "" {
		id, err := uuid.Parse(v)
		if err != nil || len(v) != 36 {
			problems = append(problems, "rule_id must be a valid UUID")
		}
		f.RuleID = &id
	}
	switch v := c.Query("status"); v {
	case "", models.RuleRunPending, models.RuleRunSuccess, models.RuleRunFailed:
		f.Status = v
	default:
		problems = append(problems, "status must be one of: pending, success, failed")
	}
	switch v := c.Query("execution_type"); v {
	case "", "manual", "scheduled":
		f.ExecutionType = v
	default:
		problems = append(problems, "execution_type must be one of: manual, scheduled")
	}
	for _, q := range []struct {
		name string
		dst  **time.Time
	}{{"start_executed_at", &f.From}, {"end_executed_at", &f.To}} {
		if v := c.Query(q.name); v != "" {
			ts, err := time.Parse(time.RFC3339, v)
			if err != nil {
				problems = append(problems, q.name+" must be an ISO 8601 timestamp")
			}
			*q.dst = &ts
		}
	}
	if len(problems) > 0 {
		return f, httperr.Invalid(problems)
	}
	return f, nil
}

func (h *Handler) listRuleRuns(c *fiber.Ctx) error {
	filter, err := ruleRunFilter(c)
	if err != nil {
		return err
	}
	p, err := parsePage(c)
	if err != nil {
		return err
	}
	runs, total, err := h.store.RuleRuns(c.UserContext(), KeyOf(c).FamilyID, filter, p)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": renderAll(runs, renderRuleRun), "meta": metaOf(p, total)})
}

func (h *Handler) showRuleRun(c *fiber.Ctx) error {
	r, err := byPathID(c, h.store.RuleRun)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": renderRuleRun(r)})
}
