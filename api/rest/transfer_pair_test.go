package rest_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// pairFixture stores, for family alpha, a payment out of checking and the
// card's own payment received, unpaired, and returns them with the card.
func pairFixture(t *testing.T, e *apitest.Env) (out, in *models.Transaction, card *models.Account) {
	t.Helper()
	ctx := context.Background()
	fam := e.Alpha.Family.ID
	card = &models.Account{FamilyID: fam, Name: "Card", AccountType: "credit_card", Currency: "USD"}
	if err := e.Store.CreateAccount(ctx, card); err != nil {
		t.Fatal(err)
	}
	add := func(acct uuid.UUID, date string, amount int64, name string) *models.Transaction {
		t.Helper()
		tx := &models.Transaction{FamilyID: fam, AccountID: acct, Date: civil.Date(date), Amount: money.Amount(amount), Currency: "USD", Name: name}
		row, _, err := e.Store.CreateTransaction(ctx, tx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return row
	}
	out = add(e.Alpha.Account.ID, "2026-01-02", 150_0000, "CC payment")
	in = add(card.ID, "2026-01-03", -150_0000, "Payment received")
	return out, in, card
}

func pairBody(other string) map[string]any {
	return map[string]any{"transfer": map[string]any{"other_transaction_id": other}}
}

// TestPairTransferAPI is the reference's transaction_transfers tests:
// PATCH /transactions/{id}/transfer links two stored transactions, inflow
// and outflow by sign whichever is named first, answers the transaction
// with its transfer, and refuses what the reference refuses.
func TestPairTransferAPI(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := context.Background()
	out, in, card := pairFixture(t, e)
	path := func(id uuid.UUID) string { return "/api/v1/transactions/" + id.String() + "/transfer" }

	// Errors first, while nothing is paired.
	missing := e.Do("PATCH", path(out.ID), e.Alpha.Key, map[string]any{"transfer": map[string]any{}}).WantJSON(t, 422)
	if missing["error"] != "validation_failed" || missing["message"] != "other_transaction_id is required" {
		t.Errorf("missing other_transaction_id: %v", missing)
	}
	e.Do("PATCH", path(out.ID), e.Alpha.Key, map[string]any{}).WantJSON(t, 400)
	if r := e.Do("PATCH", path(uuid.Nil), e.Alpha.Key, pairBody(in.ID.String())).WantJSON(t, 404); r["message"] != "Transaction not found" {
		t.Errorf("missing transaction: %v", r)
	}
	e.Do("PATCH", path(out.ID), e.Alpha.Key, pairBody(uuid.Nil.String())).WantJSON(t, 404)
	e.Do("PATCH", path(out.ID), e.Alpha.Key, pairBody("not-an-id")).WantJSON(t, 404)
	beta, _, err := e.Store.CreateTransaction(ctx, &models.Transaction{FamilyID: e.Beta.Family.ID, AccountID: e.Beta.Account.ID,
		Date: "2026-01-03", Amount: -150_0000, Currency: "USD", Name: "Other family"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.Do("PATCH", path(out.ID), e.Alpha.Key, pairBody(beta.ID.String())).WantJSON(t, 404)
	e.Do("PATCH", path(beta.ID), e.Alpha.Key, pairBody(in.ID.String())).WantJSON(t, 404)
	e.Do("PATCH", path(out.ID), e.Alpha.ReadKey, pairBody(in.ID.String())).WantJSON(t, 403)

	sameAcct, _, _ := e.Store.CreateTransaction(ctx, &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: e.Alpha.Account.ID,
		Date: "2026-01-03", Amount: -150_0000, Currency: "USD", Name: "Refund"}, nil)
	sameSign, _, _ := e.Store.CreateTransaction(ctx, &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: card.ID,
		Date: "2026-01-03", Amount: 150_0000, Currency: "USD", Name: "Also out"}, nil)
	otherAmount, _, _ := e.Store.CreateTransaction(ctx, &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: card.ID,
		Date: "2026-01-03", Amount: -149_0000, Currency: "USD", Name: "Not quite"}, nil)
	for name, other := range map[string]*models.Transaction{"same account": sameAcct, "same sign": sameSign, "other amount": otherAmount} {
		r := e.Do("PATCH", path(out.ID), e.Alpha.Key, pairBody(other.ID.String())).WantJSON(t, 422)
		if r["error"] != "validation_failed" || r["message"] == "" {
			t.Errorf("%s: %v", name, r)
		}
	}

	// Named from the inflow: still the card's row is the inflow.
	got := e.Do("PATCH", path(in.ID), e.Alpha.Key, pairBody(out.ID.String())).WantJSON(t, 200)
	tr, _ := got["transfer"].(map[string]any)
	if got["id"] != in.ID.String() || tr == nil || tr["id"] == nil || tr["amount"] == nil || tr["currency"] != "USD" || tr["other_account"] == nil {
		t.Fatalf("paired transaction: %v", got)
	}
	if acct, _ := tr["other_account"].(map[string]any); acct["id"] != e.Alpha.Account.ID.String() {
		t.Errorf("other account %v, want checking", tr["other_account"])
	}
	trs, n, err := e.Store.Transfers(ctx, e.Alpha.Family.ID, models.Page{Number: 1, Size: 5})
	if err != nil || n != 1 || trs[0].InflowTransactionID != in.ID || trs[0].OutflowTransactionID != out.ID {
		t.Fatalf("transfers %+v (%v)", trs, err)
	}
	shown := e.Do("GET", "/api/v1/transactions/"+out.ID.String(), e.Alpha.Key, nil).WantJSON(t, 200)
	if st, _ := shown["transfer"].(map[string]any); st == nil || st["id"] != tr["id"] {
		t.Errorf("the outflow does not show the transfer: %v", shown["transfer"])
	}

	// Already paired, either side.
	extra, _, _ := e.Store.CreateTransaction(ctx, &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: card.ID,
		Date: "2026-01-02", Amount: -150_0000, Currency: "USD", Name: "Another payment"}, nil)
	if r := e.Do("PATCH", path(out.ID), e.Alpha.Key, pairBody(extra.ID.String())).WantJSON(t, 422); r["message"] != "Transaction is already linked to a transfer" {
		t.Errorf("already paired: %v", r)
	}
	if r := e.Do("PATCH", path(extra.ID), e.Alpha.Key, pairBody(out.ID.String())).WantJSON(t, 422); r["message"] != "Other transaction is already linked to a transfer" {
		t.Errorf("other already paired: %v", r)
	}

	// Unpair (the reference's PATCH /transfers/{id} status rejected): both
	// rows stay; another status is 422; another family's transfer 404.
	trPath := "/api/v1/transfers/" + trs[0].ID.String()
	e.Do("PATCH", trPath, e.Alpha.Key, map[string]any{"transfer": map[string]any{"status": "maybe"}}).WantJSON(t, 422)
	e.Do("PATCH", trPath, e.Beta.Key, map[string]any{"transfer": map[string]any{"status": "rejected"}}).WantJSON(t, 404)
	if r := e.Do("PATCH", trPath, e.Alpha.Key, map[string]any{"transfer": map[string]any{"notes": "card"}}).WantJSON(t, 200); r["notes"] != "card" {
		t.Errorf("notes: %v", r)
	}
	if r := e.Do("PATCH", trPath, e.Alpha.Key, map[string]any{"transfer": map[string]any{"status": "rejected"}}).WantJSON(t, 200); r["message"] != "Transfer rejected" {
		t.Errorf("reject: %v", r)
	}
	for _, id := range []uuid.UUID{out.ID, in.ID} {
		if r := e.Do("GET", "/api/v1/transactions/"+id.String(), e.Alpha.Key, nil).WantJSON(t, 200); r["transfer"] != nil {
			t.Errorf("transaction %s still in a transfer", id)
		}
	}
	e.Do("GET", trPath, e.Alpha.Key, nil).WantJSON(t, 404)
}
