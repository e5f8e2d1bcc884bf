package worker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// TestBalanceSurvivesWorkerKill recalculates six stale accounts through
// the sweep, and kills the worker once after the sweep queued two of them,
// once after an account's balance committed. A fresh worker finishes:
// every balance is that of the transactions, every account still there
// once, and no recalculation left in the queue.
func TestBalanceSurvivesWorkerKill(t *testing.T) {
	for _, point := range []string{jobs.HookBalanceQueued, jobs.HookBalanceSaved} {
		t.Run(point, func(t *testing.T) {
			r := newKillRig(t)
			ctx := context.Background()
			f := modelstest.NewFamily(t, r.store, "balance-kill")
			accounts := []*models.Account{f.Account}
			for i := range 5 {
				a := &models.Account{FamilyID: f.Family.ID, Name: fmt.Sprintf("Savings %d", i), AccountType: "depository", Currency: "USD"}
				if err := r.store.CreateAccount(ctx, a); err != nil {
					t.Fatal(err)
				}
				accounts = append(accounts, a)
			}
			// Written behind the store's back, so every balance is stale.
			want := map[string]money.Amount{}
			var rows []models.Transaction
			now := time.Now().UTC()
			for i, a := range accounts {
				for j := range 50 {
					amt := money.Amount((i + 1) * (j + 1) * 10000)
					rows = append(rows, models.Transaction{ID: models.NewID(), FamilyID: f.Family.ID, AccountID: a.ID, Date: "2024-03-01",
						Amount: amt, Currency: "USD", Name: fmt.Sprintf("Shop %d-%d", i, j), CreatedAt: now, UpdatedAt: now})
					want[a.ID.String()] -= amt
				}
			}
			if _, err := r.store.DB().NewInsert().Model(&rows).Exec(ctx); err != nil {
				t.Fatal(err)
			}

			k := newKiller(point, 2)
			var sweep string
			r.kill(t, r.options(r.handlers(nil, k.hook), nil), k, func() {
				sweep = r.enqueue(t, jobs.NewBalanceSweepTask())
			})

			runWorker(t, r.options(r.handlers(nil, nil), nil))
			r.waitGone(t, jobs.QueueLow, sweep)
			day := time.Now().UTC().Format("20060102")
			for _, a := range accounts {
				r.waitGone(t, jobs.QueueDefault, "account:balance:"+a.ID.String()+":sweep:"+day)
			}
			got, _, err := r.store.Accounts(ctx, f.Family.ID, models.Page{Number: 1, Size: 50})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(accounts) {
				t.Fatalf("%d accounts, want %d", len(got), len(accounts))
			}
			for _, a := range got {
				if a.Balance != want[a.ID.String()] || a.BalanceError != nil {
					t.Errorf("%s: balance %s (error %v), want %s", a.Name, a.Balance, a.BalanceError, want[a.ID.String()])
				}
			}
		})
	}
}
