package jobs_test

import (
	"context"
	"errors"
	"testing"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/modelstest"
)

func TestFamilyPurge(t *testing.T) {
	h, store, insp := newHandlers(t)
	ctx := context.Background()
	kept := modelstest.NewFamily(t, store, "kept")
	gone := modelstest.NewFamily(t, store, "gone")
	super := &models.User{FamilyID: kept.Family.ID, Email: "root-purge@example.com", Role: models.RoleSuperAdmin}
	if err := store.CreateUser(ctx, super); err != nil {
		t.Fatal(err)
	}
	if err := store.DeleteUser(ctx, models.AdminChange{ActorID: super.ID, ActorRole: models.RoleSuperAdmin, TargetID: gone.User.ID}); err != nil {
		t.Fatal(err)
	}
	// The family outlives its last user until the job runs.
	if _, err := store.Family(ctx, gone.Family.ID); err != nil {
		t.Fatalf("family deleted inside the user's transaction: %v", err)
	}
	t.Cleanup(func() {
		for _, f := range []*modelstest.FamilyFixture{kept, gone} {
			_ = insp.DeleteTask(jobs.QueueLow, "family:purge:"+f.Family.ID.String())
		}
		forgetSweeps(insp)
	})
	// A lost queue is rebuilt: the requeue finds the empty family.
	if err := h.Requeue(ctx, asynq.NewTask(jobs.TypeRequeue, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := insp.GetTaskInfo(jobs.QueueLow, "family:purge:"+gone.Family.ID.String()); err != nil {
		t.Errorf("empty family not queued for purge: %v", err)
	}
	for _, f := range []*modelstest.FamilyFixture{kept, gone, gone} {
		task, err := jobs.NewFamilyPurgeTask(f.Family.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.FamilyPurge(ctx, asynq.NewTask(task.Type(), task.Payload())); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Family(ctx, gone.Family.ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("empty family still there: %v", err)
	}
	if _, err := store.Account(ctx, gone.Family.ID, gone.Account.ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("its account is still there: %v", err)
	}
	if _, err := store.Family(ctx, kept.Family.ID); err != nil {
		t.Errorf("a family with users was purged: %v", err)
	}
}
