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
	"coffer/models/importfile"
	"coffer/models/modelstest"
	"coffer/models/money"
)

var sumsSeed = flag.Uint64("sums-seed", 0, "seed of TestTransactionSumsProperty (0: a new one, printed)")

// TestTransactionSumsProperty runs a seeded random sequence of every kind
// of write that moves the kept sums (creates, edits of amount, day,
// category, account and excluded, deletes, bulk creates, imports and
// their revert, splits and unsplits, transfers made, paired, unpaired and
// deleted, a category deleted, statements over many rows, compactions)
// over accounts in the family's currency and another, and after each step
// finds the kept sums equal to a fresh sum over the rows
// (CheckTransactionSums); every few steps the reports and series read
// from the sums answer exactly what they answer from the rows. Replay a
// failure with -sums-seed.
func TestTransactionSumsProperty(t *testing.T) {
	seed := *sumsSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -sums-seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x5005))

	ctx := context.Background()
	s := modelstest.NewStore(t)
	clock := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return clock }
	f := modelstest.NewFamily(t, s, "sums")
	fam := f.Family.ID
	accounts := []*models.Account{f.Account}
	for i, a := range []struct{ typ, cur string }{{"credit_card", "USD"}, {"depository", "USD"}, {"depository", "EUR"}, {"loan", "USD"}} {
		acc := &models.Account{FamilyID: fam, Name: fmt.Sprintf("Account %d", i), AccountType: a.typ, Currency: a.cur}
		if err := s.CreateAccount(ctx, acc); err != nil {
			t.Fatal(err)
		}
		accounts = append(accounts, acc)
	}
	for d := -80; d < 30; d += 7 { // rates for some of the EUR days
		if _, err := s.SetRate(ctx, fam, &models.ExchangeRate{FromCurrency: "EUR", ToCurrency: "USD",
			Date: civil.DateOf(clock.AddDate(0, 0, d)), Rate: rateOf(t, fmt.Sprintf("1.%d", 10+rng.IntN(80)))}); err != nil {
			t.Fatal(err)
		}
	}
	var cats []uuid.UUID
	for i := range 4 {
		c := &models.Category{FamilyID: fam, Name: fmt.Sprintf("Cat %d", i), Color: "#000000", Classification: "expense"}
		if err := s.CreateCategory(ctx, c); err != nil {
			t.Fatal(err)
		}
		cats = append(cats, c.ID)
	}

	day := func() civil.Date { return civil.DateOf(clock.AddDate(0, 0, rng.IntN(90)-70)) }
	account := func() *models.Account { return accounts[rng.IntN(len(accounts))] }
	amount := func() money.Amount { return money.Amount(rng.Int64N(2e7) - 1e7) }
	category := func() *uuid.UUID {
		if len(cats) == 0 || rng.IntN(4) == 0 {
			return nil
		}
		c := cats[rng.IntN(len(cats))]
		return &c
	}
	var live []uuid.UUID
	pick := func() (*models.Transaction, bool) {
		for range 5 {
			if len(live) == 0 {
				return nil, false
			}
			if tr, err := s.Transaction(ctx, fam, live[rng.IntN(len(live))]); err == nil {
				return tr, true
			}
		}
		return nil, false
	}
	row := func(a *models.Account) *models.Transaction {
		return &models.Transaction{FamilyID: fam, AccountID: a.ID, Date: day(), Amount: amount(), Currency: a.Currency, Name: "Shop", CategoryID: category()}
	}
	refused := func(err error) bool {
		var inv *models.InvalidError
		return errors.As(err, &inv) || errors.Is(err, models.ErrNotFound) || errors.Is(err, models.ErrConflict) ||
			errors.Is(err, models.ErrReconciled)
	}
	var imports []uuid.UUID

	done := map[string]int{}
	steps := 150
	if testing.Short() {
		steps = 50
	}
	for step := range steps {
		var err error
		var what string
		switch op := rng.IntN(19); op {
		case 0, 1, 2:
			what = "create"
			var tr *models.Transaction
			if tr, _, err = s.CreateTransaction(ctx, row(account()), nil); err == nil {
				live = append(live, tr.ID)
			}
		case 3:
			what = "edit amount"
			if tr, ok := pick(); ok {
				tr.Amount = amount()
				_, err = s.UpdateTransaction(ctx, tr, []string{"amount"}, nil)
			}
		case 4:
			what = "edit day"
			if tr, ok := pick(); ok {
				tr.Date = day()
				_, err = s.UpdateTransaction(ctx, tr, []string{"date"}, nil)
			}
		case 5:
			what = "edit category"
			if tr, ok := pick(); ok {
				tr.CategoryID = category()
				_, err = s.UpdateTransaction(ctx, tr, []string{"category_id"}, nil)
			}
		case 6:
			what = "edit account"
			if tr, ok := pick(); ok {
				tr.AccountID = account().ID
				_, err = s.UpdateTransaction(ctx, tr, []string{"account_id"}, nil)
			}
		case 7:
			what = "edit excluded"
			if tr, ok := pick(); ok {
				tr.Excluded = !tr.Excluded
				_, err = s.UpdateTransaction(ctx, tr, []string{"excluded"}, nil)
			}
		case 8:
			what = "delete"
			if tr, ok := pick(); ok {
				_, err = s.DeleteTransaction(ctx, fam, tr.ID)
			}
		case 9:
			n := 2 + rng.IntN(80)
			what = "bulk create"
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
		case 10:
			what = "import"
			file := "date,name,amount\n"
			for i := range 1 + rng.IntN(20) {
				d := day().Time()
				file += fmt.Sprintf("%02d/%02d/%d,SHOP %d %d,%d.%02d\n", d.Month(), d.Day(), d.Year(), step, i, rng.IntN(400)-200, rng.IntN(100))
			}
			p, perr := importfile.Parse([]byte(file), importfile.CSV, csvSettings(nil))
			if perr != nil {
				t.Fatal(perr)
			}
			im := &models.Import{FamilyID: fam, AccountID: accounts[rng.IntN(2)].ID, Type: importfile.CSV, RawFile: file, Settings: csvSettings(nil)}
			if err = s.CreateImport(ctx, im, p); err == nil {
				runImport(t, s, im)
				imports = append(imports, im.ID)
			}
		case 11:
			what = "revert import"
			if len(imports) > 0 {
				_, err = s.RevertImport(ctx, fam, imports[rng.IntN(len(imports))])
			}
		case 12:
			what = "split"
			if tr, ok := pick(); ok {
				first := money.Amount(rng.Int64N(1e6))
				_, err = s.SplitTransaction(ctx, fam, tr.ID, []models.SplitPart{
					{Name: "a", Amount: first, CategoryID: category()}, {Name: "b", Amount: tr.Amount - first, Excluded: rng.IntN(3) == 0}})
			}
		case 13:
			what = "unsplit"
			if tr, ok := pick(); ok {
				_, err = s.Unsplit(ctx, fam, tr.ID)
			}
		case 14:
			what = "transfer"
			from, to := account(), account()
			if from.ID != to.ID {
				var id uuid.UUID
				id, err = s.CreateTransfer(ctx, fam, models.NewTransfer{FromAccountID: from.ID, ToAccountID: to.ID,
					Amount: money.Amount(1 + rng.Int64N(1e7)), Date: day()})
				if err == nil && rng.IntN(3) == 0 {
					what = "transfer deleted"
					_, err = s.DeleteTransfer(ctx, fam, id)
				}
			}
		case 15:
			what = "pair and unpair"
			a, aok := pick()
			b, bok := pick()
			if aok && bok && a.ID != b.ID {
				var id uuid.UUID
				if id, err = s.PairTransfer(ctx, fam, a.ID, b.ID); err == nil && rng.IntN(2) == 0 {
					err = s.UnpairTransfer(ctx, fam, id)
				}
			}
		case 16:
			what = "statement over many rows"
			_, err = s.DB().NewUpdate().Model((*models.Transaction)(nil)).
				Set("amount = amount + 7").Set("date = CASE WHEN amount % 2 = 0 THEN date ELSE ? END", day()).
				Where("family_id = ?", fam).Where("split_parent_id IS NULL").Where("amount % 3 = 0").Exec(ctx)
		case 17:
			what = "compact"
			if rng.IntN(2) == 0 {
				err = s.CompactTransactionSums(ctx, fam)
			} else {
				what = "compact a batch"
				_, err = s.CompactSumsBatch(ctx, fam, 1+rng.IntN(20))
			}
		case 18:
			what = "delete category"
			if len(cats) > 1 && rng.IntN(3) == 0 {
				i := rng.IntN(len(cats))
				err = s.DeleteCategory(ctx, fam, cats[i])
				cats = append(cats[:i], cats[i+1:]...)
			}
		}
		if err != nil && !refused(err) {
			t.Fatalf("step %d (%s): %v", step, what, err)
		}
		if err == nil {
			done[what]++
		}
		drift, err := s.CheckTransactionSums(ctx, fam)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range drift {
			t.Errorf("step %d (%s): %s", step, what, d)
		}
		if len(drift) > 0 {
			t.FailNow()
		}
		if step%10 == 9 || step == steps-1 {
			compareSumsReads(t, s, fam, accounts, clock, rng)
		}
	}
	t.Logf("writes done: %v", done)
}

// compareSumsReads checks the reads from the sums against the reads from
// the rows over a few periods: whole months, a part of one, across months.
func compareSumsReads(t *testing.T, s *models.Store, fam uuid.UUID, accounts []*models.Account, clock time.Time, rng *rand.Rand) {
	t.Helper()
	ids := make([]uuid.UUID, len(accounts))
	for i, a := range accounts {
		ids[i] = a.ID
	}
	today := civil.DateOf(clock)
	periods := []models.Period{
		models.MonthPeriod(today),
		{From: civil.DateOf(clock.AddDate(0, -3, 0)), To: today},
		{From: "2025-12-01", To: "2026-02-28"},
	}
	lo := clock.AddDate(0, 0, -75+rng.IntN(40))
	periods = append(periods, models.Period{From: civil.DateOf(lo), To: civil.DateOf(lo.AddDate(0, 0, rng.IntN(70)))})
	for _, p := range periods {
		diffs, err := s.SumsReadsDiffer(context.Background(), fam, p, ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range diffs {
			t.Error(d)
		}
		if len(diffs) > 0 {
			t.FailNow()
		}
	}
}

// TestRebuildTransactionSums: sums written wrong behind the triggers'
// back are reported by the check and put right by the rebuild.
func TestRebuildTransactionSums(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "rebuild")
	fam := f.Family.ID
	for i := range 5 {
		tr := &models.Transaction{FamilyID: fam, AccountID: f.Account.ID, Date: civil.Date(fmt.Sprintf("2026-01-%02d", 1+i)),
			Amount: money.Amount(10000 * (i + 1)), Currency: f.Account.Currency, Name: "x"}
		if _, _, err := s.CreateTransaction(ctx, tr, nil); err != nil {
			t.Fatal(err)
		}
	}
	if drift, err := s.CheckTransactionSums(ctx, fam); err != nil || len(drift) != 0 {
		t.Fatalf("fresh: %v %v", drift, err)
	}
	if _, err := s.DB().ExecContext(ctx, `UPDATE transaction_sums SET amount = amount + 1 WHERE family_id = ? AND grain = 'd' AND day = '2026-01-02'`, fam); err != nil {
		t.Fatal(err)
	}
	drift, err := s.CheckTransactionSums(ctx, fam)
	if err != nil || len(drift) != 1 || drift[0].Kept != 20001 || drift[0].Fresh != 20000 {
		t.Fatalf("after a wrong write: %v %v, want the day's key, kept 20001, rows 20000", drift, err)
	}
	if err := s.RebuildTransactionSums(ctx, fam); err != nil {
		t.Fatal(err)
	}
	if drift, err := s.CheckTransactionSums(ctx, fam); err != nil || len(drift) != 0 {
		t.Fatalf("after the rebuild: %v %v", drift, err)
	}
}

// TestTransactionSumsGoWithFamily: a family's deletion takes its sums,
// which have no foreign key, and leaves another family's.
func TestTransactionSumsGoWithFamily(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	a, b := modelstest.NewFamily(t, s, "gone"), modelstest.NewFamily(t, s, "kept")
	for _, f := range []*modelstest.FamilyFixture{a, b} {
		other := &models.Account{FamilyID: f.Family.ID, Name: "Savings", AccountType: "depository", Currency: f.Account.Currency}
		if err := s.CreateAccount(ctx, other); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: "2026-01-05",
			Amount: 12500, Currency: f.Account.Currency, Name: "x"}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateTransfer(ctx, f.Family.ID, models.NewTransfer{FromAccountID: f.Account.ID, ToAccountID: other.ID,
			Amount: 5000, Date: "2026-01-06"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DB().ExecContext(ctx, `DELETE FROM families WHERE id = ?`, a.Family.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f    *modelstest.FamilyFixture
		some bool
	}{{a, false}, {b, true}} {
		n, err := s.DB().NewSelect().Table("transaction_sums").Where("family_id = ?", c.f.Family.ID).Count(ctx)
		if err != nil || (n > 0) != c.some {
			t.Errorf("family %s: %d sums rows (%v), want some: %v", c.f.Family.Name, n, err, c.some)
		}
	}
	if drift, err := s.CheckTransactionSums(ctx, b.Family.ID); err != nil || len(drift) != 0 {
		t.Errorf("the other family: %v %v", drift, err)
	}
}
