package jobs

import (
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// Job is how the worker runs one task type.
type Job struct {
	Handler asynq.HandlerFunc
	// RetryDelay is the wait before retry n+1 of a failed run; nil keeps
	// asynq's default. A deferral never reaches it (see Table.RetryDelay).
	RetryDelay asynq.RetryDelayFunc
}

// Table maps task types to their jobs. Each jobs package lists all of its
// types in one Table; the worker merges them and registers every row, so a
// type that is enqueued but not listed fails the worker's registry test.
type Table map[string]Job

// Merge joins tables into one; a task type listed twice is a wiring
// mistake and an error.
func Merge(tables ...Table) (Table, error) {
	out := Table{}
	for _, t := range tables {
		for typ, j := range t {
			if _, dup := out[typ]; dup {
				return nil, fmt.Errorf("jobs: task type %q is listed twice", typ)
			}
			if j.Handler == nil {
				return nil, fmt.Errorf("jobs: task type %q has no handler", typ)
			}
			out[typ] = j
		}
	}
	return out, nil
}

// RetryDelay is the worker's wait before retry n+1 of t: a deferral runs
// at its own time; a type with its own RetryDelay uses it; the rest keep
// asynq's default.
func (tb Table) RetryDelay(n int, err error, t *asynq.Task) time.Duration {
	var de *DeferError
	if errors.As(err, &de) {
		return max(time.Until(de.Until), time.Second)
	}
	if j, ok := tb[t.Type()]; ok && j.RetryDelay != nil {
		return j.RetryDelay(n, err, t)
	}
	return asynq.DefaultRetryDelayFunc(n, err, t)
}

// DeferError ends a run that must wait (a full budget, a rate limit): the
// worker retries the task at Until without counting a failure.
type DeferError struct {
	Until time.Time
}

func (e *DeferError) Error() string { return "jobs: deferred until " + e.Until.Format(time.RFC3339) }

// IsFailure tells the worker that a deferral is not a failure: it uses up
// no retry and does not count in the error rate.
func IsFailure(err error) bool {
	var de *DeferError
	return !errors.As(err, &de)
}
