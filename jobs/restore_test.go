package jobs_test

import (
	"context"
	"os"
	"testing"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/modelstest"
)

// TestRestoreRunIsIdempotent calls the job twice on a stored restore:
// one restore, marked complete.
func TestRestoreRunIsIdempotent(t *testing.T) {
	h, store, _ := newHandlers(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "restore")
	file, err := os.ReadFile("../models/importfile/testdata/sure/export.zip")
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := store.CreateRestore(ctx, f.Family.ID, nil, file)
	if err != nil {
		t.Fatal(err)
	}
	task, err := jobs.NewRestoreRunTask(f.Family.ID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := h.RestoreRun(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	got, err := store.Restore(ctx, f.Family.ID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	n, err := store.DB().NewSelect().Table("accounts").Where("family_id = ?", f.Family.ID).Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != models.ImportComplete || got.Written().Created["transactions"] != 8 || n != 3 {
		t.Fatalf("restore %+v, %d accounts (want the fixture's 1 and 2 restored)", got, n)
	}
}
