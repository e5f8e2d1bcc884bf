package models_test

import (
	"context"
	"testing"
	"time"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// TestExcludedSums: the kept sums of the excluded rows (grains x and y)
// follow every write that moves one, through the store and behind its
// back (a restore inserting a split parent, a transfer linked, relinked
// and unlinked by hand), with no drift from the rows after each; and the
// left-out notice counts from them what a person excluded: no transfer
// leg, no split parent, nothing on a disabled account, nothing outside
// the period, a month to date read whole when its later days are empty.
func TestExcludedSums(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "excluded")
	fam := f.Family.ID
	db := s.DB()
	other := &models.Account{FamilyID: fam, Name: "Savings", AccountType: "depository", Currency: f.Account.Currency}
	if err := s.CreateAccount(ctx, other); err != nil {
		t.Fatal(err)
	}
	june := models.Period{From: "2026-06-01", To: "2026-06-30"}
	midJune := models.Period{From: "2026-06-10", To: "2026-06-20"}
	now := time.Now().UTC().Truncate(time.Microsecond)
	row := func(acc *models.Account, date civil.Date, excluded bool, reason *string) *models.Transaction {
		tr := &models.Transaction{ID: models.NewID(), FamilyID: fam, AccountID: acc.ID, Date: date, Amount: money.Amount(12_500),
			Currency: acc.Currency, Name: "Row", Excluded: excluded, ExcludedReason: reason, CreatedAt: now, UpdatedAt: now}
		if _, err := db.NewInsert().Model(tr).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		return tr
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.NewRaw(q, args...).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string, want map[models.Period]int) {
		t.Helper()
		drift, err := s.CheckTransactionSums(ctx, fam)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range drift {
			t.Errorf("%s: %s", step, d)
		}
		for p, n := range want {
			l, err := s.LeftOutOf(ctx, fam, p)
			if err != nil {
				t.Fatal(err)
			}
			if l.Excluded != n {
				t.Errorf("%s: %v leaves out %d excluded rows, want %d", step, p, l.Excluded, n)
			}
		}
	}

	split := models.ExcludedSplit
	a := row(f.Account, "2026-06-12", true, nil)
	b := row(other, "2026-06-05", false, nil)
	parent := row(f.Account, "2026-06-15", true, &split)
	check("inserted", map[models.Period]int{june: 1, midJune: 1})

	tr := &models.Transfer{ID: models.NewID(), FamilyID: fam, InflowTransactionID: b.ID, OutflowTransactionID: a.ID,
		Status: "confirmed", CreatedAt: now, UpdatedAt: now}
	if _, err := db.NewInsert().Model(tr).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	check("an excluded row linked as a leg", map[models.Period]int{june: 0})

	b.Excluded = true
	if _, err := s.UpdateTransaction(ctx, b, []string{"excluded"}, nil); err != nil {
		t.Fatal(err)
	}
	check("the other leg excluded", map[models.Period]int{june: 0})

	c := row(f.Account, "2026-06-25", true, nil)
	exec("UPDATE transfers SET outflow_transaction_id = ? WHERE family_id = ? AND id = ?", c.ID, fam, tr.ID)
	check("the transfer relinked", map[models.Period]int{june: 1, midJune: 1})

	exec("DELETE FROM transfers WHERE family_id = ? AND id = ?", fam, tr.ID)
	check("the transfer unlinked", map[models.Period]int{june: 3, midJune: 1})

	exec("UPDATE transactions SET excluded_reason = NULL WHERE family_id = ? AND id = ?", fam, parent.ID)
	check("a split parent's reason gone", map[models.Period]int{june: 4, midJune: 2})

	exec("UPDATE transactions SET date = ?, amount = amount + 1 WHERE family_id = ? AND id = ?", civil.Date("2026-07-02"), fam, a.ID)
	check("an excluded row moved to July", map[models.Period]int{june: 3, midJune: 1, {From: "2026-07-01", To: "2026-07-31"}: 1})

	exec("UPDATE accounts SET status = ? WHERE family_id = ? AND id = ?", models.AccountDisabled, fam, other.ID)
	check("an account disabled", map[models.Period]int{june: 2})

	if _, err := s.DeleteTransaction(ctx, fam, c.ID); err != nil {
		t.Fatal(err)
	}
	exec("DELETE FROM transactions WHERE family_id = ? AND id = ?", fam, parent.ID)
	check("deleted", map[models.Period]int{june: 0, midJune: 0})
}
