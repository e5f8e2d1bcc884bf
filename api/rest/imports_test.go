package rest_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/api"
	"coffer/api/apitest"
)

const apiCSV = "Date;Amount;Payee;Memo\n15.01.2024;-1.234,50;Rent;January\n16.01.2024;2.000,00;Salary;\n\n17.01.2024;-3,20;Coffee;\n"

func TestImportsAPI(t *testing.T) {
	e := apitest.NewEnv(t)
	a, b := e.Alpha, e.Beta
	settings := map[string]any{"type": "TransactionImport", "account_id": a.Account.ID.String(), "raw_file_content": apiCSV,
		"date_col_label": "Date", "amount_col_label": "Amount", "name_col_label": "Payee", "notes_col_label": "Memo",
		"date_format": "%d.%m.%Y", "number_format": "1.234,56", "col_sep": ";", "publish": "true"}

	// Preflight: the header, the counts, the first rows; nothing stored.
	pre := e.Do("POST", "/api/v1/imports/preflight", a.Key, settings).WantJSON(t, 200)["data"].(map[string]any)
	if pre["rows_count"] != float64(3) || len(pre["headers"].([]any)) != 4 || len(pre["problems"].([]any)) != 0 {
		t.Fatalf("preflight = %v", pre)
	}
	first := pre["sample_rows"].([]any)[0].(map[string]any)
	if first["date"] != "2024-01-15" || first["amount"] != "1234.5000" || first["name"] != "Rent" || first["notes"] != "January" {
		t.Fatalf("first row = %v", first)
	}

	// Create with publish="true": 201, importing; the job writes the rows.
	im := e.Do("POST", "/api/v1/imports", a.Key, settings).WantJSON(t, 201)["data"].(map[string]any)
	if im["status"] != "importing" || im["type"] != "TransactionImport" || im["account_id"] != a.Account.ID.String() {
		t.Fatalf("created = %v", im)
	}
	id := im["id"].(string)
	e.FinishImport(t, a.Family.ID.String(), id)
	got := e.Do("GET", "/api/v1/imports/"+id, a.Key, nil).WantJSON(t, 200)["data"].(map[string]any)
	stats := got["stats"].(map[string]any)
	if got["status"] != "complete" || stats["imported_rows_count"] != float64(3) || stats["progress"] != float64(100) {
		t.Fatalf("after the job = %v", got)
	}
	cfg := got["configuration"].(map[string]any)
	if cfg["date_format"] != "%d.%m.%Y" || cfg["name_col_label"] != "Payee" || cfg["col_sep"] != ";" {
		t.Fatalf("configuration = %v", cfg)
	}
	txs := e.Do("GET", "/api/v1/transactions?account_id="+a.Account.ID.String(), a.Key, nil).WantJSON(t, 200)
	if n := len(txs["transactions"].([]any)); n != 3 {
		t.Fatalf("%d transactions", n)
	}

	// The same file as a multipart upload, publish as JSON's true would be:
	// every row is a duplicate.
	fields := map[string]string{"account_id": a.Account.ID.String(), "date_col_label": "Date", "amount_col_label": "Amount",
		"name_col_label": "Payee", "date_format": "%d.%m.%Y", "number_format": "1.234,56", "col_sep": ";", "publish": "true"}
	again := e.Upload("/api/v1/imports", a.Key, "statement.csv", []byte(apiCSV), fields).WantJSON(t, 201)["data"].(map[string]any)
	if again["filename"] != "statement.csv" || again["status"] != "importing" {
		t.Fatalf("upload = %v", again)
	}
	e.FinishImport(t, a.Family.ID.String(), again["id"].(string))
	rows := e.Do("GET", "/api/v1/imports/"+again["id"].(string)+"/rows?per_page=2", a.Key, nil).WantJSON(t, 200)
	meta := rows["meta"].(map[string]any)
	if meta["total_count"] != float64(3) || meta["next_page"] != float64(2) || meta["prev_page"] != nil {
		t.Fatalf("rows meta = %v", meta)
	}
	if r0 := rows["data"].([]any)[0].(map[string]any); r0["status"] != "duplicate" || r0["transaction_id"] == nil {
		t.Fatalf("row = %v", r0)
	}

	// The list, newest first, filtered.
	list := e.Do("GET", "/api/v1/imports?status=complete", a.Key, nil).WantJSON(t, 200)
	if d := list["data"].([]any); len(d) != 2 || d[0].(map[string]any)["id"] != again["id"] || d[0].(map[string]any)["rows_count"] != float64(3) {
		t.Fatalf("list = %v", list)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/imports?status=done", a.Key, nil), 422, "validation_failed")

	// Another family sees nothing of it.
	apitest.WantError(t, e.Do("GET", "/api/v1/imports/"+id, b.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("GET", "/api/v1/imports/"+id+"/rows", b.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("POST", "/api/v1/imports/"+id+"/revert", b.Key, nil), 404, "not_found")
	if d := e.Do("GET", "/api/v1/imports", b.Key, nil).WantJSON(t, 200)["data"].([]any); len(d) != 0 {
		t.Fatalf("beta lists %v", d)
	}

	// Revert: 202, then the job removes exactly the first import's rows.
	rev := e.Do("POST", "/api/v1/imports/"+id+"/revert", a.Key, nil).WantJSON(t, 202)["data"].(map[string]any)
	if rev["status"] != "reverting" {
		t.Fatalf("revert = %v", rev)
	}
	if _, err := e.Store.RevertImport(context.Background(), a.Family.ID, uuid.MustParse(id)); err != nil {
		t.Fatal(err)
	}
	if n := len(e.Do("GET", "/api/v1/transactions", a.Key, nil).WantJSON(t, 200)["transactions"].([]any)); n != 0 {
		t.Fatalf("%d transactions after the revert", n)
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/imports/"+id+"/revert", a.Key, nil), 422, "validation_failed")
	// Pending again, it can be published again.
	if st := e.Do("POST", "/api/v1/imports/"+id+"/publish", a.Key, nil).WantJSON(t, 202)["data"].(map[string]any)["status"]; st != "importing" {
		t.Fatalf("republish: %v", st)
	}
}

func TestImportsAPIRefusals(t *testing.T) {
	e := apitest.NewEnv(t)
	a, b := e.Alpha, e.Beta
	acct := a.Account.ID.String()
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0, 255, 7}, 300)...)
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		code   string
		want   string
	}{
		{"no file", map[string]any{"account_id": acct}, 422, "validation_failed", "raw_file_content is required"},
		{"no account", map[string]any{"raw_file_content": "date,amount\n01/01/2024,1\n"}, 422, "validation_failed", "account_id is required"},
		{"bad account id", map[string]any{"account_id": "x", "raw_file_content": "date,amount\n01/01/2024,1\n"}, 422, "validation_failed", "must be a UUID"},
		{"another family's account", map[string]any{"account_id": b.Account.ID.String(), "raw_file_content": "date,amount\n01/01/2024,1\n"},
			422, "validation_failed", "Account not found"},
		{"unknown type", map[string]any{"account_id": acct, "type": "MintImport", "raw_file_content": "x"}, 422, "validation_failed", "type must be"},
		{"bad settings", map[string]any{"account_id": acct, "raw_file_content": "x", "date_format": "%Q", "number_format": "9",
			"signage_convention": "up", "col_sep": "x"}, 422, "validation_failed", "date_format"},
		{"missing column", map[string]any{"account_id": acct, "raw_file_content": "when,amount\n01/01/2024,1\n"}, 422, "validation_failed",
			`date_col_label \"date\" is not a column`},
		{"not OFX", map[string]any{"account_id": acct, "type": "OfxImport", "raw_file_content": "date,amount\n"}, 422, "validation_failed", "not an OFX"},
		{"label not a string", map[string]any{"account_id": acct, "raw_file_content": "x", "date_col_label": 3}, 422, "validation_failed", "must be a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do("POST", "/api/v1/imports", a.Key, tc.body)
			apitest.WantError(t, r, tc.status, tc.code)
			if !strings.Contains(string(r.Body), tc.want) {
				t.Fatalf("body %s does not say %q", r.Body, tc.want)
			}
		})
	}
	r := e.Upload("/api/v1/imports", a.Key, "statement.csv", png, map[string]string{"account_id": acct})
	apitest.WantError(t, r, 422, "validation_failed")
	if !strings.Contains(string(r.Body), "not a text file") {
		t.Fatalf("binary .csv: %s", r.Body)
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/imports", a.ReadKey, map[string]any{"account_id": acct}), 403, "insufficient_scope")
	apitest.WantError(t, e.Do("POST", "/api/v1/imports", a.Key, "{"), 400, "bad_request")
	apitest.WantError(t, e.Do("GET", "/api/v1/imports/not-a-uuid", a.Key, nil), 404, "not_found")
	// Nothing was stored by any of them.
	if n, _ := e.Store.DB().NewSelect().Table("imports").Count(context.Background()); n != 0 {
		t.Fatalf("%d imports stored", n)
	}
	// A file with a bad row is stored, but publish=true leaves it pending,
	// as the reference app does; an explicit publish says why.
	im := e.Do("POST", "/api/v1/imports", a.Key, map[string]any{"account_id": acct, "publish": true,
		"raw_file_content": "date,amount\n01/01/2024,1\n02/30/2024,2\n"}).WantJSON(t, 201)["data"].(map[string]any)
	if im["status"] != "pending" || im["stats"].(map[string]any)["invalid_rows_count"] != float64(1) {
		t.Fatalf("import with a bad row = %v", im)
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/imports/"+im["id"].(string)+"/publish", a.Key, nil), 422, "validation_failed")
}

// TestImportFileSizeLimit sends a 100 MB file to a real listener: it is
// refused by its Content-Length, 413, before the body is read (other
// routes keep their 1 MiB: TestOversizedRequests); a 2 MB file is taken.
func TestImportFileSizeLimit(t *testing.T) {
	// Storing 60,000 rows with the race detector on the embedded SQLite
	// (itself Go code, so instrumented too) outlasts the default request
	// deadline; without -race it takes a few seconds.
	e := apitest.NewEnv(t, func(o *api.Options) { o.RequestTimeout = 3 * time.Minute })
	base := e.Listen()
	// Only the head is sent: the answer comes from the Content-Length alone.
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/imports HTTP/1.1\r\nHost: x\r\nX-Api-Key: %s\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: %d\r\n\r\n",
		e.Alpha.Key, 100<<20)
	req, _ := http.NewRequest("POST", base+"/api/v1/imports", nil)
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	r := apitest.Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
	e.Validate(req, r)
	apitest.WantError(t, r, 413, "payload_too_large")

	var file strings.Builder
	file.WriteString("date,amount,name\n")
	for i := 0; file.Len() < 2<<20; i++ {
		fmt.Fprintf(&file, "01/%02d/2024,-%d.25,Shop number %d\n", i%28+1, i%1000, i)
	}
	r = e.Upload("/api/v1/imports", e.Alpha.Key, "big.csv", []byte(file.String()), map[string]string{"account_id": e.Alpha.Account.ID.String()})
	if got := r.WantJSON(t, 201)["data"].(map[string]any); got["stats"].(map[string]any)["rows_count"].(float64) < 50_000 {
		t.Fatalf("2 MB upload = %v", got["stats"])
	}
}
