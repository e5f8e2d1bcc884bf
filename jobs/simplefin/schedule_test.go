package simplefin_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

// TestFetchInfo: the /info read stores the versions; delivered again, it
// finds them stored and spends no request; a reconnect's claim clears
// them, so the read that follows it asks the new access URL.
func TestFetchInfo(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	s.fetchInfo(t)
	if got := reload(t, s.store, s.conn).ServerVersions; len(got) != 1 || got[0] != "1.0" {
		t.Fatalf("server versions %v", got)
	}
	reads := func() int {
		n := 0
		for _, r := range s.bridge.Log() {
			if strings.HasSuffix(r.Path, "/info") {
				n++
			}
		}
		return n
	}
	s.fetchInfo(t)
	if n := reads(); n != 1 {
		t.Fatalf("%d /info requests after a second delivery", n)
	}
	c := reload(t, s.store, s.conn)
	if err := s.store.ReconnectConnection(ctx, c, s.bridge.Token("c1b")); err != nil {
		t.Fatal(err)
	}
	if err := runClaim(t, s.h, c); err != nil {
		t.Fatal(err)
	}
	if got := reload(t, s.store, s.conn); got.Status != models.ConnActive || len(got.ServerVersions) != 0 {
		t.Fatalf("after the reconnect: %s, versions %v", got.Status, got.ServerVersions)
	}
	s.fetchInfo(t)
	if got := reload(t, s.store, s.conn).ServerVersions; len(got) != 1 || reads() != 2 {
		t.Fatalf("versions %v after %d /info requests", got, reads())
	}
}

// TestScheduleOneSyncPerConnection: two schedulers on the same tick make
// one scheduled sync per connection, queued after a stable jitter inside
// the window; a connection that needs a reconnect is skipped.
func TestScheduleOneSyncPerConnection(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	s.h.Options.Jitter = 30 * time.Minute
	if err := s.store.FailSync(ctx, s.first, "test"); err != nil {
		t.Fatal(err)
	}
	other := connect(t, s.store, s.f, s.bridge.Token("c2"))
	if err := runClaim(t, s.h, other); err != nil {
		t.Fatal(err)
	}
	other = reload(t, s.store, other)
	if sy, err := s.store.ActiveSync(ctx, s.f.Family.ID, other.ID); err == nil {
		if err := s.store.FailSync(ctx, sy, "test"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.store.ConnectionFetchFailed(ctx, other, models.ConnRequiresReconnect, simplefin.MsgReconnect, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		schedule(t, s)
	}
	scheduled := s.scheduledSyncs(t)
	if len(scheduled) != 1 || scheduled[0].ConnectionID != s.conn.ID {
		t.Fatalf("%d scheduled syncs: %+v", len(scheduled), scheduled)
	}
	delay := scheduled[0].NotBefore.Sub(scheduled[0].CreatedAt)
	if delay < 0 || delay >= 30*time.Minute {
		t.Fatalf("jitter %v outside the window", delay)
	}
	info, err := s.insp.GetTaskInfo(jobs.QueueDefault, "simplefin:sync:"+scheduled[0].ID.String())
	if err != nil || info.State != asynq.TaskStateScheduled {
		t.Fatalf("scheduled task: %v %v", info, err)
	}
	_ = s.insp.DeleteTask(jobs.QueueDefault, info.ID)
	// Sync now on it runs it at once.
	hurried, err := s.store.HurrySync(ctx, &scheduled[0])
	if err != nil || !hurried {
		t.Fatalf("hurry: %v %v", hurried, err)
	}
	got, err := s.run(t, &scheduled[0])
	if err != nil || got.Status != models.SyncCompleted {
		t.Fatalf("scheduled sync run now: %v %s", err, got.Status)
	}
}

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

// TestBankLevelError: one bank's sign-in problem flags its accounts and
// shows on the connection; the other accounts import; the connection
// stays active. A "was capped" gen.api message is a sync warning.
func TestBankLevelError(t *testing.T) {
	s := newSyncSetup(t)
	day := time.Now().UTC().Add(-24 * time.Hour).Unix()
	body := `{"errors":[],"errlist":[{"code":"con.auth","msg":"Bank B needs you to sign in again","conn_id":"CON-B"},
	  {"code":"gen.api","message":"Requested date range exceeds limit of 90 days and was capped."}],
	  "connections":[{"conn_id":"CON-A","name":"Bank A","org_id":"a","sfin_url":"x"},{"conn_id":"CON-B","name":"Bank B","org_id":"b","sfin_url":"y"}],
	  "accounts":[{"id":"A1","name":"Checking","conn_id":"CON-A","currency":"USD","balance":"1.00","balance-date":` + itoa(day) + `,
	    "transactions":[{"id":"T1","posted":` + itoa(day) + `,"amount":"-1.00","description":"X"}]},
	  {"id":"B1","name":"Savings","conn_id":"CON-B","currency":"USD","balance":"2.00","balance-date":` + itoa(day) + `,"transactions":[]}]}`
	s.bridge.SetAccounts(bridgetest.AccountsNormally, body)
	got, err := s.run(t, s.first)
	if err != nil || got.Status != models.SyncCompleted || got.TransactionsCreated != 1 {
		t.Fatalf("%v %s %+v", err, got.Status, got.SyncCounts)
	}
	if !strings.Contains(strings.Join(got.Warnings, "|"), "was capped") {
		t.Errorf("warnings %v", got.Warnings)
	}
	c := reload(t, s.store, s.conn)
	if c.Status != models.ConnActive || len(c.ProviderErrors) != 1 || !strings.Contains(c.ProviderErrors[0].Message, "Bank B") {
		t.Fatalf("connection %s %v", c.Status, c.ProviderErrors)
	}
	pas, _ := s.store.ProviderAccounts(context.Background(), s.f.Family.ID, s.conn.ID)
	for _, pa := range pas {
		if (pa.RemoteID == "B1") != (pa.Attention != nil) || *pa.OrgName != map[string]string{"A1": "Bank A", "B1": "Bank B"}[pa.RemoteID] {
			t.Errorf("%s: attention %v org %v", pa.RemoteID, pa.Attention, pa.OrgName)
		}
	}

	// The next answer leaves Bank B's accounts out (its login still needs
	// attention) and reports act.failed for A1: the connection stays
	// active, B1 is kept, not deleted, and A1 is flagged too.
	body = `{"errors":[],"errlist":[{"code":"con.auth","msg":"Bank B needs you to sign in again","conn_id":"CON-B"},
	  {"code":"act.failed","message":"Checking could not be read","account_id":"A1"}],
	  "connections":[{"conn_id":"CON-A","name":"Bank A","org_id":"a","sfin_url":"x"}],
	  "accounts":[{"id":"A1","name":"Checking","conn_id":"CON-A","currency":"USD","balance":"1.00","balance-date":` + itoa(day) + `,
	    "transactions":[{"id":"T1","posted":` + itoa(day) + `,"amount":"-1.00","description":"X"}]}]}`
	s.bridge.SetAccounts(bridgetest.AccountsNormally, body)
	again, err := s.run(t, s.newSync(t, false))
	if err != nil || again.Status != models.SyncCompleted {
		t.Fatalf("second: %v %s", err, again.Status)
	}
	c = reload(t, s.store, s.conn)
	if c.Status != models.ConnActive || len(c.ProviderErrors) != 2 || c.ProviderErrors[1].Code != "act.failed" || c.ProviderErrors[1].RemoteAccountID != "A1" {
		t.Fatalf("connection %s %+v", c.Status, c.ProviderErrors)
	}
	pas, _ = s.store.ProviderAccounts(context.Background(), s.f.Family.ID, s.conn.ID)
	if len(pas) != 2 {
		t.Fatalf("%d remote accounts after one was left out, want 2", len(pas))
	}
	for _, pa := range pas {
		if pa.Attention == nil {
			t.Errorf("%s: no attention", pa.RemoteID)
		}
	}
	if n := len(s.imported(t)); n != 1 {
		t.Fatalf("%d rows", n)
	}
}

// TestRedirectAndTooLarge: a 302 is not followed and fails the sync; an
// answer over the byte cap fails it without a retry.
func TestRedirectAndTooLarge(t *testing.T) {
	s := newSyncSetup(t)
	s.bridge.SetAccounts(bridgetest.AccountsRedirect, "")
	got, err := s.run(t, s.first)
	if err != nil || got.Status != models.SyncFailed || !strings.Contains(*got.Error, "302") {
		t.Fatalf("redirect: %v %s %v", err, got.Status, got.Error)
	}
	s.bridge.SetAccounts(bridgetest.AccountsNormally, "")
	s.bridge.SetDataset(bridgetest.Generate(1, 1, 100, 10, time.Now().UTC()))
	s.h.Options.MaxBody = 1000
	got, err = s.run(t, s.newSync(t, false))
	if err != nil || got.Status != models.SyncFailed || !strings.Contains(*got.Error, "response too large") || got.RequestsUsed != 1 {
		t.Fatalf("too large: %v %s %v", err, got.Status, got.Error)
	}
	if n, _ := s.bridge.AccountsRequests(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestPaymentRequiredProbedDaily: a connection whose subscription lapsed
// gets one scheduled probe a day, however often the schedule ticks, and
// the probe's 402 fails it without a retry.
func TestPaymentRequiredProbedDaily(t *testing.T) {
	s := newSyncSetup(t)
	s.bridge.SetAccounts(bridgetest.Accounts402, "")
	if got, err := s.run(t, s.first); err != nil || got.Status != models.SyncFailed {
		t.Fatalf("402: %v %s", err, got.Status)
	}
	// Days in the past, so that each probe is due by the real clock too.
	d0 := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -3)
	day := d0
	s.h.Now = func() time.Time { return day }
	for i, want := range []int{1, 1, 2} {
		day = d0.Add([]time.Duration{time.Hour, 13 * time.Hour, 25 * time.Hour}[i]) // the same day twice, then the next
		for i := 0; i < 2; i++ {
			schedule(t, s)
		}
		probes := s.scheduledSyncs(t)
		if len(probes) != want {
			t.Fatalf("%d probes, want %d", len(probes), want)
		}
		if probe := &probes[0]; probe.Status == models.SyncPending {
			day = probe.NotBefore // after its jitter
			if got, err := s.run(t, probe); err != nil || got.Status != models.SyncFailed {
				t.Fatalf("probe: %v %s", err, got.Status)
			}
		}
		if want == 1 && reload(t, s.store, s.conn).Status != models.ConnPaymentRequired {
			t.Fatal("the connection left payment_required")
		}
	}
}
