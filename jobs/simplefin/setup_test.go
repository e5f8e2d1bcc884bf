package simplefin_test

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/modelstest"
)

// redisDB is this package's own Redis database: `go test ./jobs/...` runs
// it beside the jobs tests, which use 12.
const redisDB = 10

// newHandlers builds SimpleFIN handlers on a throwaway store and the test
// Redis, logging through the leak guard; tests add the Bridge client and
// set the budget's Redis (the one returned) when they need them.
func newHandlers(t *testing.T) (*simplefin.Handlers, *models.Store, redis.UniversalClient) {
	t.Helper()
	store := modelstest.NewStore(t)
	_, rdb := modelstest.RedisClient(t, redisDB)
	return &simplefin.Handlers{Store: store, Queue: asynq.NewClientFromRedisClient(rdb), Log: bridgetest.Logger(t)}, store, rdb
}

// connect stores a new connection of family f with a setup token.
func connect(t *testing.T, store *models.Store, f *modelstest.FamilyFixture, token string) *models.Connection {
	t.Helper()
	c := &models.Connection{FamilyID: f.Family.ID, Name: "SimpleFIN"}
	if err := store.CreateConnection(context.Background(), c, token); err != nil {
		t.Fatal(err)
	}
	return c
}

// runClaim runs the claim of c as a direct handler call.
func runClaim(t *testing.T, h *simplefin.Handlers, c *models.Connection) error {
	t.Helper()
	return h.Claim(context.Background(), task(t, func() (*asynq.Task, error) {
		return simplefin.NewClaimTask(c.FamilyID, c.ID, c.ClaimSeq)
	}))
}

// reload reads c again from the store.
func reload(t *testing.T, store *models.Store, c *models.Connection) *models.Connection {
	t.Helper()
	got, err := store.Connection(context.Background(), c.FamilyID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// syncSetup is a family with an active connection to a fresh fake Bridge
// (claimed through the real claim job) and its initial sync row.
type syncSetup struct {
	h      *simplefin.Handlers
	store  *models.Store
	bridge *bridgetest.Server
	f      *modelstest.FamilyFixture
	conn   *models.Connection
	first  *models.Sync

	insp *asynq.Inspector // of the test Redis
}

func newSyncSetup(t *testing.T) *syncSetup {
	t.Helper()
	return newSyncSetupWith(t, bridgetest.Options{})
}

// newSyncSetupWith starts the fake with o; a clock in o.Now is shared by
// the fake, the handlers and the store, and an HTTPS fake's CA is trusted.
func newSyncSetupWith(t *testing.T, o bridgetest.Options) *syncSetup {
	t.Helper()
	h, store, rdb := newHandlers(t)
	h.Redis = rdb
	h.Options.OverlapDays = 7 // the production default
	fake := bridgetest.Start(t, o)
	if o.Now != nil {
		h.Now, store.Now = o.Now, o.Now
	}
	h.Bridge = bridge.NewClient(bridge.Options{AllowHTTP: true, AllowPrivateHosts: true, ClaimTimeout: 2 * time.Second,
		AccountsTimeout: 5 * time.Second, RetryInitial: time.Millisecond, RootCAs: fake.CertPool()})
	s := &syncSetup{h: h, store: store, bridge: fake, f: modelstest.NewFamily(t, store, "sync"),
		insp: asynq.NewInspectorFromRedisClient(rdb)}
	s.conn = connect(t, store, s.f, s.bridge.Token("c1"))
	if err := runClaim(t, h, s.conn); err != nil {
		t.Fatal(err)
	}
	s.conn = reload(t, store, s.conn)
	sy, err := store.ActiveSync(context.Background(), s.f.Family.ID, s.conn.ID)
	if err != nil || sy.Trigger != models.TriggerConnect {
		t.Fatalf("initial sync: %+v %v", sy, err)
	}
	rdb.Del(context.Background(), "simplefin:budget:{"+s.conn.ID.String()+"}")
	s.first = sy
	return s
}

// fetchInfo runs the /info read of the setup's connection.
func (s *syncSetup) fetchInfo(t *testing.T) {
	t.Helper()
	if err := s.h.FetchInfo(context.Background(), task(t, func() (*asynq.Task, error) {
		return simplefin.NewFetchInfoTask(s.f.Family.ID, s.conn.ID)
	})); err != nil {
		t.Fatal(err)
	}
}

// task builds a task as its constructor does and hands it over as a bare
// asynq.NewTask, as the server does (no options, no result writer).
func task(t *testing.T, build func() (*asynq.Task, error)) *asynq.Task {
	t.Helper()
	tk, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return asynq.NewTask(tk.Type(), tk.Payload())
}

// run runs a sync's fetch, then each of its account steps, as direct
// handler calls, and returns the sync as it ends.
func (s *syncSetup) run(t *testing.T, sy *models.Sync) (*models.Sync, error) {
	t.Helper()
	ctx := context.Background()
	err := s.h.Sync(ctx, task(t, syncTask(sy)))
	if err != nil {
		got, _ := s.store.Sync(ctx, sy.FamilyID, sy.ID)
		return got, err
	}
	got, err := s.store.Sync(ctx, sy.FamilyID, sy.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got.Children {
		if err := s.h.Import(ctx, task(t, func() (*asynq.Task, error) { return simplefin.NewImportTask(c.FamilyID, c.ID) })); err != nil {
			t.Fatalf("import %s: %v", c.ID, err)
		}
	}
	got, err = s.store.Sync(ctx, sy.FamilyID, sy.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got, nil
}

// synced serves data from the fake and runs the first sync, which must
// complete; it returns the sync as it ended.
func (s *syncSetup) synced(t *testing.T, data *bridgetest.Dataset) *models.Sync {
	t.Helper()
	s.bridge.SetDataset(data)
	got, err := s.run(t, s.first)
	if err != nil || got.Status != models.SyncCompleted {
		t.Fatalf("first sync: %v %+v", err, got)
	}
	return got
}

// newSync creates a manual sync of the setup's connection.
func (s *syncSetup) newSync(t *testing.T, full bool) *models.Sync {
	t.Helper()
	sy, created, err := s.store.CreateSync(context.Background(), &models.Sync{FamilyID: s.f.Family.ID, ConnectionID: s.conn.ID,
		Trigger: models.TriggerManual, Full: full})
	if err != nil || !created {
		t.Fatalf("new sync: created %v, %v", created, err)
	}
	return sy
}

// scheduledSyncs lists the syncs of the setup's family that the daily
// fan-out made, newest first.
func (s *syncSetup) scheduledSyncs(t *testing.T) []models.Sync {
	t.Helper()
	syncs, _, err := s.store.Syncs(context.Background(), s.f.Family.ID, models.SyncFilter{}, models.Page{Number: 1, Size: 20})
	if err != nil {
		t.Fatal(err)
	}
	var out []models.Sync
	for _, sy := range syncs {
		if sy.Trigger == models.TriggerSchedule {
			out = append(out, sy)
		}
	}
	return out
}

// imported lists the rows the syncs imported, by account and external id.
func (s *syncSetup) imported(t *testing.T) []models.Transaction {
	t.Helper()
	var out []models.Transaction
	if err := s.store.DB().NewSelect().Model(&out).Where("family_id = ?", s.f.Family.ID).
		Where("source = 'simplefin'").OrderExpr("account_id, external_id").Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out
}

// syncTask builds the fetch task of sy, for task.
func syncTask(sy *models.Sync) func() (*asynq.Task, error) {
	return func() (*asynq.Task, error) { return simplefin.NewSyncTask(sy.FamilyID, sy.ID) }
}

// schedule runs the daily fan-out once.
func schedule(t *testing.T, s *syncSetup) {
	t.Helper()
	if err := s.h.Schedule(context.Background(), asynq.NewTask(simplefin.TypeSchedule, nil)); err != nil {
		t.Fatal(err)
	}
}
