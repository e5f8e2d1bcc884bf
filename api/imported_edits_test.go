package api_test

import (
	"testing"

	"coffer/models"
)

// TestImportedRowEdits: editing an imported row locks the fields edited,
// so the next import keeps the user's values; deleting one leaves an
// invisible tombstone, so the next import does not bring it back.
func TestImportedRowEdits(t *testing.T) {
	e := newEnv(t)
	src, ext := models.SourceSimpleFIN, "TRN-1"
	tx := &models.Transaction{FamilyID: e.alpha.Family.ID, AccountID: e.alpha.Account.ID, Date: "2026-01-02", Amount: 10000,
		Currency: "USD", Name: "BANK NAME", ExternalID: &ext, Source: &src}
	if _, _, err := e.store.CreateTransaction(t.Context(), tx, nil); err != nil {
		t.Fatal(err)
	}
	id := tx.ID.String()
	if r := e.do("PATCH", "/api/v1/transactions/"+id, e.alpha.Key, map[string]any{"transaction": map[string]any{"name": "Mine", "notes": "n"}}); r.status != 200 {
		t.Fatalf("edit: %d %s", r.status, r.body)
	}
	var stored models.Transaction
	if err := e.store.DB().NewSelect().Model(&stored).Where("id = ?", tx.ID).Scan(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(stored.LockedFields) != 2 || stored.LockedFields[0] != "name" || stored.LockedFields[1] != "notes" {
		t.Fatalf("locked fields %v", stored.LockedFields)
	}
	if r := e.do("DELETE", "/api/v1/transactions/"+id, e.alpha.Key, nil); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	wantError(t, e.do("GET", "/api/v1/transactions/"+id, e.alpha.Key, nil), 404, "not_found")
	wantError(t, e.do("DELETE", "/api/v1/transactions/"+id, e.alpha.Key, nil), 404, "not_found")
	if n := len(e.do("GET", "/api/v1/transactions", e.alpha.Key, nil).json(t)["transactions"].([]any)); n != 0 {
		t.Fatalf("%d transactions listed after the delete", n)
	}
	if err := e.store.DB().NewSelect().Model(&stored).Where("id = ?", tx.ID).Scan(t.Context()); err != nil || stored.DeletedAt == nil {
		t.Fatalf("no tombstone: %v", err)
	}
}
