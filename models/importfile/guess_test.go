package importfile

import (
	"strconv"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
	xunicode "golang.org/x/text/encoding/unicode"
)

// bankFiles are exports shaped as banks send them, and what a person
// should get from them without typing: the settings guessed, and the
// first row as read (date, amount in the ledger's sign: positive is money
// out, and name).
var bankFiles = []struct {
	name, file, enc        string
	date, format, numFmt   string
	sign                   string
	firstDate, firstAmount string
	firstName              string
	debit                  bool
}{
	{name: "US checking, posting dates", file: "Details,Posting Date,Description,Amount,Type,Balance,Check or Slip #\n" +
		"DEBIT,01/15/2024,\"AMAZON MKTPLACE PMTS AMZN.COM/BILL WA\",-42.17,DEBIT_CARD,3057.83,,\n" +
		"CREDIT,01/16/2024,\"PAYROLL ACME CORP\",2500.00,ACH_CREDIT,5557.83,,\n" +
		"DEBIT,01/23/2024,\"SHELL OIL 57444\",-38.50,DEBIT_CARD,5519.33,,\n",
		enc: UTF8, date: "Posting Date", format: "%m/%d/%Y", numFmt: "1,234.56", sign: InflowsPositive,
		firstDate: "2024-01-15", firstAmount: "421700", firstName: "AMAZON MKTPLACE PMTS AMZN.COM/BILL WA"},
	{name: "card, charges positive", file: "Transaction Date,Post Date,Description,Category,Type,Amount,Memo\n" +
		"01/14/2024,01/15/2024,STARBUCKS STORE 1234,Food & Drink,Sale,5.75,\n" +
		"01/15/2024,01/16/2024,WHOLEFDS MKT,Groceries,Sale,82.10,\n" +
		"01/20/2024,01/20/2024,Payment Thank You-Mobile,,Payment,-500.00,\n" +
		"01/22/2024,01/23/2024,NETFLIX.COM,Entertainment,Sale,15.49,\n",
		enc: UTF8, date: "Transaction Date", format: "%m/%d/%Y", numFmt: "1,234.56", sign: InflowsNegative,
		firstDate: "2024-01-14", firstAmount: "57500", firstName: "STARBUCKS STORE 1234"},
	{name: "German, Windows-1252", file: "Buchungstag;Valuta;Auftraggeber/Empfänger;Buchungstext;Verwendungszweck;Betrag\r\n" +
		"15.01.2024;15.01.2024;Bäckerei Müller;Kartenzahlung;Brötchen;-1.234,56\r\n" +
		"16.01.2024;16.01.2024;Arbeitgeber GmbH;Gutschrift;Gehalt;2.000,00\r\n",
		enc: Windows1252, date: "Buchungstag", format: "%d.%m.%Y", numFmt: "1.234,56", sign: InflowsPositive,
		firstDate: "2024-01-15", firstAmount: "12345600", firstName: "Brötchen"},
	{name: "debit and credit columns", file: "Date,Description,Debit,Credit,Balance\n" +
		"2024-01-15,Rent,1200.00,,800.00\n2024-01-16,Salary,,3000.00,3800.00\n2024-01-17,Coffee,3.50,0.00,3796.50\n",
		enc: UTF8, date: "Date", format: "%Y-%m-%d", numFmt: "1,234.56", sign: InflowsPositive, debit: true,
		firstDate: "2024-01-15", firstAmount: "12000000", firstName: "Rent"},
	{name: "UTF-16 with a mark", file: "Date\tPayee\tAmount\n2024-01-15\tCafé\t-3.50\n2024-01-16\tShop\t-1.00\n",
		enc: UTF16, date: "Date", format: "%Y-%m-%d", numFmt: "1,234.56", sign: InflowsPositive,
		firstDate: "2024-01-15", firstAmount: "35000", firstName: "Café"},
}

// TestGuessBankFiles: each bank's file is read right with the settings
// guessed from it, in its own encoding, with nothing typed.
func TestGuessBankFiles(t *testing.T) {
	for _, bf := range bankFiles {
		t.Run(bf.name, func(t *testing.T) {
			data := []byte(bf.file)
			switch bf.enc {
			case Windows1252:
				data, _ = charmap.Windows1252.NewEncoder().Bytes(data)
			case UTF16:
				data, _ = xunicode.UTF16(xunicode.LittleEndian, xunicode.UseBOM).NewEncoder().Bytes(data)
			}
			s, g := GuessSettings(data, DefaultSettings())
			if g.Encoding != bf.enc || s.DateColLabel == nil || *s.DateColLabel != bf.date || s.DateFormat != bf.format ||
				s.NumberFormat != bf.numFmt || s.SignageConvention != bf.sign || (s.DebitColLabel != nil) != bf.debit {
				t.Fatalf("guessed %+v (date %v) %+v", s, str(s.DateColLabel), g)
			}
			p, err := Parse(data, CSV, s)
			if err != nil || len(p.Problems) > 0 || p.InvalidRows() > 0 {
				t.Fatalf("parse: %v %v %+v", err, p.Problems, p.Rows)
			}
			r := p.Rows[0]
			if *r.Date != bf.firstDate || itoa64(*r.Amount) != bf.firstAmount || r.Name != bf.firstName || r.Line != 2 {
				t.Fatalf("first row %+v: %s %d", r, *r.Date, *r.Amount)
			}
		})
	}
}

// TestGuessAmbiguousDates: a column every value of which reads day-first
// and month-first asks the person, keeping the format it was given.
func TestGuessAmbiguousDates(t *testing.T) {
	f, ambiguous := GuessDateFormat([]string{"03/04/2024", "05/06/2024"}, "%d/%m/%Y")
	if f != "%d/%m/%Y" || !ambiguous {
		t.Fatalf("%q %v", f, ambiguous)
	}
	if f, ambiguous = GuessDateFormat([]string{"03/04/2024", "25/06/2024"}, "%m/%d/%Y"); f != "%d/%m/%Y" || ambiguous {
		t.Fatalf("day-first: %q %v", f, ambiguous)
	}
	_, g := GuessSettings([]byte("Date,Amount\n03/04/2024,1\n05/06/2024,-2\n"), DefaultSettings())
	if !g.AmbiguousDates || len(g.Notes) == 0 {
		t.Fatalf("not asked: %+v", g)
	}
}

// TestWideLineIsBad: a line with more fields than the header is a bad
// row, with its line number, never cut to fit.
func TestWideLineIsBad(t *testing.T) {
	s := DefaultSettings()
	p, err := Parse([]byte("date,amount,name\n01/15/2024,1.00,A\n\n01/16/2024,2.00,B,extra\n01/17/2024,3.00,C,\n"), CSV, s)
	if err != nil {
		t.Fatal(err)
	}
	if p.InvalidRows() != 1 || p.Rows[1].Line != 4 || !strings.Contains(strings.Join(p.Rows[1].Problems, ""), "line 4 has 4 fields") {
		t.Fatalf("%+v", p.Rows)
	}
}

// TestEncodingChosen: the encoding given wins over detection, and one the
// bytes do not fit is said.
func TestEncodingChosen(t *testing.T) {
	latin := []byte("date,amount,name\n01/15/2024,1.00,Gr\xfc\xdfe\n")
	s := DefaultSettings()
	s.Encoding = ISO88591
	p, err := Parse(latin, CSV, s)
	if err != nil || p.Rows[0].Name != "Grüße" {
		t.Fatalf("%v %+v", err, p)
	}
	s.Encoding = UTF8
	if _, err := Parse(latin, CSV, s); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Fatalf("UTF-8 forced: %v", err)
	}
	if e, ok := NormalizeEncoding("CP1252"); !ok || e != Windows1252 {
		t.Fatal(e, ok)
	}
}

// FuzzGuessSettings: guessing never panics, and what it guesses is a
// setting Parse takes.
func FuzzGuessSettings(f *testing.F) {
	for _, bf := range bankFiles {
		f.Add([]byte(bf.file))
	}
	f.Add([]byte("\xff\xfeD\x00a\x00"))
	f.Add([]byte("a;b\n\"x;1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, _ := GuessSettings(data, DefaultSettings())
		if problems := s.Check(); len(problems) > 0 {
			t.Fatalf("guessed settings refused: %v", problems)
		}
		_, _ = Parse(data, CSV, s)
	})
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
