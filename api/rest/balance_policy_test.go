package rest_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/models"
	"coffer/models/money"
)

// TestBalancePolicyEveryAPIDoor: each write of the JSON API (a transaction
// created, edited, deleted, created in bulk, a transfer made and removed,
// an account's opening balance changed, a file import published and
// reverted) hands the accounts it changed to the one balance policy,
// which queues their recalculation (never settles it in the request);
// once the queued tasks have run, the balance is right. A door that
// recomputed inline, or queued by itself, would leave the policy's count
// where it was.
func TestBalancePolicyEveryAPIDoor(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := context.Background()
	fam, key := e.Alpha.Family.ID, e.Alpha.Key
	newAccount := func() uuid.UUID {
		t.Helper()
		a := &models.Account{FamilyID: fam, Name: "Door", AccountType: "depository", Currency: "USD"}
		if err := e.Store.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	// seed writes a transaction with its balance settled: the setup of a
	// case, through the policy but queueing nothing (a queued task that a
	// test runs early would cover the case's own write, see
	// jobs.Balances.Enqueue).
	settled := jobs.SettleBalances(ctx)
	seed := func(acct uuid.UUID, amount money.Amount) string {
		t.Helper()
		tx := &models.Transaction{FamilyID: fam, AccountID: acct, Date: "2024-03-01", Amount: amount, Currency: "USD", Name: "Seed"}
		if _, _, err := e.Store.CreateTransaction(settled, tx, nil); err != nil {
			t.Fatal(err)
		}
		return tx.ID.String()
	}
	door := func(name string, accounts []uuid.UUID, write func(), want ...string) {
		t.Helper()
		q0, s0 := e.Balances.Counts()
		write()
		q1, s1 := e.Balances.Counts()
		if q1-q0 < int64(len(accounts)) || s1 != s0 {
			t.Errorf("%s: the policy queued %d and settled %d balances, want %d queued", name, q1-q0, s1-s0, len(accounts))
		}
		if n := e.RunBalanceTasks(t); n < 1 {
			t.Errorf("%s: no balance task queued", name)
		}
		for i, acct := range accounts {
			w, err := money.ParseAmount(want[i])
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Balance(t, fam, acct); got != w {
				t.Errorf("%s: balance of account %d = %s, want %s", name, i, got, want[i])
			}
		}
	}

	a := newAccount()
	door("create", []uuid.UUID{a}, func() {
		e.Do("POST", "/api/v1/transactions", key, txBody(map[string]any{"account_id": a.String(), "date": "2024-03-01",
			"amount": "10", "name": "Lunch", "nature": "expense"})).WantJSON(t, 201)
	}, "-10")

	a = newAccount()
	id := seed(a, 10*money.AmountScale)
	door("update", []uuid.UUID{a}, func() {
		e.Do("PATCH", "/api/v1/transactions/"+id, key, txBody(map[string]any{"amount": "25", "nature": "expense"})).WantJSON(t, 200)
	}, "-25")

	a, b := newAccount(), newAccount()
	id = seed(a, 10*money.AmountScale)
	door("update moving the account", []uuid.UUID{a, b}, func() {
		e.Do("PATCH", "/api/v1/transactions/"+id, key, txBody(map[string]any{"account_id": b.String()})).WantJSON(t, 200)
	}, "0", "-10")

	a = newAccount()
	id = seed(a, 10*money.AmountScale)
	door("delete", []uuid.UUID{a}, func() {
		e.Do("DELETE", "/api/v1/transactions/"+id, key, nil).WantJSON(t, 200)
	}, "0")

	a, b = newAccount(), newAccount()
	door("bulk", []uuid.UUID{a, b}, func() {
		e.Do("POST", "/api/v1/transactions/bulk", key, map[string]any{"transactions": []any{
			map[string]any{"account_id": a.String(), "date": "2024-03-01", "amount": "3", "name": "x", "nature": "expense"},
			map[string]any{"account_id": b.String(), "date": "2024-03-01", "amount": "4", "name": "y", "nature": "income"},
		}}).WantJSON(t, 200)
	}, "-3", "4")

	a, b = newAccount(), newAccount()
	door("transfer", []uuid.UUID{a, b}, func() {
		e.Do("POST", "/api/v1/transfers", key, map[string]any{"transfer": map[string]any{
			"from_account_id": a.String(), "to_account_id": b.String(), "amount": "500", "date": "2024-02-01"}}).WantJSON(t, 201)
	}, "-500", "500")

	a, b = newAccount(), newAccount()
	transfer, err := e.Store.CreateTransfer(settled, fam, models.NewTransfer{FromAccountID: a, ToAccountID: b, Amount: 7 * money.AmountScale, Date: "2024-02-01"})
	if err != nil {
		t.Fatal(err)
	}
	door("delete transfer", []uuid.UUID{a, b}, func() {
		e.Do("DELETE", "/api/v1/transfers/"+transfer.String(), key, nil).WantJSON(t, 200)
	}, "0", "0")

	a = newAccount()
	seed(a, 10*money.AmountScale)
	door("opening balance", []uuid.UUID{a}, func() {
		e.Do("PATCH", "/api/v1/accounts/"+a.String(), key, map[string]any{"account": map[string]any{"balance": "100"}}).WantJSON(t, 200)
	}, "90")

	// A file import: published through the API, run by its job; and
	// another one's revert.
	h := &jobs.Handlers{Store: e.Store, Queue: e.Opts.Queue, Log: e.Logger()}
	run := func(ctx context.Context, task *asynq.Task, err error, fn asynq.HandlerFunc) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := fn(ctx, asynq.NewTask(task.Type(), task.Payload())); err != nil {
			t.Fatal(err)
		}
	}
	publish := func(ctx context.Context, a uuid.UUID) (imp uuid.UUID) {
		t.Helper()
		im := e.Do("POST", "/api/v1/imports", key, map[string]any{"type": "TransactionImport", "account_id": a.String(),
			"raw_file_content": apiCSV, "date_col_label": "Date", "amount_col_label": "Amount", "name_col_label": "Payee",
			"date_format": "%d.%m.%Y", "number_format": "1.234,56", "col_sep": ";", "publish": "true"}).WantJSON(t, 201)["data"].(map[string]any)
		imp = uuid.MustParse(im["id"].(string))
		task, err := jobs.NewImportPublishTask(fam, imp, e.Store.Now())
		run(ctx, task, err, h.ImportPublish)
		return imp
	}
	a = newAccount()
	door("file import", []uuid.UUID{a}, func() { publish(ctx, a) }, "762.3") // -1,234.50 + 2,000.00 - 3.20, as the file's signs say
	a = newAccount()
	imp := publish(settled, a)
	door("file import revert", []uuid.UUID{a}, func() {
		e.Do("POST", "/api/v1/imports/"+imp.String()+"/revert", key, nil).WantJSON(t, 202)
		task, err := jobs.NewImportRevertTask(fam, imp, e.Store.Now())
		run(ctx, task, err, h.ImportRevert)
	}, "0")
}
