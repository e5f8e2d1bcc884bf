package importfile_test

import (
	"testing"

	"coffer/models/importfile"
)

// TestOFXLedgerBalance reads LEDGERBAL of a bank statement (SGML) and of a
// card statement (XML), as sent; a file without one has none.
func TestOFXLedgerBalance(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       importfile.LedgerBalance
		ok         bool
	}{
		{"bank SGML", ofxSGML, importfile.LedgerBalance{Amount: 100_0000, Date: "2024-01-20"}, true},
		{"card XML", ofxXML, importfile.LedgerBalance{Amount: -40_0000, Date: "2024-01-20"}, true},
		{"CSV", "date,amount\n2024-01-01,1\n", importfile.LedgerBalance{}, false},
	} {
		got, ok := importfile.OFXLedgerBalance(c.text)
		if ok != c.ok || got != c.want {
			t.Errorf("%s: %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
