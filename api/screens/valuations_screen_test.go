package screens_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// TestUpdateValueScreen: "Update value" on the account page sets the
// balance at the end of a day, read in the family's number format; the
// register shows the row with its adjustment; the row edits and deletes;
// the opening balance's date is set on the account form; nothing of
// another family is reachable.
func TestUpdateValueScreen(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := context.Background()
	fam := e.Alpha.Family.ID
	acct := e.Alpha.Account
	f, err := e.Store.Family(ctx, fam)
	if err != nil {
		t.Fatal(err)
	}
	f.NumberFormat = "1.234,56"
	if err := e.Store.UpdateFamily(ctx, f); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		date   string
		amount int64
	}{{"2026-01-05", 100_0000}, {"2026-01-20", 50_0000}, {"2026-02-03", 25_0000}} {
		tx := &models.Transaction{FamilyID: fam, AccountID: acct.ID, Date: civil.Date(r.date), Amount: money.Amount(r.amount), Currency: "USD", Name: "Shop"}
		if _, _, err := e.Store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
	}
	path := "/accounts/" + acct.ID.String()
	page := string(b.Get(path).Body)
	for _, want := range []string{`action="` + path + `/valuations"`, `<label for="value-date">`, `<label for="value-amount">`, `<label for="value-notes">`} {
		if !strings.Contains(page, want) {
			t.Fatalf("account page lacks %s", want)
		}
	}
	// A value that could mean two things is refused beside its field, kept as typed.
	r := b.Post(path+"/valuations", url.Values{"csrf_token": {pageFormToken(t, apitest.Response{Body: []byte(page)})}, "date": {"2026-01-31"}, "amount": {"1,234.5"}})
	if r.Status != 422 || !strings.Contains(string(r.Body), `value="1,234.5"`) || !strings.Contains(string(r.Body), `aria-invalid="true"`) {
		t.Fatalf("ambiguous amount: %d %.500s", r.Status, r.Body)
	}
	r = b.Post(path+"/valuations", url.Values{"csrf_token": {pageFormToken(t, r)}, "date": {"2026-01-31"}, "amount": {"1.234,50"}, "notes": {"Statement"}})
	if r.Status != 303 {
		t.Fatalf("update value: %d %.500s", r.Status, r.Body)
	}
	if got := e.Balance(t, fam, acct.ID); got != money.Amount(1209_5000) {
		t.Errorf("balance %v after the value was set, want 1209.50 (1234.50 less the 25.00 after it)", got)
	}
	vs, _, err := e.Store.Valuations(ctx, fam, models.ValuationFilter{AccountID: &acct.ID}, models.Page{Number: 1, Size: 10})
	if err != nil || len(vs) != 2 || vs[0].Amount != money.Amount(1234_5000) || vs[0].Adjustment != money.Amount(1384_5000) {
		t.Fatalf("valuations %+v %v", vs, err)
	}
	page = string(b.Get(path).Body)
	if !strings.Contains(page, "Balance set to") || !strings.Contains(page, `href="/valuations/`+vs[0].ID.String()+`/edit"`) ||
		!strings.Contains(page, "Balance adjustment") {
		t.Fatalf("register lacks the valuation row: %.2000s", page)
	}

	// Edit it, then delete it.
	edit := b.Get("/valuations/" + vs[0].ID.String() + "/edit")
	if edit.Status != 200 || !strings.Contains(string(edit.Body), `value="1234,50"`) {
		t.Fatalf("edit: %d %.800s", edit.Status, edit.Body)
	}
	r = b.Post("/valuations/"+vs[0].ID.String(), url.Values{"csrf_token": {pageFormToken(t, edit)}, "date": {"2026-02-01"}, "amount": {"-10,00"}})
	if r.Status != 303 {
		t.Fatalf("save: %d %.500s", r.Status, r.Body)
	}
	if got := e.Balance(t, fam, acct.ID); got != money.Amount(-35_0000) {
		t.Errorf("balance %v after the edit, want -35", got)
	}
	edit = b.Get("/valuations/" + vs[0].ID.String() + "/edit")
	if r := b.Post("/valuations/"+vs[0].ID.String()+"/delete", url.Values{"csrf_token": {pageFormToken(t, edit)}}); r.Status != 303 {
		t.Fatalf("delete: %d", r.Status)
	}
	if got := e.Balance(t, fam, acct.ID); got != money.Amount(-175_0000) {
		t.Errorf("balance %v after the delete, want -175", got)
	}

	// The opening balance's date on the account form.
	form := b.Get(path + "/edit")
	if !strings.Contains(string(form.Body), `<label for="opening_balance_date">`) {
		t.Fatal("account form has no opening balance date")
	}

	// Another family's account and valuation.
	other := &models.Valuation{FamilyID: e.Beta.Family.ID, AccountID: e.Beta.Account.ID}
	d := civil.Date("2026-01-31")
	other.Date, other.Amount = &d, 1
	if _, err := e.Store.CreateValuation(ctx, other); err != nil {
		t.Fatal(err)
	}
	page = string(b.Get(path).Body)
	if r := b.Post("/accounts/"+e.Beta.Account.ID.String()+"/valuations", url.Values{"csrf_token": {pageFormToken(t, apitest.Response{Body: []byte(page)})}, "date": {"2026-01-31"}, "amount": {"5"}}); r.Status != 404 {
		t.Errorf("another family's account: %d", r.Status)
	}
	if r := b.Get("/valuations/" + other.ID.String() + "/edit"); r.Status != 404 {
		t.Errorf("another family's valuation: %d", r.Status)
	}
}

// TestOFXLedgerBalanceOffered: a published OFX import offers the
// statement's ledger balance as the account's balance on its day, and the
// offer's button sets it.
func TestOFXLedgerBalanceOffered(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ofx := "OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\nSECURITY:NONE\r\nENCODING:USASCII\r\nCHARSET:1252\r\nCOMPRESSION:NONE\r\nOLDFILEUID:NONE\r\nNEWFILEUID:NONE\r\n\r\n" +
		"<OFX><SIGNONMSGSRSV1><SONRS><STATUS><CODE>0<SEVERITY>INFO</STATUS><DTSERVER>20260131<LANGUAGE>ENG</SONRS></SIGNONMSGSRSV1>" +
		"<BANKMSGSRSV1><STMTTRNRS><TRNUID>1<STATUS><CODE>0<SEVERITY>INFO</STATUS><STMTRS><CURDEF>USD<BANKACCTFROM><BANKID>1<ACCTID>2<ACCTTYPE>CHECKING</BANKACCTFROM>" +
		"<BANKTRANLIST><DTSTART>20260101<DTEND>20260131" +
		"<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260110<TRNAMT>-25.00<FITID>A1<NAME>Shop</STMTTRN>" +
		"<STMTTRN><TRNTYPE>CREDIT<DTPOSTED>20260115<TRNAMT>100.00<FITID>A2<NAME>Pay</STMTTRN>" +
		"</BANKTRANLIST><LEDGERBAL><BALAMT>1234.56<DTASOF>20260131</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n"
	created := e.Do("POST", "/api/v1/imports", e.Alpha.Key, map[string]any{"account_id": e.Alpha.Account.ID.String(),
		"type": "OfxImport", "raw_file_content": ofx, "publish": "true"}).WantJSON(t, 201)
	data, _ := created["data"].(map[string]any)
	id, _ := data["id"].(string)
	e.FinishImport(t, e.Alpha.Family.ID.String(), id)
	page := b.Get("/imports/" + id)
	if !strings.Contains(string(page.Body), "Set balance on 2026-01-31 to $1,234.56") || !strings.Contains(string(page.Body), "the ledger makes it $75.00") {
		t.Fatalf("no offer of the ledger balance: %.3000s", page.Body)
	}
	r := b.Post("/accounts/"+e.Alpha.Account.ID.String()+"/valuations", url.Values{"csrf_token": {pageFormToken(t, page)},
		"date": {"2026-01-31"}, "amount": {"1234.56"}, "notes": {"Statement balance"}})
	if r.Status != 303 {
		t.Fatalf("set: %d %.500s", r.Status, r.Body)
	}
	if got, err := e.Store.BalanceOn(context.Background(), e.Alpha.Family.ID, e.Alpha.Account.ID, "2026-01-31"); err != nil || got != money.Amount(1234_5600) {
		t.Errorf("balance on the statement's day %v %v", got, err)
	}
}
