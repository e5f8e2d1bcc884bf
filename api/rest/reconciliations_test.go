package rest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
)

// reconcile finishes a reconciliation of alpha's checking account on day
// that includes exactly the rows ids (ticked cleared), whatever they sum to.
func reconcile(t *testing.T, e *apitest.Env, day civil.Date, ids ...uuid.UUID) {
	t.Helper()
	ctx, fam, acct, user := context.Background(), e.Alpha.Family.ID, e.Alpha.Account.ID, e.Alpha.User.ID
	if err := e.Store.SetCleared(ctx, fam, acct, nil, ids); err != nil {
		t.Fatal(err)
	}
	b, err := e.Store.ClearedBalance(ctx, fam, acct, day)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.StartReconciliation(ctx, fam, acct, user, day, b); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.FinishReconciliation(ctx, fam, acct, user); err != nil {
		t.Fatal(err)
	}
}

// wantReconciled checks a 422 that names the lock.
func wantReconciled(t *testing.T, r apitest.Response) {
	t.Helper()
	m := apitest.WantError(t, r, 422, "validation_failed")
	if errs, _ := m["errors"].([]any); len(errs) != 1 || errs[0] != "Transaction is reconciled; unlock it first" {
		t.Fatalf("errors = %v", m["errors"])
	}
}

// TestReconciledTransactionAPI: a reconciled row shows cleared and
// reconciled; PATCH, PUT and DELETE of it are 422 with the reason until
// a PATCH unlocks it (in the same body as an edit, here); cleared is
// set by PATCH; another family reaches nothing.
func TestReconciledTransactionAPI(t *testing.T) {
	e := apitest.NewEnv(t)
	_, ids := apitest.RuleFixtures(t, e)
	locked, free := ids[0].String(), ids[1].String()
	reconcile(t, e, "2024-02-29", ids[0])

	got := e.Do("GET", "/api/v1/transactions/"+locked, e.Alpha.Key, nil).WantJSON(t, 200)
	if got["cleared"] != true || got["reconciled"] != true {
		t.Fatalf("locked row: cleared %v reconciled %v", got["cleared"], got["reconciled"])
	}
	wantReconciled(t, e.Do("PATCH", "/api/v1/transactions/"+locked, e.Alpha.Key, txBody(map[string]any{"name": "Changed"})))
	wantReconciled(t, e.Do("PUT", "/api/v1/transactions/"+locked, e.Alpha.Key, txBody(map[string]any{"amount": "1.00"})))
	wantReconciled(t, e.Do("PATCH", "/api/v1/transactions/"+locked, e.Alpha.Key, txBody(map[string]any{"cleared": false})))
	wantReconciled(t, e.Do("DELETE", "/api/v1/transactions/"+locked, e.Alpha.Key, nil))
	apitest.WantError(t, e.Do("PATCH", "/api/v1/transactions/"+locked, e.Alpha.Key, txBody(map[string]any{"reconciled": true})), 422, "validation_failed")
	apitest.WantError(t, e.Do("PATCH", "/api/v1/transactions/"+locked, e.Alpha.Key, txBody(map[string]any{"cleared": "yes"})), 422, "validation_failed")
	apitest.WantError(t, e.Do("PATCH", "/api/v1/transactions/"+locked, e.Beta.Key, txBody(map[string]any{"reconciled": false})), 404, "not_found")
	if tx := apitest.Stored(t, e, ids[0]); tx.Name != "Starbucks 1" || !tx.Reconciled() {
		t.Fatalf("refused writes changed the row: %+v", tx)
	}

	// The reconciliations of the account: alpha sees one, beta gets 404.
	list := e.Do("GET", "/api/v1/accounts/"+e.Alpha.Account.ID.String()+"/reconciliations", e.Alpha.Key, nil).WantJSON(t, 200)
	recs := list["reconciliations"].([]any)
	if len(recs) != 1 {
		t.Fatalf("reconciliations = %v", list)
	}
	if r := recs[0].(map[string]any); r["status"] != "finished" || r["statement_date"] != "2024-02-29" ||
		r["user_id"] != e.Alpha.User.ID.String() || r["cleared_balance"] != r["statement_balance"] {
		t.Fatalf("reconciliation = %v", r)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/accounts/"+e.Alpha.Account.ID.String()+"/reconciliations", e.Beta.Key, nil), 404, "not_found")

	// Unlock and edit in one PATCH; then the row is free.
	after := e.Do("PATCH", "/api/v1/transactions/"+locked, e.Alpha.Key, txBody(map[string]any{"reconciled": false, "name": "Changed"})).WantJSON(t, 200)
	if after["reconciled"] != false || after["cleared"] != true || after["name"] != "Changed" {
		t.Fatalf("after unlock: %v", after)
	}
	e.Do("DELETE", "/api/v1/transactions/"+locked, e.Alpha.Key, nil).WantJSON(t, 200)

	// cleared is set by PATCH.
	if m := e.Do("PATCH", "/api/v1/transactions/"+free, e.Alpha.Key, txBody(map[string]any{"cleared": true})).WantJSON(t, 200); m["cleared"] != true || m["reconciled"] != false {
		t.Fatalf("cleared by PATCH: %v", m)
	}
}

// TestRevertRefusedForReconciledRows: an import one of whose rows is
// reconciled is not reverted (422 saying why) and keeps its rows; once
// the row is unlocked, the revert goes ahead.
func TestRevertRefusedForReconciledRows(t *testing.T) {
	e := apitest.NewEnv(t)
	a := e.Alpha
	settings := map[string]any{"type": "TransactionImport", "account_id": a.Account.ID.String(), "raw_file_content": apiCSV,
		"date_col_label": "Date", "amount_col_label": "Amount", "name_col_label": "Payee", "notes_col_label": "Memo",
		"date_format": "%d.%m.%Y", "number_format": "1.234,56", "col_sep": ";", "publish": "true"}
	id := e.Do("POST", "/api/v1/imports", a.Key, settings).WantJSON(t, 201)["data"].(map[string]any)["id"].(string)
	e.FinishImport(t, a.Family.ID.String(), id)
	txs := e.Do("GET", "/api/v1/transactions?account_id="+a.Account.ID.String(), a.Key, nil).WantJSON(t, 200)["transactions"].([]any)
	if len(txs) != 3 {
		t.Fatalf("%d imported rows", len(txs))
	}
	rent := uuid.MustParse(txs[len(txs)-1].(map[string]any)["id"].(string)) // the oldest, 2024-01-15
	reconcile(t, e, "2024-01-15", rent)

	m := apitest.WantError(t, e.Do("POST", "/api/v1/imports/"+id+"/revert", a.Key, nil), 422, "validation_failed")
	if errs := m["errors"].([]any); len(errs) != 1 || !strings.Contains(errs[0].(string), "1 of this import's transactions are reconciled") {
		t.Fatalf("errors = %v", errs)
	}
	if im := e.Do("GET", "/api/v1/imports/"+id, a.Key, nil).WantJSON(t, 200)["data"].(map[string]any); im["status"] != "complete" {
		t.Fatalf("import after the refusal: %v", im["status"])
	}
	if err := e.Store.UnlockTransaction(context.Background(), a.Family.ID, rent); err != nil {
		t.Fatal(err)
	}
	e.Do("POST", "/api/v1/imports/"+id+"/revert", a.Key, nil).WantJSON(t, 202)
	if _, err := e.Store.RevertImport(context.Background(), a.Family.ID, uuid.MustParse(id)); err != nil {
		t.Fatal(err)
	}
	if n := len(e.Do("GET", "/api/v1/transactions", a.Key, nil).WantJSON(t, 200)["transactions"].([]any)); n != 0 {
		t.Fatalf("%d transactions after the revert", n)
	}
}

// TestRevertStopsOnRowReconciledMeanwhile: a row reconciled between the
// revert's request and its job stops the job, which removes nothing and
// says why on the import.
func TestRevertStopsOnRowReconciledMeanwhile(t *testing.T) {
	e := apitest.NewEnv(t)
	a := e.Alpha
	settings := map[string]any{"type": "TransactionImport", "account_id": a.Account.ID.String(), "raw_file_content": apiCSV,
		"date_col_label": "Date", "amount_col_label": "Amount", "name_col_label": "Payee", "notes_col_label": "Memo",
		"date_format": "%d.%m.%Y", "number_format": "1.234,56", "col_sep": ";", "publish": "true"}
	id := e.Do("POST", "/api/v1/imports", a.Key, settings).WantJSON(t, 201)["data"].(map[string]any)["id"].(string)
	e.FinishImport(t, a.Family.ID.String(), id)
	e.Do("POST", "/api/v1/imports/"+id+"/revert", a.Key, nil).WantJSON(t, 202)
	txs := e.Do("GET", "/api/v1/transactions", a.Key, nil).WantJSON(t, 200)["transactions"].([]any)
	reconcile(t, e, "2024-01-31", uuid.MustParse(txs[0].(map[string]any)["id"].(string)))
	im, err := e.Store.RevertImport(context.Background(), a.Family.ID, uuid.MustParse(id))
	if err != nil {
		t.Fatal(err)
	}
	if im.Status != models.ImportRevertFailed || im.Error == nil || !strings.Contains(*im.Error, "reconciled") {
		t.Fatalf("import after the stopped revert: %s %v", im.Status, im.Error)
	}
	if n := len(e.Do("GET", "/api/v1/transactions", a.Key, nil).WantJSON(t, 200)["transactions"].([]any)); n != 3 {
		t.Fatalf("%d transactions after the stopped revert, want 3", n)
	}
}
