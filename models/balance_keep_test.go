package models_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

var balanceSeed = flag.Uint64("balance-seed", 0, "seed of TestKeptBalancesProperty (0: a new one, printed)")

// TestKeptBalancesProperty runs a seeded random sequence of every kind of
// write that moves a balance (creates, edits of amount, day, account and
// excluded, deletes, bulk creates through COPY or INSERT, splits and
// unsplits, transfers, valuations, statements over many rows, a day
// passing) over accounts of each kind, and after each step finds every
// kept balance and adjustment equal to the full walk's (CheckBalance).
// Replay a failure with -balance-seed.
func TestKeptBalancesProperty(t *testing.T) {
	seed := *balanceSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -balance-seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))

	ctx := context.Background()
	s := modelstest.NewStore(t)
	clock := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return clock }
	f := modelstest.NewFamily(t, s, "kept")
	fam := f.Family.ID
	accounts := []*models.Account{f.Account}
	for i, typ := range []string{"credit_card", "loan", "property", "depository"} {
		a := &models.Account{FamilyID: fam, Name: fmt.Sprintf("Account %d", i), AccountType: typ, Currency: "USD",
			OpeningBalance: money.Amount(rng.Int64N(1e9))}
		if i == 3 {
			d := civil.Date("2026-02-01")
			a.OpeningDate = &d // dated: the history before it is counted back
		}
		if err := s.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		accounts = append(accounts, a)
	}

	day := func() civil.Date { // 60 days around today, some in the future
		return civil.DateOf(clock.AddDate(0, 0, rng.IntN(60)-45))
	}
	account := func() *models.Account { return accounts[rng.IntN(len(accounts))] }
	amount := func() money.Amount { return money.Amount(rng.Int64N(2e7) - 1e7) }
	var live []uuid.UUID // transactions that may still exist
	pick := func() (*models.Transaction, bool) {
		for range 5 {
			if len(live) == 0 {
				return nil, false
			}
			id := live[rng.IntN(len(live))]
			tr, err := s.Transaction(ctx, fam, id)
			if err == nil {
				return tr, true
			}
		}
		return nil, false
	}
	row := func(a *models.Account) *models.Transaction {
		return &models.Transaction{FamilyID: fam, AccountID: a.ID, Date: day(), Amount: amount(), Currency: a.Currency, Name: "Shop"}
	}
	// refused is a write the model turned down: fine, the balance must
	// still be right.
	refused := func(err error) bool {
		var inv *models.InvalidError
		return errors.As(err, &inv) || errors.Is(err, models.ErrNotFound) || errors.Is(err, models.ErrConflict) ||
			errors.Is(err, models.ErrReconciled)
	}

	done := map[string]int{} // writes that went through, by kind
	steps := 120
	if testing.Short() {
		steps = 40
	}
	for step := range steps {
		op := rng.IntN(14)
		var err error
		var what string
		switch op {
		case 0, 1:
			what = "create"
			var tr *models.Transaction
			tr, _, err = s.CreateTransaction(ctx, row(account()), nil)
			if err == nil {
				live = append(live, tr.ID)
			}
		case 2:
			what = "edit amount"
			if tr, ok := pick(); ok {
				tr.Amount = amount()
				_, err = s.UpdateTransaction(ctx, tr, []string{"amount"}, nil)
			}
		case 3:
			what = "edit day"
			if tr, ok := pick(); ok {
				tr.Date = day()
				_, err = s.UpdateTransaction(ctx, tr, []string{"date"}, nil)
			}
		case 4:
			what = "edit account"
			if tr, ok := pick(); ok {
				tr.AccountID = account().ID
				_, err = s.UpdateTransaction(ctx, tr, []string{"account_id"}, nil)
			}
		case 5:
			what = "edit excluded"
			if tr, ok := pick(); ok {
				tr.Excluded = !tr.Excluded
				_, err = s.UpdateTransaction(ctx, tr, []string{"excluded"}, nil)
			}
		case 6:
			what = "delete"
			if tr, ok := pick(); ok {
				_, err = s.DeleteTransaction(ctx, fam, tr.ID)
			}
		case 7:
			n := 2 + rng.IntN(80) // from 50 rows, COPY on PostgreSQL
			what = fmt.Sprintf("bulk create %d", n)
			rows := make([]*models.NewTransaction, n)
			for i := range rows {
				key := fmt.Sprintf("bulk-%d-%d", step, i)
				r := row(account())
				r.ExternalID = &key
				rows[i] = &models.NewTransaction{Row: r}
			}
			_, err = s.IngestTransactions(ctx, fam, rows)
			for _, r := range rows {
				if r.Status == models.IngestCreated {
					live = append(live, r.Row.ID)
				}
			}
		case 8:
			what = "split"
			if tr, ok := pick(); ok {
				first := money.Amount(rng.Int64N(1e6))
				_, err = s.SplitTransaction(ctx, fam, tr.ID, []models.SplitPart{
					{Name: "a", Amount: first}, {Name: "b", Amount: tr.Amount - first, Excluded: rng.IntN(3) == 0}})
			}
		case 9:
			what = "unsplit"
			if tr, ok := pick(); ok {
				_, err = s.Unsplit(ctx, fam, tr.ID)
			}
		case 10:
			what = "transfer"
			from, to := account(), account()
			if from.ID != to.ID {
				var id uuid.UUID
				id, err = s.CreateTransfer(ctx, fam, models.NewTransfer{FromAccountID: from.ID, ToAccountID: to.ID,
					Amount: money.Amount(1 + rng.Int64N(1e7)), Date: day()})
				if err == nil && rng.IntN(3) == 0 {
					what = "transfer and delete it"
					_, err = s.DeleteTransfer(ctx, fam, id)
				}
			}
		case 11:
			a := account()
			vs, lerr := s.AccountValuations(ctx, fam, a.ID)
			if lerr != nil {
				t.Fatal(lerr)
			}
			v := vs[rng.IntN(len(vs))]
			switch {
			case rng.IntN(2) == 0 || len(vs) == 1:
				what = "create valuation"
				d := day()
				_, err = s.CreateValuation(ctx, &models.Valuation{FamilyID: fam, AccountID: a.ID, Date: &d, Amount: amount(), Kind: models.ValuationManual})
			case v.Kind == models.ValuationOpening:
				what = "edit opening"
				v.Amount = amount()
				err = s.UpdateValuation(ctx, &v)
			default:
				what = "delete valuation"
				err = s.DeleteValuation(ctx, fam, v.ID)
			}
		case 12:
			// A statement over rows of many accounts, as a rule or a
			// family-wide edit would write: one statement trigger.
			what = "statement over many rows"
			_, err = s.DB().NewUpdate().Model((*models.Transaction)(nil)).
				Set("amount = amount + 7").Set("date = CASE WHEN amount % 2 = 0 THEN date ELSE ? END", day()).
				Where("family_id = ?", fam).Where("split_parent_id IS NULL").Where("amount % 3 = 0").Exec(ctx)
		case 13:
			what = "a day passes"
			clock = clock.Add(time.Duration(6+rng.IntN(40)) * time.Hour)
			for _, a := range accounts {
				if _, err = s.RefreshBalance(ctx, fam, a.ID); err != nil {
					break
				}
			}
		}
		if err != nil && !refused(err) {
			t.Fatalf("step %d (%s): %v", step, what, err)
		}
		if err == nil && what != "" {
			done[what]++
		}
		for _, a := range accounts {
			drifts, err := s.CheckBalance(ctx, fam, a.ID, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range drifts {
				t.Errorf("step %d (%s): %s %s on %q: kept %d, walk %d (overflow %v/%v)", step, what, a.AccountType, d.What, d.Day,
					d.Stored, d.Computed, d.StoredOverflow, d.ComputedOverflow)
			}
			if len(drifts) > 0 {
				t.FailNow()
			}
		}
	}
	t.Logf("writes done: %v", done)
}

// TestCheckBalanceRepairs: a kept balance, cash balance and adjustment
// written wrong behind the store's back are each reported with their day,
// the stored and the computed figure; with fix they are rewritten from the
// full walk, and a second check finds nothing.
func TestCheckBalanceRepairs(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "check")
	fam, id := f.Family.ID, f.Account.ID
	for _, d := range []civil.Date{"2024-01-05", "2024-02-05"} {
		if _, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: id, Date: d, Amount: 10000, Currency: "USD", Name: "x"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	vd := civil.Date("2024-02-01")
	if _, err := s.CreateValuation(ctx, &models.Valuation{FamilyID: fam, AccountID: id, Date: &vd, Amount: 500000, Kind: models.ValuationManual}); err != nil {
		t.Fatal(err)
	}
	if drifts, err := s.CheckBalance(ctx, fam, id, false); err != nil || len(drifts) != 0 {
		t.Fatalf("before: %v %+v", err, drifts)
	}
	db := s.DB()
	if _, err := db.NewRaw("UPDATE accounts SET balance = balance + 1 WHERE id = ?", id).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.NewRaw("UPDATE valuations SET adjustment = adjustment + 5 WHERE account_id = ? AND date = ?", id, vd).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	drifts, err := s.CheckBalance(ctx, fam, id, true)
	if err != nil {
		t.Fatal(err)
	}
	today := civil.DateOf(time.Now())
	want := []models.BalanceDrift{
		{FamilyID: fam, AccountID: id, What: "balance", Day: today, Stored: 500000 - 10000 + 1, Computed: 500000 - 10000},
		{FamilyID: fam, AccountID: id, What: "adjustment", Day: vd, Stored: 500000 + 10000 + 5, Computed: 500000 + 10000},
	}
	if fmt.Sprint(drifts) != fmt.Sprint(want) {
		t.Fatalf("drifts\n%+v\nwant\n%+v", drifts, want)
	}
	all, err := s.CheckBalances(ctx, false)
	if err != nil || len(all) != 0 {
		t.Fatalf("after the fix: %v %+v", err, all)
	}
}
