package importfile

import (
	"errors"
	"io"
	"strings"
	"time"
)

// Guess is what GuessSettings found out about a file, and what it could
// not decide and a person should look at.
type Guess struct {
	Encoding       string // as DetectEncoding found it
	AmbiguousDates bool   // both day-first and month-first read every date: ask
	Notes          []string
}

// headerNames are the column headers banks use for each field, in the
// order they are preferred (the posting day before the value day), compared
// without regard to case, spaces or a trailing unit such as "(EUR)".
var headerNames = map[string][]string{
	"date": {"date", "transaction date", "trans. date", "posting date", "post date", "posted date", "booking date",
		"buchungstag", "buchungsdatum", "datum", "valuta", "valutadatum", "wertstellung", "date opération", "fecha"},
	"name": {"description", "payee", "name", "merchant", "beschreibung", "verwendungszweck", "buchungstext",
		"auftraggeber/empfänger", "empfänger", "beguenstigter/zahlungspflichtiger", "zahlungsempfänger", "details", "libellé"},
	"amount":   {"amount", "betrag", "umsatz", "value", "montant", "importe", "transaction amount"},
	"debit":    {"debit", "debit amount", "withdrawal", "withdrawals", "money out", "paid out", "soll", "ausgang", "lastschrift"},
	"credit":   {"credit", "credit amount", "deposit", "deposits", "money in", "paid in", "haben", "eingang", "gutschrift"},
	"category": {"category", "kategorie", "catégorie"},
	"notes":    {"memo", "notes", "note", "notiz"},
	"tags":     {"tags"},
}

// dateFormats are the layouts GuessSettings tries, as strptime formats;
// each day-first one beside its month-first twin.
var dateFormats = []string{"%Y-%m-%d", "%Y/%m/%d", "%d.%m.%Y", "%d.%m.%y", "%m/%d/%Y", "%d/%m/%Y", "%m/%d/%y", "%d/%m/%y",
	"%m-%d-%Y", "%d-%m-%Y", "%d %b %Y", "%b %d, %Y", "%d-%b-%Y"}

// GuessSettings reads the start of a file and fills what base leaves to
// the defaults: the encoding, the separator, the columns (from common
// headers: Date, Posting Date, Buchungstag, Description, Payee, Amount,
// Betrag, Debit and Credit…), the date format (from the date column's
// values), the number format and which sign money in has. It never fails:
// what it cannot tell stays as base has it.
func GuessSettings(data []byte, base Settings) (Settings, Guess) {
	s := base
	g := Guess{Encoding: DetectEncoding(data[:min(len(data), 64<<10)])}
	if g.Encoding == "utf-32" {
		return s, g
	}
	head := data[:min(len(data), 256<<10)]
	if len(head) < len(data) { // whole lines only, so that no character is cut
		if i := strings.LastIndexByte(string(head), '\n'); i > 0 {
			head = head[:min(len(head), i+1+boolInt(g.Encoding == UTF16))]
		}
	}
	text, err := decode(head, g.Encoding)
	if err != nil {
		return s, g
	}
	s.Encoding = g.Encoding
	s.ColSep = GuessColSep(text)
	r := newCSVReader(string(text), s.ColSep[0])
	var headers []string
	var rows [][]string
	for len(rows) < 200 {
		rec, err := r.read()
		if errors.Is(err, io.EOF) || err != nil {
			break
		}
		if blank(rec) {
			continue
		}
		if headers == nil {
			headers = cloneAll(rec)
			continue
		}
		rows = append(rows, cloneAll(rec))
	}
	if headers == nil {
		return s, g
	}
	col := map[string]int{}
	for field, names := range headerNames {
		col[field] = findHeader(headers, names)
	}
	set := func(dst **string, field string) {
		if i := col[field]; i >= 0 {
			h := strings.TrimSpace(headers[i])
			*dst = &h
		}
	}
	set(&s.DateColLabel, "date")
	set(&s.NameColLabel, "name")
	set(&s.CategoryColLabel, "category")
	set(&s.NotesColLabel, "notes")
	set(&s.TagsColLabel, "tags")
	if col["amount"] >= 0 {
		set(&s.AmountColLabel, "amount")
	} else if col["debit"] >= 0 && col["credit"] >= 0 {
		set(&s.DebitColLabel, "debit")
		set(&s.CreditColLabel, "credit")
		s.AmountColLabel = nil
	}
	if i := col["date"]; i >= 0 {
		if f, ambiguous := GuessDateFormat(column(rows, i), s.DateFormat); f != "" {
			s.DateFormat, g.AmbiguousDates = f, ambiguous
		}
	}
	amounts := column(rows, col["amount"])
	if col["amount"] < 0 {
		amounts = append(column(rows, col["debit"]), column(rows, col["credit"])...)
	}
	s.NumberFormat = GuessNumberFormat(amounts, s.NumberFormat)
	if col["amount"] >= 0 && mostlyPositive(amounts) {
		s.SignageConvention = InflowsNegative
		g.Notes = append(g.Notes, "Most amounts in the file are positive, so they are read as money out (as card statements write charges). If money in is positive in this file, change \"Amounts in the file\".")
	}
	if g.AmbiguousDates {
		g.Notes = append(g.Notes, "Every date in the file can be read day-first or month-first (like 03/04/2024). Check the date format: it is "+s.DateFormat+" now.")
	}
	return s, g
}

func cloneAll(rec []string) []string {
	out := make([]string, len(rec))
	for i, f := range rec {
		out[i] = strings.Clone(strings.TrimSpace(strings.TrimPrefix(f, "\uFEFF")))
	}
	return out
}

// findHeader is the first header that is one of names, in names' order.
func findHeader(headers []string, names []string) int {
	for _, n := range names {
		for i, h := range headers {
			h = strings.ToLower(strings.Join(strings.Fields(h), " "))
			if h == n || (strings.HasPrefix(h, n+" (") && strings.HasSuffix(h, ")")) {
				return i
			}
		}
	}
	return -1
}

// column is the non-empty values of column i of rows.
func column(rows [][]string, i int) []string {
	if i < 0 {
		return nil
	}
	var out []string
	for _, r := range rows {
		if i < len(r) && strings.TrimSpace(r[i]) != "" {
			out = append(out, strings.TrimSpace(r[i]))
		}
	}
	return out
}

// GuessDateFormat returns the strptime format that reads the most values
// (a bad date in the file does not hide the format of the others), and
// whether another format reads as many (day-first against month-first,
// like 03/04/2024): then prefer, if it is one of them, keeps its place.
func GuessDateFormat(values []string, prefer string) (format string, ambiguous bool) {
	best := 0
	var fits []string
	for _, f := range dateFormats {
		layout, err := strptimeLayout(f)
		if err != nil {
			continue
		}
		n := 0
		for _, v := range values {
			if _, err := time.Parse(layout, v); err == nil {
				n++
			}
		}
		switch {
		case n == 0 || n < best:
		case n > best:
			best, fits = n, []string{f}
		default:
			fits = append(fits, f)
		}
	}
	if len(fits) == 0 {
		return "", false
	}
	for _, f := range fits {
		if f == prefer {
			return f, len(fits) > 1
		}
	}
	return fits[0], len(fits) > 1
}

// GuessNumberFormat returns the number format the values are written in:
// a comma before the last two or one digits, with no point there, is a
// decimal comma. Values that tell nothing keep prefer.
func GuessNumberFormat(values []string, prefer string) string {
	comma, point, space := 0, 0, 0
	for _, v := range values {
		v = strings.TrimRight(v, " €$£¥EURUSD")
		i := strings.LastIndexAny(v, ".,")
		if i < 0 || len(v)-i-1 > 2 || len(v)-i-1 == 0 {
			continue
		}
		if v[i] == ',' {
			comma++
			if strings.ContainsAny(v[:i], " \u00a0\u202f") {
				space++
			}
		} else {
			point++
		}
	}
	switch {
	case comma > point && space > 0:
		return "1 234,56"
	case comma > point:
		return "1.234,56"
	case point > comma:
		return "1,234.56"
	}
	return prefer
}

// mostlyPositive reports whether three quarters of the amounts are
// positive, as a card's export writes its charges.
func mostlyPositive(values []string) bool {
	pos, n := 0, 0
	for _, v := range values {
		v = strings.TrimSpace(v)
		if strings.Trim(v, "0.,- ") == "" {
			continue
		}
		n++
		if !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "(") && !strings.HasSuffix(v, "-") {
			pos++
		}
	}
	return n >= 2 && pos*4 >= n*3
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
