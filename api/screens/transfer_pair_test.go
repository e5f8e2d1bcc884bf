package screens_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// TestTransfersToConfirm: the transactions screen leads to the suggested
// pairs, each confirmed or turned down with its own form; a transaction's
// page pairs it with a chosen one and unpairs it; nothing of another
// family is reachable; no balance moves.
func TestTransfersToConfirm(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := context.Background()
	fam := e.Alpha.Family.ID
	card := &models.Account{FamilyID: fam, Name: "Card", AccountType: "credit_card", Currency: "USD"}
	savings := &models.Account{FamilyID: fam, Name: "Savings", AccountType: "depository", Currency: "USD"}
	for _, a := range []*models.Account{card, savings} {
		if err := e.Store.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	add := func(fam, acct uuid.UUID, date string, amount int64, name string) *models.Transaction {
		t.Helper()
		row, _, err := e.Store.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: acct, Date: civil.Date(date),
			Amount: money.Amount(amount), Currency: "USD", Name: name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return row
	}
	payOut := add(fam, e.Alpha.Account.ID, "2026-01-02", 150_0000, "CC payment")
	payIn := add(fam, card.ID, "2026-01-04", -150_0000, "Payment received")
	moveOut := add(fam, e.Alpha.Account.ID, "2026-01-10", 80_0000, "To savings")
	moveIn := add(fam, savings.ID, "2026-01-10", -80_0000, "From checking")
	balances := func() []money.Amount {
		t.Helper()
		var out []money.Amount
		for _, id := range []uuid.UUID{e.Alpha.Account.ID, card.ID, savings.ID} {
			if err := e.Store.RecalculateBalance(ctx, fam, id); err != nil {
				t.Fatal(err)
			}
			a, _ := e.Store.Account(ctx, fam, id)
			out = append(out, a.Balance)
		}
		return out
	}
	before := balances()

	if !strings.Contains(string(b.Get("/transactions").Body), `href="/transfers/suggested"`) {
		t.Fatal("the transactions screen has no link to the transfers to confirm")
	}
	page := string(b.Get("/transfers/suggested").Body)
	for _, pair := range [][2]*models.Transaction{{payOut, payIn}, {moveOut, moveIn}} {
		if !strings.Contains(page, "pair-"+pair[0].ID.String()+"-"+pair[1].ID.String()) {
			t.Fatalf("pair %s not suggested: %s", pair[0].Name, page)
		}
	}
	if !strings.Contains(page, `action="/transactions/`+payOut.ID.String()+`/transfer"`) {
		t.Fatal("no form to confirm the card payment")
	}

	// Confirm the card payment with the page's own form token.
	token := pageFormToken(t, apitest.Response{Body: []byte(page)})
	r := b.Post("/transactions/"+payOut.ID.String()+"/transfer", url.Values{"csrf_token": {token},
		"other_transaction_id": {payIn.ID.String()}, "return_to": {"/transfers/suggested"}})
	if r.Status != 303 || r.Header.Get("Location") != "/transfers/suggested" {
		t.Fatalf("confirm: %d %s", r.Status, r.Body)
	}
	// Turn the savings move down.
	r = b.Post("/transfers/suggested/reject", url.Values{"outflow_id": {moveOut.ID.String()}, "inflow_id": {moveIn.ID.String()},
		"return_to": {"/transfers/suggested"}})
	if r.Status != 303 {
		t.Fatalf("reject: %d %s", r.Status, r.Body)
	}
	page = string(b.Get("/transfers/suggested").Body)
	if strings.Contains(page, "pair-") {
		t.Fatalf("pairs still suggested after confirming and turning down: %s", page)
	}
	trs, n, err := e.Store.Transfers(ctx, fam, models.Page{Number: 1, Size: 5})
	if err != nil || n != 1 || trs[0].InflowTransactionID != payIn.ID {
		t.Fatalf("transfers after confirming: %d %v", n, err)
	}

	// The savings move, paired by hand from its page after all.
	page = string(b.Get("/transactions/" + moveIn.ID.String() + "/transfer").Body)
	if !strings.Contains(page, `<label for="other-`+moveOut.ID.String()+`">`) {
		t.Fatalf("the pair page does not offer the other side: %s", page)
	}
	if r := b.Post("/transactions/"+moveIn.ID.String()+"/transfer", url.Values{"other_transaction_id": {payOut.ID.String()}}); r.Status != 422 ||
		!strings.Contains(string(r.Body), "already linked") {
		t.Fatalf("pairing with a paired row: %d", r.Status)
	}
	if r := b.Post("/transactions/"+moveIn.ID.String()+"/transfer", url.Values{"other_transaction_id": {moveOut.ID.String()}}); r.Status != 303 {
		t.Fatalf("pair by hand: %d %s", r.Status, r.Body)
	}
	if got := balances(); !slices.Equal(got, before) {
		t.Fatalf("balances %v after pairing, %v before", got, before)
	}

	// Unpair the card payment from its page: both rows stay.
	page = string(b.Get("/transactions/" + payOut.ID.String() + "/transfer").Body)
	if !strings.Contains(page, `action="/transfers/`+trs[0].ID.String()+`/unpair"`) {
		t.Fatalf("no unpair form: %s", page)
	}
	if r := b.Post("/transfers/"+trs[0].ID.String()+"/unpair", nil); r.Status != 303 {
		t.Fatalf("unpair: %d", r.Status)
	}
	for _, id := range []uuid.UUID{payOut.ID, payIn.ID} {
		if tx, err := e.Store.Transaction(ctx, fam, id); err != nil || tx.Transfer != nil {
			t.Fatalf("after unpairing: %v %+v", err, tx)
		}
	}
	if got := balances(); !slices.Equal(got, before) {
		t.Fatalf("balances %v after unpairing, %v before", got, before)
	}

	// Another family's rows and transfers are not found.
	beta := add(e.Beta.Family.ID, e.Beta.Account.ID, "2026-01-02", -150_0000, "Beta")
	if r := b.Post("/transactions/"+payOut.ID.String()+"/transfer", url.Values{"other_transaction_id": {beta.ID.String()}}); r.Status != 422 {
		t.Fatalf("pairing with another family's row: %d", r.Status)
	}
	if r := b.Get("/transactions/" + beta.ID.String() + "/transfer"); r.Status != 404 {
		t.Fatalf("another family's pair page: %d", r.Status)
	}
	if r := b.Post("/transfers/"+trs[0].ID.String()+"/unpair", nil); r.Status != 404 {
		t.Fatalf("unpairing a gone transfer: %d", r.Status)
	}
}
