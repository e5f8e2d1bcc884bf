package screens_test

import (
	"net/url"
	"strings"
	"testing"

	"coffer/api/apitest"
	"coffer/models"
)

// An admin renames the household and changes its currency and number
// format on one screen; forms then read amounts in that format. A member
// cannot reach it, and a bad currency keeps what was typed.
func TestFamilySettings(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := t.Context()

	if r := b.Get("/settings/family"); r.Status != 200 || !strings.Contains(string(r.Body), `value="`+e.Alpha.Family.Name+`"`) ||
		!strings.Contains(string(r.Body), "Usual for the currency (1,234.56)") {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	r := b.Post("/settings/family", url.Values{"name": {"Die Müllers"}, "currency": {"EURO"}, "number_format": {""}})
	if r.Status != 422 || !strings.Contains(string(r.Body), "three-letter ISO code") || !strings.Contains(string(r.Body), `value="Die Müllers"`) {
		t.Fatalf("bad currency: %d %s", r.Status, r.Body)
	}
	if r := b.Post("/settings/family", url.Values{"name": {"Die Müllers"}, "currency": {"eur"}, "number_format": {"1;234"}}); r.Status != 422 {
		t.Fatalf("unknown number format: %d", r.Status)
	}
	if r := b.Post("/settings/family", url.Values{"name": {"Die Müllers"}, "currency": {"eur"}, "number_format": {""}}); r.Status != 303 {
		t.Fatalf("save: %d %s", r.Status, r.Body)
	}
	fam, err := e.Store.Family(ctx, e.Alpha.Family.ID)
	if err != nil || fam.Name != "Die Müllers" || fam.Currency != "EUR" || fam.NumberFormat != "" {
		t.Fatalf("saved: %+v %v", fam, err)
	}
	if other, _ := e.Store.Family(ctx, e.Beta.Family.ID); other.Name != e.Beta.Family.Name || other.Currency != e.Beta.Family.Currency {
		t.Fatalf("another family changed: %+v", other)
	}

	add := func(amount, name string) int {
		return b.Post("/transactions", url.Values{"account_id": {e.Alpha.Account.ID.String()}, "date": {"2026-01-05"},
			"type": {"expense"}, "amount": {amount}, "name": {name}}).Status
	}
	if s := add("12,50", "Kaffee"); s != 303 {
		t.Fatalf("12,50 with the euro's usual format: %d", s)
	}
	// A euro family that types 1,234.56 says so.
	if r := b.Post("/settings/family", url.Values{"name": {"Die Müllers"}, "currency": {"EUR"}, "number_format": {"1,234.56"}}); r.Status != 303 {
		t.Fatalf("save the format: %d", r.Status)
	}
	if s := add("12,50", "Ambiguous"); s != 422 {
		t.Fatalf("12,50 with the format 1,234.56: %d", s)
	}
	if s := add("12.50", "Coffee"); s != 303 {
		t.Fatalf("12.50 with the format 1,234.56: %d", s)
	}
	txs, _, err := e.Store.Transactions(ctx, e.Alpha.Family.ID, models.TransactionFilter{Search: "Coffee"}, models.Page{Number: 1, Size: 5})
	if err != nil || len(txs) != 1 || txs[0].Amount != 12_5000 {
		t.Fatalf("12.50 stored as %+v %v", txs, err)
	}

	member := &models.User{FamilyID: e.Alpha.Family.ID, Email: "kid@alpha.example", Role: models.RoleMember, Status: "active"}
	if err := e.Store.CreateUser(ctx, member); err != nil {
		t.Fatal(err)
	}
	apitest.SetPassword(t, e, member, "correct horse battery")
	m := e.Browser(t)
	if r := m.Login(member.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("member login: %d", r.Status)
	}
	if r := m.Get("/settings/family"); r.Status != 403 {
		t.Fatalf("a member sees the settings: %d", r.Status)
	}
	if r := m.Post("/settings/family", url.Values{"name": {"Hijacked"}, "currency": {"USD"}}); r.Status != 403 {
		t.Fatalf("a member saves the settings: %d", r.Status)
	}
}
