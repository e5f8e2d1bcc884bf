package rest_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/models"
	"coffer/models/civil"
)

// wantOneSyncTask fails the test unless alpha has exactly one queued
// sync task.
func wantOneSyncTask(t *testing.T, e *apitest.Env) {
	t.Helper()
	insp := asynq.NewInspectorFromRedisClient(e.RDB)
	n := 0
	for _, list := range []func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){insp.ListPendingTasks, insp.ListScheduledTasks} {
		infos, err := list(jobs.QueueDefault, asynq.PageSize(1000))
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range infos {
			var p simplefin.SyncPayload
			if info.Type == simplefin.TypeSync && json.Unmarshal(info.Payload, &p) == nil && p.FamilyID == e.Alpha.Family.ID {
				n++
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d sync tasks, want 1", n)
	}
}

// scheduledSync is a daily sync of conn still waiting for its jitter: its
// row and its task are due in delay.
func scheduledSync(t *testing.T, e *apitest.Env, conn *models.Connection, delay time.Duration) *models.Sync {
	t.Helper()
	today := civil.DateOf(time.Now())
	sy, created, err := e.Store.CreateSync(t.Context(), &models.Sync{FamilyID: e.Alpha.Family.ID, ConnectionID: conn.ID,
		Trigger: models.TriggerSchedule, ScheduledFor: &today, NotBefore: time.Now().Add(delay)})
	if err != nil || !created {
		t.Fatalf("scheduled sync: %v %v", created, err)
	}
	if err := simplefin.EnqueueSync(t.Context(), asynq.NewClientFromRedisClient(e.RDB), sy, delay); err != nil {
		t.Fatal(err)
	}
	return sy
}

// TestSyncNowTwiceWhileQueued: two clicks make one sync row and one task.
func TestSyncNowTwiceWhileQueued(t *testing.T) {
	e, bridge := apitest.BridgeEnv(t)
	conn := idleConnection(t, e, bridge)
	path := "/api/v1/provider_connections/" + conn.ID.String() + "/sync"
	r1 := e.Do("POST", path, e.Alpha.Key, nil)
	r2 := e.Do("POST", path, e.Alpha.Key, nil)
	if r1.Status != 202 || r2.Status != 200 || r1.JSON(t)["id"] != r2.JSON(t)["id"] {
		t.Fatalf("clicks: %d %s, then %d %s", r1.Status, r1.Body, r2.Status, r2.Body)
	}
	syncs, n, err := e.Store.Syncs(t.Context(), e.Alpha.Family.ID, models.SyncFilter{ConnectionID: &conn.ID, Status: models.SyncPending}, models.Page{Number: 1, Size: 10})
	if err != nil || n != 1 || syncs[0].ID.String() != r1.JSON(t)["id"] {
		t.Fatalf("%d pending syncs: %v", n, err)
	}
	wantOneSyncTask(t, e)
}

// TestSyncNowRunsAScheduledSync: Sync now on a scheduled sync still
// waiting for its jitter makes its task due at once; the same sync is
// answered and no other task is queued.
func TestSyncNowRunsAScheduledSync(t *testing.T) {
	e, bridge := apitest.BridgeEnv(t)
	conn := idleConnection(t, e, bridge)
	ctx := t.Context()
	sy := scheduledSync(t, e, conn, 20*time.Minute)
	insp := asynq.NewInspectorFromRedisClient(e.RDB)
	id := "simplefin:sync:" + sy.ID.String()
	if info, err := insp.GetTaskInfo(jobs.QueueDefault, id); err != nil || info.State != asynq.TaskStateScheduled {
		t.Fatalf("before: %v %v", info, err)
	}
	r := e.Do("POST", "/api/v1/provider_connections/"+conn.ID.String()+"/sync", e.Alpha.Key, nil)
	if r.Status != 200 || r.JSON(t)["id"] != sy.ID.String() {
		t.Fatalf("sync now: %d %s", r.Status, r.Body)
	}
	if info, err := insp.GetTaskInfo(jobs.QueueDefault, id); err != nil || info.State != asynq.TaskStatePending {
		t.Fatalf("after: %v %v", info, err)
	}
	got, err := e.Store.Sync(ctx, e.Alpha.Family.ID, sy.ID)
	if err != nil || got.NotBefore.After(time.Now()) {
		t.Fatalf("not_before %v after Sync now (%v)", got.NotBefore, err)
	}
	wantOneSyncTask(t, e)
}

// TestSyncNowScreen: the screen's Sync now is the API's: with the budget
// used up the new sync waits for the first free slot and the page says
// when; a scheduled sync still waiting for its jitter runs at once.
func TestSyncNowScreen(t *testing.T) {
	e, bridge := apitest.BridgeEnv(t)
	conn := idleConnection(t, e, bridge)
	ctx := t.Context()
	b := apitest.SignedInBrowser(t, e)
	b.Get("/settings/connections")
	path := "/settings/connections/" + conn.ID.String() + "/sync"
	insp := asynq.NewInspectorFromRedisClient(e.RDB)

	// A scheduled sync waiting for its jitter is made due now.
	sy := scheduledSync(t, e, conn, 20*time.Minute)
	if r := b.Post(path, nil); r.Status != 303 {
		t.Fatalf("sync now: %d", r.Status)
	}
	if info, err := insp.GetTaskInfo(jobs.QueueDefault, "simplefin:sync:"+sy.ID.String()); err != nil || info.State != asynq.TaskStatePending {
		t.Fatalf("scheduled sync's task after Sync now: %v %v", info, err)
	}
	if page := b.Get("/settings/connections"); !strings.Contains(string(page.Body), "A sync is already queued.") {
		t.Fatalf("page: %s", page.Body)
	}

	// With the budget used up, the new sync waits and the page says until when.
	if err := e.Store.FailSync(ctx, sy, "test"); err != nil {
		t.Fatal(err)
	}
	_ = insp.DeleteTask(jobs.QueueDefault, "simplefin:sync:"+sy.ID.String())
	oldest := time.Now().Add(-20 * time.Hour).Truncate(time.Minute)
	for i := 0; i < simplefin.DefaultDailyBudget; i++ {
		at := oldest.Add(time.Duration(i) * time.Minute)
		e.RDB.ZAdd(ctx, "simplefin:budget:{"+conn.ID.String()+"}", redis.Z{Score: float64(at.UnixMilli()), Member: i})
	}
	if r := b.Post(path, nil); r.Status != 303 {
		t.Fatalf("sync now over budget: %d", r.Status)
	}
	waiting, err := e.Store.ActiveSync(ctx, e.Alpha.Family.ID, conn.ID)
	if err != nil || waiting.Trigger != models.TriggerManual || !waiting.NotBefore.Equal(oldest.Add(24*time.Hour)) {
		t.Fatalf("waiting sync %+v %v, want not_before %v", waiting, err, oldest.Add(24*time.Hour))
	}
	want := "the sync starts at " + oldest.Add(24*time.Hour).UTC().Format("2006-01-02 15:04") + " UTC."
	if page := b.Get("/settings/connections"); !strings.Contains(string(page.Body), want) {
		t.Fatalf("page without %q: %s", want, page.Body)
	}
	wantOneSyncTask(t, e)
}
