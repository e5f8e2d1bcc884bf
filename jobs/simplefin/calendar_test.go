package simplefin_test

import (
	"context"
	"testing"
	"time"

	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/models"
)

// TestNextSync: next_sync_at is the queued sync's time; else a future
// retry_after; else the next cron tick plus the connection's jitter,
// exactly when the daily fan-out queues it; none for a connection that
// waits for the user.
func TestNextSync(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	s.h.Options.Jitter = 30 * time.Minute
	cal, err := simplefin.NewSyncCalendar("22 2 * * *", nil, 30*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	conn := reload(t, s.store, s.conn)
	if got := cal.NextSync(conn, s.first, time.Now()); got == nil || !got.Equal(s.first.NotBefore) {
		t.Fatalf("with a queued sync: %v, want %v", got, s.first.NotBefore)
	}
	if err := s.store.FailSync(ctx, s.first, "test"); err != nil {
		t.Fatal(err)
	}

	before := time.Date(2026, 3, 4, 1, 0, 0, 0, time.UTC)
	next := cal.NextSync(conn, nil, before)
	tick := time.Date(2026, 3, 4, 2, 22, 0, 0, time.UTC)
	if next == nil || next.Before(tick) || !next.Before(tick.Add(30*time.Minute)) {
		t.Fatalf("scheduled: %v, want within 30 min after %v", next, tick)
	}
	if again := cal.NextSync(conn, nil, before.Add(-24*time.Hour)); again == nil || next.Sub(*again) != 24*time.Hour {
		t.Fatalf("the jitter is not stable: %v then %v", again, next)
	}
	// The fan-out on that tick queues the sync for exactly that time.
	s.h.Now = func() time.Time { return tick }
	schedule(t, s)
	scheduled, err := s.store.ActiveSync(ctx, s.f.Family.ID, conn.ID)
	if err != nil || scheduled.Trigger != models.TriggerSchedule {
		t.Fatalf("scheduled sync: %+v %v", scheduled, err)
	}
	if d := scheduled.NotBefore.Sub(*next); d < -time.Microsecond || d > time.Microsecond {
		t.Fatalf("the fan-out queued it at %v, next_sync_at said %v", scheduled.NotBefore, next)
	}
	_ = s.insp.DeleteTask(jobs.QueueDefault, "simplefin:sync:"+scheduled.ID.String())

	// In the scheduler's zone: 02:22 in New York is 07:22 UTC in March.
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	nyCal, err := simplefin.NewSyncCalendar("22 2 * * *", ny, 30*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got := nyCal.NextSync(conn, nil, tick); got == nil || got.Sub(tick.Add(5*time.Hour)) != next.Sub(tick) {
		t.Fatalf("New York: %v", got)
	}

	retry := before.Add(3 * time.Hour)
	limited := *conn
	limited.Status, limited.RetryAfter = models.ConnRateLimited, &retry
	if got := cal.NextSync(&limited, nil, before); got == nil || !got.Equal(retry) {
		t.Fatalf("rate limited: %v, want %v", got, retry)
	}
	if got := cal.NextSync(&limited, nil, retry.Add(time.Minute)); got == nil || !got.After(retry) {
		t.Fatalf("rate limit over: %v", got)
	}
	for _, status := range []string{models.ConnClaiming, models.ConnClaimFailed, models.ConnRequiresReconnect, models.ConnDisconnected} {
		waiting := *conn
		waiting.Status = status
		if got := cal.NextSync(&waiting, nil, before); got != nil {
			t.Errorf("%s: %v, want none", status, got)
		}
	}
	if _, err := simplefin.NewSyncCalendar("not a cron", nil, 0); err == nil {
		t.Error("a bad cron was accepted")
	}
	if got := (&simplefin.SyncCalendar{}).NextSync(conn, nil, before); got != nil {
		t.Errorf("without a cron: %v", got)
	}
}
