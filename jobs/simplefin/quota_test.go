package simplefin_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"coffer/jobs"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

// TestBudgetKeepsUnderTheBridgeQuota: with the Bridge warning at 3 and
// blocking at 5 requests a day, and the service's budget at 4, a burst of
// Sync now clicks, network retries (the client's and asynq's) and schedule
// ticks over three days never take a credential past 4 requests in any
// 24 h (the fake checks its log with Budget: 4), and never meet a block.
func TestBudgetKeepsUnderTheBridgeQuota(t *testing.T) {
	ctx := context.Background()
	clock := bridgetest.NewClock(time.Now().UTC())
	s := newSyncSetupWith(t, bridgetest.Options{Now: clock.Now, Budget: 4, Quota: bridgetest.Quota{Warn: 3, Block: 5}})
	s.h.Options.DailyBudget = 4
	s.bridge.Generate(5, 2, 20, 30)
	deferred := func(sy *models.Sync) {
		t.Helper()
		got, err := s.run(t, sy)
		var de *jobs.DeferError
		if !errors.As(err, &de) || got.Status != models.SyncPending {
			t.Fatalf("sync %s not deferred: %v %s", sy.ID, err, got.Status)
		}
	}

	// The first sync meets two connection resets: the client's retries
	// make 3 requests.
	s.bridge.Script(bridgetest.AccountsReset, bridgetest.AccountsReset)
	if got, err := s.run(t, s.first); err != nil || got.Status != models.SyncCompleted || got.RequestsUsed != 3 {
		t.Fatalf("first: %v %s, %d requests", err, got.Status, got.RequestsUsed)
	}
	// A burst of Sync now: the first fits (the Bridge warns), the next waits
	// for the first free slot, a day after the first requests.
	a, err := s.run(t, s.newSync(t, false))
	if err != nil || a.Status != models.SyncCompleted || !strings.Contains(strings.Join(a.Warnings, "|"), "quota") {
		t.Fatalf("second: %v %s %v", err, a.Status, a.Warnings)
	}
	b := s.newSync(t, false)
	deferred(b)
	if got, _ := s.store.Sync(ctx, b.FamilyID, b.ID); !got.NotBefore.Equal(clock.Now().Truncate(time.Millisecond).Add(24 * time.Hour)) {
		t.Fatalf("deferred to %v", got.NotBefore)
	}
	// A tick adds nothing while b waits; b delivered early sends nothing.
	schedule(t, s)
	if _, err := s.run(t, b); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.bridge.AccountsRequests(); n != 4 {
		t.Fatalf("%d requests on day one, want 4", n)
	}

	// A day later b meets resets on all four attempts, each one counted;
	// the asynq retry then finds the budget used up and waits another day.
	clock.Advance(24*time.Hour + time.Second)
	s.bridge.Script(bridgetest.AccountsReset, bridgetest.AccountsReset, bridgetest.AccountsReset, bridgetest.AccountsReset)
	if got, err := s.run(t, b); err == nil || got.Status != models.SyncPending || got.RequestsUsed != 4 {
		t.Fatalf("resets: %v %s, %d requests", err, got.Status, got.RequestsUsed)
	}
	deferred(b)
	schedule(t, s)

	// Day three: b completes with one request, then the day's tick runs
	// its sync after the jitter.
	clock.Advance(24*time.Hour + time.Second)
	if got, err := s.run(t, b); err != nil || got.Status != models.SyncCompleted {
		t.Fatalf("day three: %v %s", err, got.Status)
	}
	schedule(t, s)
	scheduled, err := s.store.ActiveSync(ctx, s.f.Family.ID, s.conn.ID)
	if err != nil || scheduled.Trigger != models.TriggerSchedule {
		t.Fatalf("scheduled sync: %v", err)
	}
	_ = s.insp.DeleteTask(jobs.QueueDefault, "simplefin:sync:"+scheduled.ID.String())
	clock.Advance(scheduled.NotBefore.Sub(clock.Now()))
	if got, err := s.run(t, scheduled); err != nil || got.Status != models.SyncCompleted {
		t.Fatalf("scheduled: %v %s", err, got.Status)
	}

	if n, _ := s.bridge.AccountsRequests(); n != 10 {
		t.Fatalf("%d requests, want 3+1, 4, 1+1", n)
	}
	for _, r := range s.bridge.AccountsLog() {
		if strings.HasPrefix(r.Fault, "quota-") {
			t.Fatalf("the Bridge blocked a request: %+v", r)
		}
	}
	if v := s.bridge.Violations(); len(v) != 0 {
		t.Fatalf("violations: %v", v)
	}
}

// TestBridgeQuotaBlock: when the Bridge blocks anyway (its threshold
// below the service's budget), every style makes the connection
// rate_limited, never requires_reconnect, with one request per run and
// none before retry_after: no retry storm.
func TestBridgeQuotaBlock(t *testing.T) {
	for _, tc := range []struct {
		name       string
		quota      bridgetest.Quota
		retryAfter time.Duration // expected: from Retry-After, else the base cooldown
	}{
		{"429 json", bridgetest.Quota{Block: 1, Style: bridgetest.Quota429JSON}, time.Hour},
		{"429 html with Retry-After", bridgetest.Quota{Block: 1, Style: bridgetest.Quota429HTML, RetryAfter: 7200}, 2 * time.Hour},
		{"429 html", bridgetest.Quota{Block: 1, Style: bridgetest.Quota429HTML}, time.Hour},
		{"html 403", bridgetest.Quota{Block: 1, Style: bridgetest.QuotaHTML403}, time.Hour},
		{"errors in a 200", bridgetest.Quota{Block: 1, Style: bridgetest.QuotaErrors200}, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := bridgetest.NewClock(time.Now().UTC())
			s := newSyncSetupWith(t, bridgetest.Options{Now: clock.Now, Quota: tc.quota})
			s.bridge.Generate(6, 1, 10, 10)
			for run := 1; run <= 3; run++ {
				started := clock.Now()
				got, err := s.run(t, s.first)
				var de *jobs.DeferError
				c := reload(t, s.store, s.conn)
				if !errors.As(err, &de) || got.Status != models.SyncPending || c.Status != models.ConnRateLimited {
					t.Fatalf("run %d: %v, sync %s, connection %s", run, err, got.Status, c.Status)
				}
				want := tc.retryAfter
				if tc.quota.RetryAfter == 0 {
					want <<= run - 1 // the cooldown doubles with each rate limit in a row: 1, 2, 4 h
				}
				if !c.RetryAfter.Equal(started.Add(want).Truncate(time.Microsecond)) {
					t.Fatalf("run %d: retry_after %v, want %v later", run, c.RetryAfter, want)
				}
				// Delivered again before retry_after: nothing is sent.
				if _, err := s.run(t, s.first); err != nil {
					t.Fatal(err)
				}
				if n, _ := s.bridge.AccountsRequests(); n != run {
					t.Fatalf("run %d: %d requests", run, n)
				}
				clock.Set(*c.RetryAfter)
			}
		})
	}
}
