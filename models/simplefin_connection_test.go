package models_test

import (
	"encoding/json"
	"testing"

	"coffer/models"
)

// TestProviderErrorReadsOldRows: rows written before errors carried their
// codes hold bare strings; both forms read.
func TestProviderErrorReadsOldRows(t *testing.T) {
	var got []models.ProviderError
	if err := json.Unmarshal([]byte(`["Bank A: sign in again",{"message":"Bank B","code":"con.auth","conn_id":"C1"}]`), &got); err != nil {
		t.Fatal(err)
	}
	want := []models.ProviderError{{Message: "Bank A: sign in again"}, {Message: "Bank B", Code: "con.auth", ConnID: "C1"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("%+v", got)
	}
}
