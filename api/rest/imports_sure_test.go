package rest_test

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"

	"coffer/api/apitest"
)

func sureFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../models/importfile/testdata/sure/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ledgerRows counts a family's rows of the tables a restore writes.
func ledgerRows(t *testing.T, e *apitest.Env, familyID uuid.UUID) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"accounts", "valuations", "categories", "tags", "merchants", "transactions", "transaction_tags",
		"transfers", "budgets", "budget_categories", "rules"} {
		n, err := e.Store.DB().NewSelect().Table(table).Where("family_id = ?", familyID).Count(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out[table] = int(n)
	}
	return out
}

func sameRows(a, b map[string]int) bool {
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return len(a) == len(b)
}

func TestSureImportAPI(t *testing.T) {
	e := apitest.NewEnv(t)
	a, b := e.Alpha, e.Beta
	zip := sureFile(t, "export.zip")
	before, betaBefore := ledgerRows(t, e, a.Family.ID), ledgerRows(t, e, b.Family.ID)

	// Preflight: what the file holds, by kind; nothing written.
	pre := e.Upload("/api/v1/imports/preflight", a.Key, "sure-export.zip", zip, map[string]string{"type": "SureImport"}).
		WantJSON(t, 200)["data"].(map[string]any)
	dry := pre["dry_run"].(map[string]any)
	if pre["valid"] != true || pre["type"] != "SureImport" || dry["accounts"] != float64(2) || dry["transactions"] != float64(6) ||
		dry["categories"] != float64(3) || dry["trades"] != float64(0) || dry["rules"] != float64(1) || pre["stats"].(map[string]any)["rows_count"] != float64(21) {
		t.Fatalf("preflight = %v", pre)
	}
	if !sameRows(ledgerRows(t, e, a.Family.ID), before) {
		t.Fatal("the preflight wrote rows")
	}

	// The restore: 202, stored; the job writes it, all of it in Alpha.
	got := e.Upload("/api/v1/imports", a.Key, "sure-export.zip", zip, map[string]string{"type": "SureImport"}).
		WantJSON(t, 202)["data"].(map[string]any)
	if got["status"] != "importing" || got["filename"] != "sure-export.zip" || got["dry_run"].(map[string]any)["transactions"] != float64(6) {
		t.Fatalf("restore = %v", got)
	}
	id := got["id"].(string)
	if !sameRows(ledgerRows(t, e, a.Family.ID), before) {
		t.Fatal("rows were written before the job ran")
	}
	// The job, twice (delivery is at least once): one restore.
	for range 2 {
		if _, err := e.Store.RunRestore(context.Background(), a.Family.ID, uuid.MustParse(id)); err != nil {
			t.Fatal(err)
		}
	}
	got = e.Do("GET", "/api/v1/imports/restores/"+id, a.Key, nil).WantJSON(t, 200)["data"].(map[string]any)
	created := got["summary"].(map[string]any)["created"].(map[string]any)
	if got["status"] != "complete" || created["transactions"] != float64(8) || created["accounts"] != float64(2) || got["completed_at"] == nil {
		t.Fatalf("after the job = %v", got)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/imports/restores/"+id, b.Key, nil), 404, "not_found")
	after := ledgerRows(t, e, a.Family.ID)
	if after["accounts"]-before["accounts"] != 2 || after["transactions"]-before["transactions"] != 8 || after["transfers"]-before["transfers"] != 1 {
		t.Errorf("rows %v, were %v", after, before)
	}
	if !sameRows(ledgerRows(t, e, b.Family.ID), betaBefore) {
		t.Error("the restore wrote into Beta")
	}

	// Isolation: Beta's key sees none of it, and gets 404 on its ids.
	accts := e.Do("GET", "/api/v1/accounts", a.Key, nil).WantJSON(t, 200)["accounts"].([]any)
	var visa string
	for _, x := range accts {
		if m := x.(map[string]any); m["name"] == "Visa" {
			visa = m["id"].(string)
		}
	}
	if visa == "" {
		t.Fatalf("no Visa in %v", accts)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/accounts/"+visa, b.Key, nil), 404, "not_found")
	for _, x := range e.Do("GET", "/api/v1/accounts", b.Key, nil).WantJSON(t, 200)["accounts"].([]any) {
		if x.(map[string]any)["name"] == "Visa" {
			t.Error("Beta lists Alpha's restored account")
		}
	}
	// A read-only key may not restore.
	apitest.WantError(t, e.Upload("/api/v1/imports", a.ReadKey, "x.zip", zip, map[string]string{"type": "SureImport"}), 403, "insufficient_scope")
}

func TestSureImportAPIRefusals(t *testing.T) {
	e := apitest.NewEnv(t)
	a := e.Alpha
	nd := sureFile(t, "all.ndjson")
	lines := strings.Split(string(nd), "\n")
	with := func(i int, line string) []byte {
		l := append([]string(nil), lines...)
		l[i] = line
		return []byte(strings.Join(l, "\n"))
	}
	zip := sureFile(t, "export.zip")
	before := ledgerRows(t, e, a.Family.ID)
	for _, tc := range []struct {
		name   string
		file   []byte
		line   float64
		reason string
	}{
		{"neither a ZIP nor NDJSON", []byte("date,amount\n2024-01-01,1\n"), 0, "neither a ZIP"},
		{"a truncated ZIP", zip[:len(zip)-200], 0, "truncated or damaged"},
		{"a line that does not parse", with(12, `{"type":"Transaction","data":`), 13, "not a JSON object"},
		{"an id twice", with(7, strings.Replace(lines[7], "7a000000-0000-4000-8000-000000000001", "7a000000-0000-4000-8000-000000000001", 1)+"\n"+lines[7]), 9, "already the id of line 8"},
		{"a reference to a record not in the file", with(15, strings.Replace(lines[15], "e0000000-0000-4000-8000-000000000004", "e0000000-0000-4000-8000-0000000000ff", 1)), 16, "which the file does not hold"},
		{"a file that expands past 10 times its size", zipBomb(t, nd), 0, "expands past 10 times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/api/v1/imports/preflight", "/api/v1/imports"} {
				r := e.Upload(path, a.Key, "export.zip", tc.file, map[string]string{"type": "SureImport"})
				m := apitest.WantError(t, r, 422, "validation_failed")
				d := m["details"].(map[string]any)
				if d["line"] != tc.line || !strings.Contains(d["reason"].(string), tc.reason) {
					t.Errorf("%s: details %v, want line %v %q", path, d, tc.line, tc.reason)
				}
			}
			if !sameRows(ledgerRows(t, e, a.Family.ID), before) {
				t.Error("rows were written")
			}
		})
	}
	apitest.WantError(t, e.Upload("/api/v1/imports", a.Key, "", nil, map[string]string{"type": "SureImport"}), 422, "validation_failed")

	// A record the job cannot write: the restore fails, nothing written.
	bad := with(1, strings.Replace(lines[1], `"accountable_type":"CreditCard"`, `"accountable_type":"Spaceship"`, 1))
	got := e.Upload("/api/v1/imports", a.Key, "export.zip", bad, map[string]string{"type": "SureImport"}).WantJSON(t, 202)["data"].(map[string]any)
	if _, err := e.Store.RunRestore(context.Background(), a.Family.ID, uuid.MustParse(got["id"].(string))); err != nil {
		t.Fatal(err)
	}
	got = e.Do("GET", "/api/v1/imports/restores/"+got["id"].(string), a.Key, nil).WantJSON(t, 200)["data"].(map[string]any)
	if got["status"] != "failed" || !strings.Contains(got["error"].(string), "line 2: Account: accountable_type Spaceship") {
		t.Fatalf("failed restore = %v", got)
	}
	if !sameRows(ledgerRows(t, e, a.Family.ID), before) {
		t.Error("a failed restore wrote rows")
	}
}

// zipBomb is the fixture's NDJSON followed by 4 MiB of blank lines, in a
// ZIP of some kilobytes: refused by the size its header declares, before
// a byte is inflated (importfile's tests cover a header that lies).
func zipBomb(t *testing.T, nd []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := newZip(&buf)
	f, err := w.Create("all.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write(nd)
	_, _ = f.Write(bytes.Repeat([]byte("\n"), 4<<20))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func newZip(w *bytes.Buffer) *zip.Writer { return zip.NewWriter(w) }
