package rest_test

import (
	"strings"
	"testing"

	"coffer/api/apitest"
	"coffer/models"
)

// TestEveryEndpointRefusesBadInput sends each route the inputs every route
// must refuse cleanly, and checks the status and the ErrorResponse shape
// (do also checks every answer against the OpenAPI document).
func TestEveryEndpointRefusesBadInput(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := t.Context()
	// One record of each kind in beta's family: alpha's key must not see them.
	cat := &models.Category{FamilyID: e.Beta.Family.ID, Name: "c", Color: "#000000", Icon: "x", Classification: "expense"}
	tag := &models.Tag{FamilyID: e.Beta.Family.ID, Name: "t", Color: "#000000"}
	mer := &models.Merchant{FamilyID: e.Beta.Family.ID, Name: "m"}
	chat := &models.Chat{FamilyID: e.Beta.Family.ID, UserID: e.Beta.User.ID, Title: "c"}
	tx := &models.Transaction{FamilyID: e.Beta.Family.ID, AccountID: e.Beta.Account.ID, Date: "2024-01-01", Amount: 1, Currency: "USD", Name: "t"}
	for _, err := range []error{e.Store.CreateCategory(ctx, cat), e.Store.CreateTag(ctx, tag), e.Store.CreateMerchant(ctx, mer)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Store.CreateChat(ctx, chat, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Store.CreateTransaction(ctx, tx, nil); err != nil {
		t.Fatal(err)
	}
	sav := &models.Account{FamilyID: e.Beta.Family.ID, Name: "Savings", AccountType: "depository", Currency: "USD"}
	if err := e.Store.CreateAccount(ctx, sav); err != nil {
		t.Fatal(err)
	}
	transfer, err := e.Store.CreateTransfer(ctx, e.Beta.Family.ID, models.NewTransfer{FromAccountID: e.Beta.Account.ID,
		ToAccountID: sav.ID, Amount: 10000, Date: "2024-01-01"})
	if err != nil {
		t.Fatal(err)
	}

	conn := &models.Connection{FamilyID: e.Beta.Family.ID, Name: "bridge"}
	if err := e.Store.CreateConnection(ctx, conn, "aHR0cHM6Ly9icmlkZ2UuZXhhbXBsZS9jbGFpbS94"); err != nil {
		t.Fatal(err)
	}

	foreign := map[string]string{
		"provider_connections": conn.ID.String(),
		"transactions":         tx.ID.String(), "accounts": e.Beta.Account.ID.String(), "categories": cat.ID.String(),
		"merchants": mer.ID.String(), "tags": tag.ID.String(), "chats": chat.ID.String(),
		"transfers": transfer.String(),
	}
	wrapper := map[string]string{"transactions": "transaction", "accounts": "account", "categories": "category",
		"merchants": "merchant", "tags": "tag", "transfers": "transfer", "provider_connections": "provider_connection"}
	paged := map[string]bool{"transactions": true, "accounts": true, "categories": true, "chats": true, "transfers": true, "provider_connections": true}

	for res, id := range foreign {
		t.Run(res, func(t *testing.T) {
			base := "/api/v1/" + res
			if paged[res] {
				for _, q := range []string{"page=0", "per_page=abc", "page=-3", "per_page=1.5"} {
					apitest.WantError(t, e.Do("GET", base+"?"+q, e.Alpha.Key, nil), 400, "bad_request")
				}
			}
			// Another family's record, and ids that cannot name one.
			for _, path := range []string{base + "/" + id, base + "/not-a-uuid", base + "/" + strings.Repeat("9", 36)} {
				apitest.WantError(t, e.Do("GET", path, e.Alpha.Key, nil), 404, "not_found")
				apitest.WantError(t, e.Do("DELETE", path, e.Alpha.Key, nil), 404, "not_found")
			}
			writes := []struct{ method, path string }{{"POST", base}}
			if res != "transfers" && res != "provider_connections" { // neither can be edited
				writes = append(writes, struct{ method, path string }{"PATCH", base + "/" + id})
			}
			for _, w := range writes {
				apitest.WantError(t, e.Do(w.method, w.path, e.Alpha.ReadKey, `{}`), 403, "insufficient_scope")
				apitest.WantError(t, e.Do(w.method, w.path, "", `{}`), 401, "unauthorized")
				for _, body := range []any{`[]`, `[{}]`, `"text"`, `12`, `null`, `{"a":`, []byte{'{', 0xff, '}'}, ``} {
					apitest.WantError(t, e.Do(w.method, w.path, e.Alpha.Key, body), 400, "bad_request")
				}
				if wr, ok := wrapper[res]; ok {
					for _, inner := range []string{`[]`, `"x"`, `5`, `null`} {
						apitest.WantError(t, e.Do(w.method, w.path, e.Alpha.Key, `{"`+wr+`":`+inner+`}`), 400, "bad_request")
					}
				}
			}
		})
	}
}
