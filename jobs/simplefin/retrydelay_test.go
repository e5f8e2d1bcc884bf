package simplefin

import (
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs"
)

// TestRetryDelay: 2, 8, 32 min ±20 % for SimpleFIN tasks; a deferral
// waits until its time; a longer Retry-After from a 5xx wins. The delays
// are read through the table the worker uses.
func TestRetryDelay(t *testing.T) {
	h := &Handlers{}
	table := h.Table()
	sync := asynq.NewTask(TypeSync, nil)
	cases := []struct {
		name     string
		n        int
		err      error
		min, max time.Duration
	}{
		{"first retry", 0, errors.New("boom"), 96 * time.Second, 144 * time.Second},
		{"second retry", 1, errors.New("boom"), 384 * time.Second, 576 * time.Second},
		{"third retry", 2, errors.New("boom"), 1536 * time.Second, 2304 * time.Second},
		{"Retry-After longer", 0, &retryAfterError{msg: "server error (503)", after: time.Hour}, time.Hour, time.Hour},
		{"Retry-After shorter", 0, &retryAfterError{msg: "server error (503)", after: time.Second}, 96 * time.Second, 144 * time.Second},
		{"deferred", 0, &jobs.DeferError{Until: time.Now().Add(3 * time.Hour)}, 3*time.Hour - time.Minute, 3 * time.Hour},
	}
	for _, tc := range cases {
		if d := table.RetryDelay(tc.n, tc.err, sync); d < tc.min || d > tc.max {
			t.Errorf("%s: %v, want %v..%v", tc.name, d, tc.min, tc.max)
		}
	}
}

// Zero options take the defaults their env tags name, which the daily
// budget constant repeats for the API's callers.
func TestOptionDefaults(t *testing.T) {
	o := Options{OverlapDays: -1}.withDefaults()
	if o.LookbackDays != 90 || o.ChunkDays != 90 || o.OverlapDays != 7 || o.DailyBudget != DefaultDailyBudget ||
		o.PendingMatchDays != 8 || o.StalePendingDays != 14 || o.Jitter != 30*time.Minute || o.Cooldown != time.Hour {
		t.Fatalf("defaults: %+v", o)
	}
	if got := (Options{LookbackDays: 5, OverlapDays: 0}).withDefaults(); got.LookbackDays != 5 || got.OverlapDays != 0 {
		t.Fatalf("set values kept: %+v", got)
	}
}
