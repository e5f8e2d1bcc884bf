package importfile_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"coffer/models/importfile"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/sure/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// zipOf is a ZIP holding files by name, deflated.
func zipOf(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for name, b := range files {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestScanSureFixture(t *testing.T) {
	want := map[string]int{"Account": 2, "Balance": 2, "Category": 3, "Tag": 1, "Merchant": 1, "Transaction": 6,
		"Transfer": 1, "Valuation": 2, "Budget": 1, "BudgetCategory": 1, "Rule": 1}
	for _, name := range []string{"export.zip", "all.ndjson"} {
		t.Run(name, func(t *testing.T) {
			s, err := importfile.ScanSure(readFixture(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if s.Lines != 21 {
				t.Errorf("lines = %d, want 21", s.Lines)
			}
			for k, n := range want {
				if s.Counts[k] != n {
					t.Errorf("%s: %d, want %d", k, s.Counts[k], n)
				}
			}
		})
	}
}

func TestEachSureDecodes(t *testing.T) {
	var split *importfile.SureTransaction
	var rule *importfile.SureRule
	var groceries *importfile.SureCategory
	err := importfile.EachSure(readFixture(t, "export.zip"), func(typ string) bool { return typ != "Balance" }, func(r importfile.SureRecord) error {
		switch v := r.Value.(type) {
		case *importfile.SureBalance:
			t.Errorf("line %d: a Balance was not asked for", r.Line)
		case *importfile.SureTransaction:
			if len(v.Splits) > 0 {
				split = v
			}
		case *importfile.SureRule:
			rule = v
		case *importfile.SureCategory:
			if v.Name == "Groceries" {
				groceries = v
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if split == nil || len(split.Splits) != 2 || split.Splits[0].Amount.String() != "60.0000" || split.Splits[1].TagIDs[0] == "" ||
		split.Splits[0].HasTagIDs != true || len(split.Splits[0].TagIDs) != 0 {
		t.Errorf("split = %+v", split)
	}
	if rule == nil || len(rule.Conditions) != 1 || *rule.Conditions[0].Value != "Corner Market" || rule.Actions[0].Refs[0].Type != "Category" {
		t.Errorf("rule = %+v", rule)
	}
	if groceries == nil || groceries.ParentID == nil || groceries.Classification != "expense" || groceries.Icon != "shopping-basket" {
		t.Errorf("groceries = %+v", groceries)
	}
}

func sureErr(t *testing.T, err error) *importfile.SureError {
	t.Helper()
	var se *importfile.SureError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *SureError", err)
	}
	return se
}

func TestScanSureRefuses(t *testing.T) {
	nd := readFixture(t, "all.ndjson")
	lines := strings.Split(string(nd), "\n")
	with := func(i int, line string) []byte {
		l := append([]string(nil), lines...)
		l[i] = line
		return []byte(strings.Join(l, "\n"))
	}
	export := readFixture(t, "export.zip")
	cases := []struct {
		name   string
		file   []byte
		line   int
		reason string
	}{
		{"not a ZIP nor NDJSON", []byte("date,amount\n2024-01-01,1\n"), 0, "neither a ZIP"},
		{"empty", nil, 0, "neither a ZIP"},
		{"truncated ZIP", export[:len(export)/2], 0, "truncated or damaged"},
		{"ZIP without all.ndjson", zipOf(t, map[string][]byte{"accounts.csv": []byte("id\n")}), 0, "no all.ndjson"},
		{"a line that does not parse", with(9, `{"type":"Transaction","data":{"id":`), 10, "not a JSON object"},
		{"a bad amount", with(9, strings.Replace(lines[9], `"-3000.0"`, `"-3,000"`, 1)), 10, "amount must be"},
		{"an id twice", with(10, strings.Replace(lines[10], "e0000000-0000-4000-8000-000000000002", "e0000000-0000-4000-8000-000000000001", 1)), 11, "already the id of line 10"},
		{"a split part's id twice", with(13, strings.Replace(lines[13], "e0000000-0000-4000-8000-000000000007", "e0000000-0000-4000-8000-000000000002", 1)), 14, "already the id of line 11"},
		{"a reference to a record not in the file", with(10, strings.Replace(lines[10], `"merchant_id":"3e000000-0000-4000-8000-000000000001"`, `"merchant_id":"3e000000-0000-4000-8000-0000000000ff"`, 1)), 11, "which the file does not hold"},
		{"a parent not in the file", with(4, strings.Replace(lines[4], "ca000000-0000-4000-8000-000000000002\",\"classification", "ca000000-0000-4000-8000-0000000000ff\",\"classification", 1)), 5, "parent_id names Category"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := importfile.ScanSure(c.file)
			se := sureErr(t, err)
			if se.Line != c.line || !strings.Contains(se.Reason, c.reason) {
				t.Errorf("line %d %q, want line %d %q", se.Line, se.Reason, c.line, c.reason)
			}
		})
	}
}

func TestScanSureRefusesBombs(t *testing.T) {
	// 11 times its size once inflated (blank lines compress well).
	big := bytes.Repeat([]byte("\n"), 4<<20)
	bomb := zipOf(t, map[string][]byte{"all.ndjson": append(readFixture(t, "all.ndjson"), big...)})
	se := sureErr(t, func() error { _, err := importfile.ScanSure(bomb); return err }())
	if !strings.Contains(se.Reason, "expands past") {
		t.Errorf("bomb: %v", se)
	}

	// A header that understates the size: the reader stops at the bytes
	// it was told of, long before inflating the rest.
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	f, err := w.CreateHeader(&zip.FileHeader{Name: "all.ndjson", Method: zip.Deflate})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(append(readFixture(t, "all.ndjson"), big...)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lying := bytes.Replace(buf.Bytes(), le32(uint32(len(big)+10213)), le32(100), -1)
	if bytes.Equal(lying, buf.Bytes()) {
		t.Fatal("the test did not change the declared size")
	}
	if _, err := importfile.ScanSure(lying); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("a ZIP that lies about its size: %v", err)
	}
}

func le32(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }

func TestScanSureBareNDJSONLimit(t *testing.T) {
	long := `{"type":"Tag","data":{"id":"x","name":"` + strings.Repeat("a", importfile.MaxSureLine) + `"}}`
	se := sureErr(t, func() error {
		_, err := importfile.ScanSure([]byte(`{"type":"Tag","data":{"id":"t","name":"n"}}` + "\n" + long))
		return err
	}())
	if se.Line != 2 || !strings.Contains(se.Reason, "longer than") {
		t.Errorf("got %v", se)
	}
}

// FuzzParseSureExport: any bytes are refused with a *SureError or read
// whole; what is read is read the same way twice.
func FuzzParseSureExport(f *testing.F) {
	// Small seeds: Go minimizes each new input quadratically in its size.
	small := []byte(`{"type":"Account","data":{"id":"a","name":"A","accountable_type":"Depository","balance":"1.5"}}
{"type":"Category","data":{"id":"c","name":"C","parent_id":"p"}}
{"type":"Category","data":{"id":"p","name":"P"}}
{"type":"Transaction","data":{"id":"t","account_id":"a","date":"2024-01-01","amount":"2","category_id":"c","tag_ids":[],"split_lines":[{"id":"s","amount":"1"}]}}
{"type":"Transfer","data":{"inflow_transaction_id":"t","outflow_transaction_id":"s"}}`)
	f.Add(small)
	f.Add(zipOf(f, map[string][]byte{"all.ndjson": small}))
	f.Add([]byte(`{"type":"Transaction","data":{"id":"a","account_id":"b","date":"2024-01-01","amount":1}}`))
	f.Add([]byte(`{"type":"Rule","data":{"id":"r","conditions":[{"condition_type":"compound","sub_conditions":[{"condition_type":"x","value":3}]}]}}`))
	f.Add([]byte("PK\x03\x04garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := importfile.ScanSure(data)
		if err != nil {
			var se *importfile.SureError
			if !errors.As(err, &se) {
				t.Fatalf("err %v is not a *SureError", err)
			}
			return
		}
		n := 0
		if err := importfile.EachSure(data, nil, func(importfile.SureRecord) error { n++; return nil }); err != nil || n != s.Lines {
			t.Fatalf("second reading: %d records, %v; first %d", n, err, s.Lines)
		}
	})
}
