package jobs_test

import (
	"archive/zip"
	"bytes"
	"context"
	"testing"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/modelstest"
)

// TestFamilyExport: the job writes the ZIP and completes the export; run
// again it changes nothing; a lost queue is rebuilt with the exports not
// yet written; an export of another family, or none, is no work.
func TestFamilyExport(t *testing.T) {
	h, store, insp := newHandlers(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "export")
	other := modelstest.NewFamily(t, store, "export-other")
	e, err := store.CreateFamilyExport(ctx, f.Family.ID)
	if err != nil {
		t.Fatal(err)
	}
	waiting, err := store.CreateFamilyExport(ctx, other.Family.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, id := range []string{e.ID.String(), waiting.ID.String()} {
			_ = insp.DeleteTask(jobs.QueueLow, jobs.TypeFamilyExport+":"+id)
		}
		forgetSweeps(insp)
	})
	if err := h.Requeue(ctx, asynq.NewTask(jobs.TypeRequeue, nil)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{e.ID.String(), waiting.ID.String()} {
		if _, err := insp.GetTaskInfo(jobs.QueueLow, jobs.TypeFamilyExport+":"+id); err != nil {
			t.Errorf("export %s not re-queued: %v", id, err)
		}
	}

	run := func() {
		t.Helper()
		task, err := jobs.NewFamilyExportTask(f.Family.ID, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.FamilyExport(ctx, asynq.NewTask(task.Type(), task.Payload())); err != nil {
			t.Fatal(err)
		}
	}
	run()
	done, err := store.FamilyExport(ctx, f.Family.ID, e.ID)
	if err != nil || done.Status != models.ExportCompleted || done.ByteSize == 0 || done.CompletedAt == nil {
		t.Fatalf("after the job: %+v %v", done, err)
	}
	var file bytes.Buffer
	if err := store.WriteFamilyExportFile(ctx, f.Family.ID, e.ID, &file); err != nil {
		t.Fatal(err)
	}
	if z, err := zip.NewReader(bytes.NewReader(file.Bytes()), int64(file.Len())); err != nil || len(z.File) != 9 {
		t.Fatalf("the file: %v", err)
	}
	run()
	again, err := store.FamilyExport(ctx, f.Family.ID, e.ID)
	if err != nil || !again.CompletedAt.Equal(*done.CompletedAt) || again.ByteSize != done.ByteSize {
		t.Fatalf("a rerun changed the export: %+v, was %+v", again, done)
	}

	// The other family's export, named with this family: nothing to do.
	task, err := jobs.NewFamilyExportTask(f.Family.ID, waiting.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.FamilyExport(ctx, asynq.NewTask(task.Type(), task.Payload())); err != nil {
		t.Fatal(err)
	}
	if still, _ := store.FamilyExport(ctx, other.Family.ID, waiting.ID); still.Status != models.ExportPending {
		t.Fatalf("another family's export was written: %+v", still)
	}
}
