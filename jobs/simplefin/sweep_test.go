package simplefin_test

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

// sweep runs the sweeper once.
func sweep(t *testing.T, s *syncSetup) {
	t.Helper()
	if err := s.h.Sweep(context.Background(), asynq.NewTask(simplefin.TypeSweep, nil)); err != nil {
		t.Fatal(err)
	}
}

// sweepLeaves runs the sweeper once, then fails unless the task queue/id
// is in state want, and returns it.
func sweepLeaves(t *testing.T, s *syncSetup, queue, id string, want asynq.TaskState) *asynq.TaskInfo {
	t.Helper()
	sweep(t, s)
	info, err := s.insp.GetTaskInfo(queue, id)
	if err != nil {
		t.Fatalf("task %s after the sweep: %v", id, err)
	}
	if info.State != want {
		t.Fatalf("task %s after the sweep: %v, want %v", id, info.State, want)
	}
	return info
}

// TestSweep: a retryable failed claim's token is erased after a day, and a
// pending sync without a task is queued again.
func TestSweep(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	s.bridge.Set(bridgetest.Claim500)
	failed := connect(t, s.store, s.f, s.bridge.Token("sweep"))
	if err := runClaim(t, s.h, failed); err != nil {
		t.Fatal(err)
	}
	if got := reload(t, s.store, failed); got.SetupTokenEnc == nil || !got.ClaimRetryable {
		t.Fatalf("retryable failure: %+v", got)
	}
	taskID := "simplefin:sync:" + s.first.ID.String()
	_ = s.insp.DeleteTask(jobs.QueueDefault, taskID)
	s.h.Now = func() time.Time { return time.Now().Add(25 * time.Hour) }
	sweep(t, s)
	if got := reload(t, s.store, failed); got.SetupTokenEnc != nil || got.ClaimRetryable {
		t.Fatalf("token kept after a day: %+v", got)
	}
	// The first sync was due more than a day ago: it expired.
	got, _ := s.store.Sync(ctx, s.f.Family.ID, s.first.ID)
	if got.Status != models.SyncFailed || got.Error == nil || *got.Error != "expired" {
		t.Fatalf("stale sync: %s %v", got.Status, got.Error)
	}
	// A fresh pending sync without a task is queued again.
	s.h.Now = nil
	fresh := s.newSync(t, false)
	sweep(t, s)
	if _, err := s.insp.GetTaskInfo(jobs.QueueDefault, "simplefin:sync:"+fresh.ID.String()); err != nil {
		t.Fatalf("not re-queued: %v", err)
	}
	_ = s.insp.DeleteTask(jobs.QueueDefault, "simplefin:sync:"+fresh.ID.String())
}

// TestSweepReplacesArchivedTasks: a due sync, an account step and a claim
// whose tasks sit archived (retries used up) under their fixed ids get
// fresh tasks from the sweep, and the sync then completes.
func TestSweepReplacesArchivedTasks(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	s.bridge.SetDataset(bridgetest.Generate(21, 2, 20, 20, time.Now().UTC()))

	syncID := "simplefin:sync:" + s.first.ID.String()
	if err := s.insp.ArchiveTask(jobs.QueueDefault, syncID); err != nil {
		t.Fatal(err)
	}
	if info := sweepLeaves(t, s, jobs.QueueDefault, syncID, asynq.TaskStatePending); info.Retried != 0 {
		t.Fatalf("sync task after the sweep: retried %d", info.Retried)
	}

	// The fetch queues one step per account; archive one of them.
	if err := s.h.Sync(ctx, task(t, syncTask(s.first))); err != nil {
		t.Fatal(err)
	}
	_ = s.insp.DeleteTask(jobs.QueueDefault, syncID)
	parent, _ := s.store.Sync(ctx, s.f.Family.ID, s.first.ID)
	if parent.Phase != models.PhaseImport || len(parent.Children) != 2 {
		t.Fatalf("parent %s with %d steps", parent.Phase, len(parent.Children))
	}
	stepID := "simplefin:import:" + parent.Children[0].ID.String()
	if err := s.insp.ArchiveTask(jobs.QueueDefault, stepID); err != nil {
		t.Fatal(err)
	}
	sweepLeaves(t, s, jobs.QueueDefault, stepID, asynq.TaskStatePending)
	for _, c := range parent.Children {
		if err := s.h.Import(ctx, task(t, func() (*asynq.Task, error) { return simplefin.NewImportTask(c.FamilyID, c.ID) })); err != nil {
			t.Fatal(err)
		}
		_ = s.insp.DeleteTask(jobs.QueueDefault, "simplefin:import:"+c.ID.String())
	}
	if got, _ := s.store.Sync(ctx, s.f.Family.ID, s.first.ID); got.Status != models.SyncCompleted {
		t.Fatalf("sync %s after its steps ran", got.Status)
	}

	// A claim whose task was archived is queued afresh too.
	c := connect(t, s.store, s.f, s.bridge.Token("archived"))
	claim, _ := simplefin.NewClaimTask(c.FamilyID, c.ID, c.ClaimSeq)
	if _, err := s.h.Queue.Enqueue(claim); err != nil {
		t.Fatal(err)
	}
	claimID := "simplefin:claim:" + c.ID.String() + ":1"
	if err := s.insp.ArchiveTask(jobs.QueueCritical, claimID); err != nil {
		t.Fatal(err)
	}
	sweepLeaves(t, s, jobs.QueueCritical, claimID, asynq.TaskStatePending)
	_ = s.insp.DeleteTask(jobs.QueueCritical, claimID)
}

// TestSweepRunsOverdueTasks: a due sync whose task waits hours ahead runs
// now; one whose task is due with the row is left as it is.
func TestSweepRunsOverdueTasks(t *testing.T) {
	s := newSyncSetup(t)
	id := "simplefin:sync:" + s.first.ID.String()
	_ = s.insp.DeleteTask(jobs.QueueDefault, id)
	tk, _ := simplefin.NewSyncTask(s.first.FamilyID, s.first.ID)
	if _, err := s.h.Queue.Enqueue(tk, asynq.ProcessIn(5*time.Hour)); err != nil {
		t.Fatal(err)
	}
	sweepLeaves(t, s, jobs.QueueDefault, id, asynq.TaskStatePending) // overdue: runs now
	// A sync deferred to later keeps its task where it is.
	ctx := context.Background()
	sy, err := s.store.LeaseSync(ctx, s.f.Family.ID, s.first.ID, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(3 * time.Hour)
	if err := s.store.DeferSync(ctx, sy, later, "test"); err != nil {
		t.Fatal(err)
	}
	_ = s.insp.DeleteTask(jobs.QueueDefault, id)
	if _, err := s.h.Queue.Enqueue(tk, asynq.ProcessAt(later)); err != nil {
		t.Fatal(err)
	}
	sweepLeaves(t, s, jobs.QueueDefault, id, asynq.TaskStateScheduled) // deferred: stays
	_ = s.insp.DeleteTask(jobs.QueueDefault, id)
}

// TestSweepWorkerLost: a fetch whose lease ran out over 10 minutes ago is
// left running while a task will still run it, and failed "worker lost"
// once no task is left.
func TestSweepWorkerLost(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	id := "simplefin:sync:" + s.first.ID.String()
	// A worker took it and vanished: the lease ended 11 minutes ago.
	if _, err := s.store.LeaseSync(ctx, s.f.Family.ID, s.first.ID, -11*time.Minute); err != nil {
		t.Fatal(err)
	}
	sweepLeaves(t, s, jobs.QueueDefault, id, asynq.TaskStatePending)
	got, _ := s.store.Sync(ctx, s.f.Family.ID, s.first.ID)
	if got.Status != models.SyncRunning {
		t.Fatalf("with its task queued: %s %v", got.Status, got.Error)
	}
	if err := s.insp.DeleteTask(jobs.QueueDefault, id); err != nil {
		t.Fatal(err)
	}
	sweep(t, s)
	got, _ = s.store.Sync(ctx, s.f.Family.ID, s.first.ID)
	if got.Status != models.SyncFailed || got.Error == nil || *got.Error != "worker lost" {
		t.Fatalf("without a task: %s %v", got.Status, got.Error)
	}
}

// TestSweepGivesUpAfterADay: an account step whose task is archived again
// a day after it was created (its runs keep killing the worker) is failed
// instead of replaced once more, and its parent finishes, failed.
func TestSweepGivesUpAfterADay(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	s.bridge.SetDataset(bridgetest.Generate(22, 1, 5, 5, time.Now().UTC()))
	if err := s.h.Sync(ctx, task(t, syncTask(s.first))); err != nil {
		t.Fatal(err)
	}
	_ = s.insp.DeleteTask(jobs.QueueDefault, "simplefin:sync:"+s.first.ID.String())
	parent, _ := s.store.Sync(ctx, s.f.Family.ID, s.first.ID)
	if len(parent.Children) != 1 {
		t.Fatalf("%d steps", len(parent.Children))
	}
	step := parent.Children[0]
	stepID := "simplefin:import:" + step.ID.String()
	if err := s.insp.ArchiveTask(jobs.QueueDefault, stepID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.DB().NewUpdate().Table("syncs").Set("created_at = ?", time.Now().Add(-25*time.Hour)).
		Where("id = ?", step.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	sweepLeaves(t, s, jobs.QueueDefault, stepID, asynq.TaskStateArchived) // not replaced
	got, _ := s.store.Sync(ctx, s.f.Family.ID, s.first.ID)
	if got.Status != models.SyncFailed || got.Children[0].Status != models.SyncFailed {
		t.Fatalf("parent %s, step %s", got.Status, got.Children[0].Status)
	}
	_ = s.insp.DeleteTask(jobs.QueueDefault, stepID)
}
