package worker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/civil"
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

// TestKeptBalanceRefreshSurvivesWorkerKill: six accounts whose kept
// balances count up to two days ago, with rows since, are brought to today
// by their per-write jobs (RefreshBalance), and the worker is killed once
// two of them committed. A fresh worker finishes the rest: every balance is
// the full recalculation's (CheckBalances finds nothing) and counts up to
// today, and no job is left in the queue.
func TestKeptBalanceRefreshSurvivesWorkerKill(t *testing.T) {
	r := newKillRig(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, r.store, "refresh-kill")
	accounts := []*models.Account{f.Account}
	for i := range 5 {
		a := &models.Account{FamilyID: f.Family.ID, Name: fmt.Sprintf("Card %d", i), AccountType: "credit_card", Currency: "USD"}
		if err := r.store.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		accounts = append(accounts, a)
	}
	now := time.Now().UTC()
	if _, err := r.store.DB().NewUpdate().Model((*models.Account)(nil)).Set("balance_updated_at = ?", now.AddDate(0, 0, -2)).
		Where("family_id = ?", f.Family.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var rows []models.Transaction
	for i, a := range accounts {
		for j := range 20 {
			day := now.AddDate(0, 0, -(j % 2)) // yesterday and today: after the kept day
			rows = append(rows, models.Transaction{ID: models.NewID(), FamilyID: f.Family.ID, AccountID: a.ID, Date: civilDate(day),
				Amount: money.Amount((i + 1) * (j + 1) * 10000), Currency: "USD", Name: fmt.Sprintf("Shop %d-%d", i, j), CreatedAt: now, UpdatedAt: now})
		}
	}
	if _, err := r.store.DB().NewInsert().Model(&rows).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for _, a := range accounts { // the rows are after the kept day: nothing moved yet
		got, err := r.store.Account(ctx, f.Family.ID, a.ID)
		if err != nil || got.Balance != 0 {
			t.Fatalf("%s before the jobs: %v %v", a.Name, got.Balance, err)
		}
	}

	k := newKiller(jobs.HookBalanceSaved, 2)
	var ids []string
	r.kill(t, r.options(r.handlers(nil, k.hook), nil), k, func() {
		for _, a := range accounts {
			task, err := jobs.NewAccountBalanceTask(f.Family.ID, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.enqueue(t, task))
		}
	})
	runWorker(t, r.options(r.handlers(nil, nil), nil))
	r.waitGone(t, jobs.QueueDefault, ids...)

	drifts, err := r.store.CheckBalances(ctx, false)
	if err != nil || len(drifts) != 0 {
		t.Fatalf("after the kill: %v %+v", err, drifts)
	}
	today := civilDate(time.Now().UTC())
	for _, a := range accounts {
		got, err := r.store.Account(ctx, f.Family.ID, a.ID)
		if err != nil || got.BalanceUpdatedAt == nil || civilDate(*got.BalanceUpdatedAt) != today || got.Balance == 0 {
			t.Errorf("%s: balance %v counted up to %v (%v), want today's", a.Name, got.Balance, got.BalanceUpdatedAt, err)
		}
	}
}

func civilDate(t time.Time) civil.Date { return civil.DateOf(t) }
