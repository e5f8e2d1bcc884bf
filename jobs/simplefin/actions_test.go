package simplefin_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
)

// actionsSetup is a family, a fake Bridge, the actions under test and
// the handlers that run the claims they queue, on one store and Redis.
type actionsSetup struct {
	a     *simplefin.Actions
	h     *simplefin.Handlers
	store *models.Store
	rdb   redis.UniversalClient
	insp  *asynq.Inspector
	fake  *bridgetest.Server
	f     *modelstest.FamilyFixture
}

func newActions(t *testing.T) *actionsSetup {
	t.Helper()
	h, store, rdb := newHandlers(t)
	h.Redis = rdb
	h.Bridge = bridge.NewClient(bridge.Options{AllowHTTP: true, AllowPrivateHosts: true, ClaimTimeout: 2 * time.Second, RetryInitial: 5 * time.Millisecond})
	s := &actionsSetup{h: h, store: store, rdb: rdb, insp: asynq.NewInspectorFromRedisClient(rdb), fake: bridgetest.New(t),
		f: modelstest.NewFamily(t, store, "actions"),
		a: &simplefin.Actions{Store: store, Queue: h.Queue, Redis: rdb, Log: h.Log, AllowHTTP: true}}
	t.Cleanup(func() { s.forgetTasks(t) })
	return s
}

// forgetTasks deletes the queued tasks of the family from the queues.
func (s *actionsSetup) forgetTasks(t *testing.T) {
	for q := range jobs.Queues() {
		for _, list := range []func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){s.insp.ListPendingTasks, s.insp.ListScheduledTasks} {
			infos, _ := list(q, asynq.PageSize(1000))
			for _, info := range infos {
				var p struct {
					FamilyID uuid.UUID `json:"family_id"`
				}
				if json.Unmarshal(info.Payload, &p) == nil && p.FamilyID == s.f.Family.ID {
					_ = s.insp.DeleteTask(q, info.ID)
				}
			}
		}
	}
}

// taskState is the state of a queued task, or "gone".
func (s *actionsSetup) taskState(queue, id string) string {
	info, err := s.insp.GetTaskInfo(queue, id)
	if err != nil {
		return "gone"
	}
	return info.State.String()
}

// connect connects through the actions with a valid token of the fake.
func (s *actionsSetup) connect(t *testing.T, code string) *models.Connection {
	t.Helper()
	conn, err := s.a.Connect(context.Background(), simplefin.NewConnection{FamilyID: s.f.Family.ID, CreatedBy: s.f.User.ID,
		SetupToken: s.fake.Token(code), IncludePending: true})
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// active connects and runs the claim, then ends the first sync: the
// connection is active with no sync under way.
func (s *actionsSetup) active(t *testing.T, code string) *models.Connection {
	t.Helper()
	ctx := context.Background()
	conn := s.connect(t, code)
	if err := runClaim(t, s.h, conn); err != nil {
		t.Fatal(err)
	}
	first, err := s.store.ActiveSync(ctx, conn.FamilyID, conn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.store.FailSync(ctx, first, "test"); err != nil {
		t.Fatal(err)
	}
	_ = s.insp.DeleteTask(jobs.QueueDefault, "simplefin:sync:"+first.ID.String())
	return reload(t, s.store, conn)
}

func claimID(c *models.Connection) string {
	return "simplefin:claim:" + c.ID.String() + ":" + strconv.Itoa(c.ClaimSeq)
}

func TestConnect(t *testing.T) {
	s := newActions(t)
	ctx := context.Background()
	var te *bridge.TokenError
	if _, err := s.a.Connect(ctx, simplefin.NewConnection{FamilyID: s.f.Family.ID, CreatedBy: s.f.User.ID, SetupToken: "not a token"}); !errors.As(err, &te) {
		t.Fatalf("bad token: %v, want a TokenError", err)
	}
	if cs, n, err := s.store.Connections(ctx, s.f.Family.ID, models.Page{Number: 1, Size: 10}); err != nil || n != 0 {
		t.Fatalf("a bad token stored %d connections (%v): %+v", n, err, cs)
	}
	lookback := 30
	conn, err := s.a.Connect(ctx, simplefin.NewConnection{FamilyID: s.f.Family.ID, CreatedBy: s.f.User.ID,
		SetupToken: "  " + s.fake.Token("new") + "\n", LookbackDays: &lookback})
	if err != nil {
		t.Fatal(err)
	}
	got := reload(t, s.store, conn)
	if got.Name != "SimpleFIN" || got.Status != models.ConnClaiming || got.IncludePending || got.LookbackDays == nil ||
		*got.LookbackDays != 30 || got.CreatedBy == nil || *got.CreatedBy != s.f.User.ID {
		t.Fatalf("stored %+v", got)
	}
	if st := s.taskState(jobs.QueueCritical, claimID(got)); st != "pending" {
		t.Fatalf("claim task %s", st)
	}
	// The stored token is the one given, without the white space around it.
	if err := runClaim(t, s.h, got); err != nil || reload(t, s.store, got).Status != models.ConnActive {
		t.Fatalf("claim: %v, %s", err, reload(t, s.store, got).Status)
	}
}

func TestStartSync(t *testing.T) {
	s := newActions(t)
	ctx := context.Background()
	claiming := s.connect(t, "claiming")
	var se *simplefin.StateError
	if _, err := s.a.StartSync(ctx, s.f.Family.ID, claiming.ID, false); !errors.As(err, &se) || se.Status != models.ConnClaiming ||
		!errors.Is(err, models.ErrConflict) {
		t.Fatalf("claiming: %v", err)
	}
	if _, err := s.a.StartSync(ctx, uuid.New(), claiming.ID, false); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("another family's connection: %v", err)
	}

	conn := s.active(t, "sync")
	first, err := s.a.StartSync(ctx, s.f.Family.ID, conn.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	sy := first.Sync
	if !first.Created || first.WaitsForBudget || first.Hurried || !sy.Full || sy.Trigger != models.TriggerManual || sy.NotBefore.After(time.Now()) {
		t.Fatalf("first click: %+v, sync %+v", first, sy)
	}
	if st := s.taskState(jobs.QueueDefault, "simplefin:sync:"+sy.ID.String()); st != "pending" {
		t.Fatalf("sync task %s", st)
	}
	// A second click answers the same sync and queues nothing.
	again, err := s.a.StartSync(ctx, s.f.Family.ID, conn.ID, false)
	if err != nil || again.Created || again.Hurried || again.Sync.ID != sy.ID {
		t.Fatalf("second click: %+v %v", again, err)
	}

	// A scheduled sync still waiting for its jitter is made due now.
	if err := s.store.FailSync(ctx, sy, "test"); err != nil {
		t.Fatal(err)
	}
	today := civil.DateOf(time.Now())
	scheduled, _, err := s.store.CreateSync(ctx, &models.Sync{FamilyID: s.f.Family.ID, ConnectionID: conn.ID,
		Trigger: models.TriggerSchedule, ScheduledFor: &today, NotBefore: time.Now().Add(20 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if err := simplefin.EnqueueSync(ctx, s.h.Queue, scheduled, 20*time.Minute); err != nil {
		t.Fatal(err)
	}
	hurried, err := s.a.StartSync(ctx, s.f.Family.ID, conn.ID, false)
	if err != nil || hurried.Created || !hurried.Hurried || hurried.Sync.ID != scheduled.ID || hurried.Sync.NotBefore.After(time.Now()) {
		t.Fatalf("scheduled sync: %+v %v", hurried, err)
	}
	if st := s.taskState(jobs.QueueDefault, "simplefin:sync:"+scheduled.ID.String()); st != "pending" {
		t.Fatalf("scheduled sync's task %s after Sync now", st)
	}

	// With the budget used up, the new sync waits for the first free slot.
	if err := s.store.FailSync(ctx, scheduled, "test"); err != nil {
		t.Fatal(err)
	}
	s.a.DailyBudget = 2
	oldest := time.Now().Add(-time.Hour)
	key := "simplefin:budget:{" + conn.ID.String() + "}"
	s.rdb.ZAdd(ctx, key, redis.Z{Score: float64(oldest.UnixMilli()), Member: "a"}, redis.Z{Score: float64(time.Now().UnixMilli()), Member: "b"})
	t.Cleanup(func() { s.rdb.Del(context.Background(), key) })
	waits, err := s.a.StartSync(ctx, s.f.Family.ID, conn.ID, false)
	if err != nil || !waits.Created || !waits.WaitsForBudget {
		t.Fatalf("over budget: %+v %v", waits, err)
	}
	free := time.UnixMilli(oldest.UnixMilli()).Add(24 * time.Hour)
	if d := waits.Sync.NotBefore.Sub(free); d < -time.Millisecond || d > time.Millisecond {
		t.Fatalf("waits until %v, want %v", waits.Sync.NotBefore, free)
	}
	if st := s.taskState(jobs.QueueDefault, "simplefin:sync:"+waits.Sync.ID.String()); st != "scheduled" {
		t.Fatalf("deferred sync's task %s", st)
	}
}

func TestUpdateReconnects(t *testing.T) {
	s := newActions(t)
	ctx := context.Background()
	conn := s.active(t, "old")
	name, off, bad := "Checking", false, "nope"
	got, err := s.a.Update(ctx, s.f.Family.ID, conn.ID, simplefin.ConnectionChange{Name: &name, IncludePending: &off, SetLookback: true})
	if err != nil || got.Name != "Checking" || got.IncludePending || got.LookbackDays != nil || got.Status != models.ConnActive {
		t.Fatalf("settings: %+v %v", got, err)
	}
	// A bad token changes nothing, not even the settings sent with it.
	other := "Savings"
	var te *bridge.TokenError
	if _, err := s.a.Update(ctx, s.f.Family.ID, conn.ID, simplefin.ConnectionChange{Name: &other, SetupToken: &bad}); !errors.As(err, &te) {
		t.Fatalf("bad token: %v", err)
	}
	if got := reload(t, s.store, conn); got.Name != "Checking" || got.ClaimSeq != 1 {
		t.Fatalf("after a bad token: %+v", got)
	}
	token := s.fake.Token("new")
	got, err = s.a.Update(ctx, s.f.Family.ID, conn.ID, simplefin.ConnectionChange{SetupToken: &token})
	if err != nil || got.Status != models.ConnClaiming || got.ClaimSeq != 2 {
		t.Fatalf("reconnect: %+v %v", got, err)
	}
	if st := s.taskState(jobs.QueueCritical, claimID(got)); st != "pending" {
		t.Fatalf("claim task %s", st)
	}
	if _, err := s.a.Update(ctx, s.f.Family.ID, conn.ID, simplefin.ConnectionChange{SetupToken: &token}); !errors.Is(err, simplefin.ErrClaiming) ||
		!errors.Is(err, models.ErrConflict) {
		t.Fatalf("reconnect while claiming: %v", err)
	}
}

func TestRetryClaim(t *testing.T) {
	s := newActions(t)
	ctx := context.Background()
	conn := s.active(t, "retry")
	if _, err := s.a.RetryClaim(ctx, s.f.Family.ID, conn.ID); !errors.Is(err, simplefin.ErrNotRetryable) {
		t.Fatalf("active connection: %v", err)
	}
	// A claim that never reached the Bridge keeps its token and may retry.
	failed := s.connect(t, "later")
	_, c, err := s.store.BeginClaim(ctx, failed.FamilyID, failed.ID, failed.ClaimSeq)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.store.ClaimFailed(ctx, c, simplefin.MsgClaimUnreachable, true); err != nil {
		t.Fatal(err)
	}
	got, err := s.a.RetryClaim(ctx, s.f.Family.ID, failed.ID)
	if err != nil || got.Status != models.ConnClaiming || got.ClaimSeq != 2 {
		t.Fatalf("retry: %+v %v", got, err)
	}
	if st := s.taskState(jobs.QueueCritical, claimID(got)); st != "pending" {
		t.Fatalf("claim task %s", st)
	}
	if err := runClaim(t, s.h, got); err != nil || reload(t, s.store, got).Status != models.ConnActive {
		t.Fatalf("retried claim: %v", err)
	}
}

func TestDisconnect(t *testing.T) {
	s := newActions(t)
	ctx := context.Background()
	conn := s.active(t, "bye")
	start, err := s.a.StartSync(ctx, s.f.Family.ID, conn.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	key := "simplefin:budget:{" + conn.ID.String() + "}"
	s.rdb.ZAdd(ctx, key, redis.Z{Score: float64(time.Now().UnixMilli()), Member: "a"})
	got, err := s.a.Disconnect(ctx, s.f.Family.ID, conn.ID, true)
	if err != nil || got.Status != models.ConnDisconnected || got.AccessURLEnc != nil {
		t.Fatalf("disconnect: %+v %v", got, err)
	}
	if sy, _ := s.store.Sync(ctx, s.f.Family.ID, start.Sync.ID); sy.Status != models.SyncFailed {
		t.Fatalf("sync under way is %s", sy.Status)
	}
	if st := s.taskState(jobs.QueueDefault, "simplefin:sync:"+start.Sync.ID.String()); st != "gone" {
		t.Fatalf("sync task %s", st)
	}
	if n := s.rdb.Exists(ctx, key).Val(); n != 0 {
		t.Fatal("the request budget is kept")
	}
	if st := s.taskState(jobs.QueueLow, "simplefin:purge:"+conn.ID.String()); st != "pending" {
		t.Fatalf("purge task %s", st)
	}
	if _, err := s.a.Disconnect(ctx, s.f.Family.ID, conn.ID, false); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("second disconnect: %v", err)
	}
	// Without purge, nothing is queued.
	kept := s.active(t, "keep")
	if _, err := s.a.Disconnect(ctx, s.f.Family.ID, kept.ID, false); err != nil {
		t.Fatal(err)
	}
	if st := s.taskState(jobs.QueueLow, "simplefin:purge:"+kept.ID.String()); st != "gone" {
		t.Fatalf("purge task %s without purge", st)
	}
}

func TestLinkAccount(t *testing.T) {
	s := newActions(t)
	ctx := context.Background()
	conn := s.active(t, "link")
	save := func(id, currency string) *models.ProviderAccount {
		t.Helper()
		pa, _, err := s.store.SaveProviderAccount(ctx, s.f.Family.ID, conn.ID, models.RemoteAccount{RemoteID: id, Name: id, Currency: currency})
		if err != nil {
			t.Fatal(err)
		}
		return pa
	}
	first, second, euros := save("r1", "USD"), save("r2", "USD"), save("r3", "EUR")
	if _, err := s.a.LinkAccount(ctx, s.f.Family.ID, uuid.New(), first.ID, nil, nil); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("another connection's account: %v", err)
	}
	if _, err := s.a.LinkAccount(ctx, s.f.Family.ID, conn.ID, second.ID, first.AccountID, nil); !errors.Is(err, simplefin.ErrLinkedElsewhere) {
		t.Fatalf("taken ledger account: %v", err)
	}
	var inv *models.InvalidError
	if _, err := s.a.LinkAccount(ctx, s.f.Family.ID, conn.ID, euros.ID, first.AccountID, nil); !errors.As(err, &inv) {
		t.Fatalf("other currency: %v", err)
	}
	// The family's own account is free: the second feeds it from now on.
	got, err := s.a.LinkAccount(ctx, s.f.Family.ID, conn.ID, second.ID, &s.f.Account.ID, nil)
	if err != nil || got.AccountID == nil || *got.AccountID != s.f.Account.ID || !got.ImportEnabled {
		t.Fatalf("link: %+v %v", got, err)
	}
	// Switching the import off keeps the link.
	off := false
	if got, err = s.a.LinkAccount(ctx, s.f.Family.ID, conn.ID, first.ID, nil, &off); err != nil || got.ImportEnabled || *got.AccountID != *first.AccountID {
		t.Fatalf("import off: %+v %v", got, err)
	}
	for id, want := range map[uuid.UUID]struct {
		account uuid.UUID
		enabled bool
	}{first.ID: {*first.AccountID, false}, second.ID: {s.f.Account.ID, true}} {
		stored, err := s.store.ProviderAccount(ctx, s.f.Family.ID, id)
		if err != nil || stored.AccountID == nil || *stored.AccountID != want.account || stored.ImportEnabled != want.enabled {
			t.Fatalf("stored %+v %v", stored, err)
		}
	}
}
