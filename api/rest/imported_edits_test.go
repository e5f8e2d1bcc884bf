package rest_test

import (
	"testing"

	"coffer/api/apitest"
	"coffer/models"
)

// TestImportedRowEdits: editing an imported row locks the fields edited,
// so the next import keeps the user's values; deleting one leaves an
// invisible tombstone, so the next import does not bring it back.
func TestImportedRowEdits(t *testing.T) {
	e := apitest.NewEnv(t)
	src, ext := models.SourceSimpleFIN, "TRN-1"
	tx := &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: e.Alpha.Account.ID, Date: "2026-01-02", Amount: 10000,
		Currency: "USD", Name: "BANK NAME", ExternalID: &ext, Source: &src}
	if _, _, err := e.Store.CreateTransaction(t.Context(), tx, nil); err != nil {
		t.Fatal(err)
	}
	id := tx.ID.String()
	if r := e.Do("PATCH", "/api/v1/transactions/"+id, e.Alpha.Key, map[string]any{"transaction": map[string]any{"name": "Mine", "notes": "n"}}); r.Status != 200 {
		t.Fatalf("edit: %d %s", r.Status, r.Body)
	}
	var stored models.Transaction
	if err := e.Store.DB().NewSelect().Model(&stored).Where("id = ?", tx.ID).Scan(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(stored.LockedFields) != 2 || stored.LockedFields[0] != "name" || stored.LockedFields[1] != "notes" {
		t.Fatalf("locked fields %v", stored.LockedFields)
	}
	if r := e.Do("DELETE", "/api/v1/transactions/"+id, e.Alpha.Key, nil); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/transactions/"+id, e.Alpha.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("DELETE", "/api/v1/transactions/"+id, e.Alpha.Key, nil), 404, "not_found")
	if n := len(e.Do("GET", "/api/v1/transactions", e.Alpha.Key, nil).JSON(t)["transactions"].([]any)); n != 0 {
		t.Fatalf("%d transactions listed after the delete", n)
	}
	if err := e.Store.DB().NewSelect().Model(&stored).Where("id = ?", tx.ID).Scan(t.Context()); err != nil || stored.DeletedAt == nil {
		t.Fatalf("no tombstone: %v", err)
	}
}
