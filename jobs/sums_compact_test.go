package jobs_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// TestSumsCompactSweep: a family that only writes gathers a delta per
// write in its kept sums; the periodic sweep merges them into a row per
// key, and the sums still equal those of the rows. A family under the
// threshold is left alone, and a second run finds nothing to do.
func TestSumsCompactSweep(t *testing.T) {
	ctx := context.Background()
	store := modelstest.NewStore(t)
	busy := modelstest.NewFamily(t, store, "writes-only")
	quiet := modelstest.NewFamily(t, store, "few-writes")
	create := func(f *modelstest.FamilyFixture, i int) {
		t.Helper()
		tx := &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: civil.Date(fmt.Sprintf("2024-06-%02d", 1+i%3)),
			Amount: money.Amount(1000 + i), Currency: "USD", Name: "coffee"}
		if _, _, err := store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 200 { // 3 grains: 600 deltas, over the 512 a reader would leave
		create(busy, i)
	}
	for i := range 5 {
		create(quiet, i)
	}
	unmerged := func(f *modelstest.FamilyFixture) int64 {
		t.Helper()
		n, err := store.DB().NewSelect().Table("transaction_sums").Where("family_id = ?", f.Family.ID).Where("NOT merged").Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := unmerged(busy); n != 600 {
		t.Fatalf("unmerged deltas before the sweep: %d, want 600", n)
	}
	h := &jobs.Handlers{Store: store, Log: bridgetest.Logger(t)}
	for range 2 {
		if err := h.SumsCompactSweep(ctx, asynq.NewTask(jobs.TypeSumsCompactSweep, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if n := unmerged(busy); n != 0 {
		t.Fatalf("unmerged deltas after the sweep: %d", n)
	}
	if n := unmerged(quiet); n != 15 {
		t.Fatalf("a family under the threshold was compacted: %d unmerged, want 15", n)
	}
	for _, f := range []*modelstest.FamilyFixture{busy, quiet} {
		if drift, err := store.CheckTransactionSums(ctx, f.Family.ID); err != nil || len(drift) != 0 {
			t.Fatalf("sums of %s after the sweep: %v %v", f.Family.Name, drift, err)
		}
	}
}
