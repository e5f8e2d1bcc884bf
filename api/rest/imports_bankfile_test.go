package rest_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/text/encoding/charmap"

	"coffer/api/apitest"
)

// TestImportSkipInvalid: a file with bad rows is kept pending by
// publish=true; with skip_invalid=true its valid rows are imported and
// the bad ones left out, each listed with its line and reason.
func TestImportSkipInvalid(t *testing.T) {
	e := apitest.NewEnv(t)
	a := e.Alpha
	file := "Date,Description,Debit,Credit\n2024-01-15,Rent,1200.00,\n2024-02-30,Bad day,5.00,\n2024-01-16,Salary,,3000.00\n2024-01-17,Shop,1.00,,oops\n"
	req := map[string]any{"type": "TransactionImport", "account_id": a.Account.ID.String(), "raw_file_content": file,
		"date_col_label": "Date", "name_col_label": "Description", "debit_col_label": "Debit", "credit_col_label": "Credit",
		"date_format": "%Y-%m-%d", "publish": true}
	held := e.Do("POST", "/api/v1/imports", a.Key, req).WantJSON(t, 201)["data"].(map[string]any)
	if held["status"] != "pending" || held["stats"].(map[string]any)["invalid_rows_count"] != float64(2) {
		t.Fatalf("without skip_invalid: %v", held)
	}
	rows := e.Do("GET", "/api/v1/imports/"+held["id"].(string)+"/rows", a.Key, nil).WantJSON(t, 200)["data"].([]any)
	bad := rows[1].(map[string]any)
	if bad["line"] != float64(3) || bad["status"] != "invalid" || !strings.Contains(bad["errors"].([]any)[0].(string), "2024-02-30") {
		t.Fatalf("bad row: %v", bad)
	}
	wide := rows[3].(map[string]any)
	if wide["status"] != "invalid" || !strings.Contains(strings.Join(toStrings(wide["errors"]), " "), "line 5 has 5 fields but the header has 4") {
		t.Fatalf("wide row: %v", wide)
	}
	req["skip_invalid"] = true
	im := e.Do("POST", "/api/v1/imports", a.Key, req).WantJSON(t, 201)["data"].(map[string]any)
	if im["status"] != "importing" || im["configuration"].(map[string]any)["debit_col_label"] != "Debit" {
		t.Fatalf("with skip_invalid: %v", im)
	}
	e.FinishImport(t, a.Family.ID.String(), im["id"].(string))
	got := e.Do("GET", "/api/v1/imports/"+im["id"].(string), a.Key, nil).WantJSON(t, 200)["data"].(map[string]any)
	if got["status"] != "complete" || got["stats"].(map[string]any)["imported_rows_count"] != float64(2) {
		t.Fatalf("after the job: %v", got)
	}
	// The held import publishes with skip_invalid too, skipping the two
	// rows now in the account.
	pub := e.Do("POST", "/api/v1/imports/"+held["id"].(string)+"/publish", a.Key, nil)
	pub.WantJSON(t, 422)
	e.Do("POST", "/api/v1/imports/"+held["id"].(string)+"/publish?skip_invalid=true", a.Key, nil).WantJSON(t, 202)
	e.FinishImport(t, a.Family.ID.String(), held["id"].(string))
	again := e.Do("GET", "/api/v1/imports/"+held["id"].(string), a.Key, nil).WantJSON(t, 200)["data"].(map[string]any)
	if st := again["stats"].(map[string]any); st["imported_rows_count"] != float64(0) || st["duplicate_rows_count"] != float64(2) {
		t.Fatalf("held import: %v", again)
	}
}

// TestImportPreflightShape: the preflight answers in the reference's
// shape, reads a Windows-1252 file sent as it is (multipart), and a
// preflight naming another family's account is a 404.
func TestImportPreflightShape(t *testing.T) {
	e := apitest.NewEnv(t)
	a, b := e.Alpha, e.Beta
	file, _ := charmap.Windows1252.NewEncoder().Bytes([]byte("Buchungstag;Verwendungszweck;Betrag\n15.01.2024;Bäckerei;-4,35\n"))
	fields := map[string]string{"date_col_label": "Buchungstag", "amount_col_label": "Betrag",
		"name_col_label": "Verwendungszweck", "col_sep": ";", "date_format": "%d.%m.%Y", "number_format": "1.234,56", "encoding": "cp1252"}
	pre := e.Upload("/api/v1/imports/preflight", a.Key, "umsaetze.csv", file, fields).WantJSON(t, 200)["data"].(map[string]any)
	stats := pre["stats"].(map[string]any)
	if pre["valid"] != true || stats["rows_count"] != float64(1) || pre["encoding"] != "windows-1252" ||
		pre["content"].(map[string]any)["byte_size"] != float64(len(file)) || len(pre["errors"].([]any)) != 0 ||
		pre["sample_rows"].([]any)[0].(map[string]any)["name"] != "Bäckerei" {
		t.Fatalf("preflight: %v", pre)
	}
	req := map[string]any{"raw_file_content": "Buchungstag;Verwendungszweck;Betrag\n15.01.2024;Bäckerei;-4,35\n"}
	for k, v := range fields {
		req[k] = v
	}
	req["amount_col_label"] = "Amount"
	pre = e.Do("POST", "/api/v1/imports/preflight", a.Key, req).WantJSON(t, 200)["data"].(map[string]any)
	missing := pre["missing_required_headers"].([]any)
	codes := map[string]bool{}
	for _, er := range pre["errors"].([]any) {
		codes[er.(map[string]any)["code"].(string)] = true
	}
	if pre["valid"] != false || len(missing) != 1 || missing[0] != "Amount" || !codes["missing_required_headers"] ||
		len(pre["required_headers"].([]any)) != 2 {
		t.Fatalf("preflight with a missing column: %v", pre)
	}
	req["account_id"] = b.Account.ID.String()
	e.Do("POST", "/api/v1/imports/preflight", a.Key, req).WantJSON(t, 404)
	req["account_id"] = uuid.NewString()
	e.Do("POST", "/api/v1/imports/preflight", a.Key, req).WantJSON(t, 404)
	req["account_id"] = a.Account.ID.String()
	e.Do("POST", "/api/v1/imports/preflight", a.Key, req).WantJSON(t, 200)
	req["encoding"] = "ebcdic"
	e.Do("POST", "/api/v1/imports/preflight", a.Key, req).WantJSON(t, 422)
}

func toStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// TestImportRowsSayWhatWillBeSkipped: before an import is published, its
// rows say which of them are already in the account, with the transaction
// each matches (renamed since it arrived), and publishing skips exactly
// those; another family sees no such import.
func TestImportRowsSayWhatWillBeSkipped(t *testing.T) {
	e := apitest.NewEnv(t)
	a := e.Alpha
	made := e.Do("POST", "/api/v1/transactions", a.Key, map[string]any{"transaction": map[string]any{
		"account_id": a.Account.ID.String(), "date": "2024-01-15", "amount": "1200", "name": "RENT ACME PROPERTIES",
		"nature": "expense"}}).WantJSON(t, 201)
	e.Do("PATCH", "/api/v1/transactions/"+made["id"].(string), a.Key, map[string]any{"transaction": map[string]any{"name": "Rent"}}).WantJSON(t, 200)
	file := "Date,Description,Amount\n2024-01-15,RENT ACME PROPERTIES,-1200.00\n2024-01-16,SALARY,3000.00\n"
	im := e.Do("POST", "/api/v1/imports", a.Key, map[string]any{"type": "TransactionImport", "account_id": a.Account.ID.String(),
		"raw_file_content": file, "date_col_label": "Date", "name_col_label": "Description", "amount_col_label": "Amount",
		"date_format": "%Y-%m-%d"}).WantJSON(t, 201)["data"].(map[string]any)
	rows := e.Do("GET", "/api/v1/imports/"+im["id"].(string)+"/rows", a.Key, nil).WantJSON(t, 200)["data"].([]any)
	dup := rows[0].(map[string]any)["duplicate_of"]
	if d, ok := dup.(map[string]any); !ok || d["id"] != made["id"] || d["name"] != "Rent" || d["amount"] != "1200.0000" {
		t.Fatalf("first row duplicate_of %v", dup)
	}
	if rows[1].(map[string]any)["duplicate_of"] != nil {
		t.Fatalf("second row: %v", rows[1])
	}
	e.Do("GET", "/api/v1/imports/"+im["id"].(string)+"/rows", e.Beta.Key, nil).WantJSON(t, 404)
	e.Do("POST", "/api/v1/imports/"+im["id"].(string)+"/publish", a.Key, nil).WantJSON(t, 202)
	e.FinishImport(t, a.Family.ID.String(), im["id"].(string))
	got := e.Do("GET", "/api/v1/imports/"+im["id"].(string), a.Key, nil).WantJSON(t, 200)["data"].(map[string]any)
	if st := got["stats"].(map[string]any); st["imported_rows_count"] != float64(1) || st["duplicate_rows_count"] != float64(1) {
		t.Fatalf("after publishing: %v", got)
	}
}
