// Package importfile reads the files an import takes (CSV, OFX/QFX, QIF)
// into rows, within bounds on size, columns, line length and rows. It is
// pure: of ours it imports only money (amounts are parsed as money parses
// them), and it touches no database.
package importfile

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The import types: the reference app's TransactionImport (CSV) and our
// OFX/QFX and QIF imports.
const (
	CSV = "TransactionImport"
	OFX = "OfxImport"
	QIF = "QifImport"
)

// Types lists the import types in the order screens offer them.
var Types = []string{CSV, OFX, QIF}

// The sign conventions of an amount column: inflows_positive (money in is
// positive in the file, the reference app's default) or inflows_negative.
const (
	InflowsPositive = "inflows_positive"
	InflowsNegative = "inflows_negative"
)

// NumberFormats are the number formats a file's amounts may use, named by
// an example as the reference app names them; each maps to its decimal
// separator and thousands delimiter.
var NumberFormats = map[string][2]string{
	"1,234.56": {".", ","},
	"1.234,56": {",", "."},
	"1 234,56": {",", " "},
	"1,234":    {"", ","},
}

// NumberFormatNames lists NumberFormats' keys in the order screens offer them.
var NumberFormatNames = []string{"1,234.56", "1.234,56", "1 234,56", "1,234"}

// Import file limits.
const (
	// MaxFileBytes is the largest file an import takes; a larger
	// upload is refused before it is read.
	MaxFileBytes = 16 << 20
	// MaxRows is the most rows one import holds.
	MaxRows = 200_000
	// MaxColumns is the most columns a CSV record may have; a wider one
	// is refused while it is read.
	MaxColumns = 1_000
	// MaxLineBytes bounds a CSV record (with the lines of its quoted
	// fields) and a QIF line.
	MaxLineBytes = 1 << 20
	// defaultRowName names a row whose file gives it no name.
	defaultRowName = "Imported item"
)

// Settings are how an import reads its file: the reference app's
// column labels and formats. Column labels are matched to the CSV header
// without regard to case or surrounding spaces.
type Settings struct {
	ColSep             string  `bun:"col_sep"`
	DateColLabel       *string `bun:"date_col_label"`
	AmountColLabel     *string `bun:"amount_col_label"`
	NameColLabel       *string `bun:"name_col_label"`
	CategoryColLabel   *string `bun:"category_col_label"`
	TagsColLabel       *string `bun:"tags_col_label"`
	NotesColLabel      *string `bun:"notes_col_label"`
	ExternalIDColLabel *string `bun:"external_id_col_label"`
	// DebitColLabel and CreditColLabel name the two columns of a file that
	// gives money out and money in apart; with both, no amount column is
	// needed (and one given is ignored).
	DebitColLabel     *string `bun:"debit_col_label"`
	CreditColLabel    *string `bun:"credit_col_label"`
	Encoding          string  `bun:"encoding"`      // one of Encodings; "" detects it from the bytes
	DateFormat        string  `bun:"date_format"`   // strptime, as the reference app: %m/%d/%Y
	NumberFormat      string  `bun:"number_format"` // a NumberFormats key
	SignageConvention string  `bun:"signage_convention"`
}

// DefaultSettings are the reference app's defaults. Without a
// name_col_label, a column named "name" is the name, if the file has one.
func DefaultSettings() Settings {
	date, amount := "date", "amount"
	return Settings{ColSep: ",", DateColLabel: &date, AmountColLabel: &amount,
		DateFormat: "%m/%d/%Y", NumberFormat: "1,234.56", SignageConvention: InflowsPositive}
}

// Check returns a message for every setting that cannot be used.
func (s Settings) Check() []string {
	var problems []string
	switch s.ColSep {
	case ",", ";", "\t", "|":
	default:
		problems = append(problems, "col_sep must be one of: , ; | or a tab")
	}
	if _, err := strptimeLayout(s.DateFormat); err != nil {
		problems = append(problems, err.Error())
	}
	if _, ok := NumberFormats[s.NumberFormat]; !ok {
		problems = append(problems, "number_format must be one of: "+strings.Join(NumberFormatNames, " | "))
	}
	if _, ok := NormalizeEncoding(s.Encoding); !ok {
		problems = append(problems, "encoding must be one of: "+strings.Join(Encodings, ", "))
	}
	if (s.DebitColLabel == nil) != (s.CreditColLabel == nil) {
		problems = append(problems, "debit_col_label and credit_col_label go together: name both columns")
	}
	if s.SignageConvention != InflowsPositive && s.SignageConvention != InflowsNegative {
		problems = append(problems, "signage_convention must be inflows_positive or inflows_negative")
	}
	for _, c := range []struct {
		name string
		v    *string
	}{{"date_col_label", s.DateColLabel}, {"amount_col_label", s.AmountColLabel}, {"name_col_label", s.NameColLabel},
		{"category_col_label", s.CategoryColLabel}, {"tags_col_label", s.TagsColLabel}, {"notes_col_label", s.NotesColLabel},
		{"external_id_col_label", s.ExternalIDColLabel}, {"debit_col_label", s.DebitColLabel}, {"credit_col_label", s.CreditColLabel}} {
		if c.v != nil && utf8.RuneCountInString(*c.v) > 255 {
			problems = append(problems, c.name+" is too long (maximum is 255 characters)")
		}
	}
	return problems
}

// Row is one row of an import file, as read and as understood.
type Row struct {
	Position   int // from 1, in file order
	Line       int // the line of the file it starts on, from 1 (CSV; 0 for other types)
	RawDate    string
	RawAmount  string
	Name       string
	Category   string
	Tags       string // "|"-separated, as the reference app
	Notes      string
	ExternalID string  // FITID for OFX, the external id column for CSV
	Date       *string // YYYY-MM-DD, as models.Date
	Amount     *int64  // ten-thousandths, as models.Amount, the ledger's sign: positive is money out
	Problems   []string
}

// File is what a file holds: its CSV header, its rows, and the
// problems of the file as a whole (a mapped column it lacks) that stop it
// being imported as configured.
type File struct {
	Headers  []string
	Rows     []Row // empty when read by Each, which hands them out instead
	Problems []string
}

// InvalidRows counts the rows that cannot be imported.
func (p *File) InvalidRows() int {
	n := 0
	for i := range p.Rows {
		if len(p.Rows[i].Problems) > 0 {
			n++
		}
	}
	return n
}

// Parse reads a file of the import type with its settings. An
// error (an *Error) means the file cannot be read at all: not text,
// not the format, too large; problems a person can fix by mapping columns
// are in the result.
func Parse(data []byte, typ string, s Settings) (*File, error) {
	var rows []Row
	p, err := Each(data, typ, s, func(r Row) error {
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	p.Rows = rows
	return p, nil
}

// Each reads a file as Parse does, but hands each row to each, in file
// order, instead of keeping them all: a caller that stores rows in
// batches holds one batch at a time, not the whole file's rows (which
// cost five times the file). An error of each stops the reading and is
// returned. A row may be handed out before a later one shows the file
// cannot be read (more than MaxRows rows, a line too long): the caller
// drops what it stored when Each fails, as it does when the returned
// File has Problems.
func Each(data []byte, typ string, s Settings, each func(Row) error) (*File, error) {
	if len(data) > MaxFileBytes {
		return nil, invalid(fmt.Sprintf("file is larger than %d MiB", MaxFileBytes>>20))
	}
	enc, ok := NormalizeEncoding(s.Encoding)
	if !ok {
		return nil, invalid("encoding must be one of: " + strings.Join(Encodings, ", "))
	}
	text, err := importText(data, enc)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(text) == "" {
		return nil, invalid("file is empty")
	}
	var p *File
	switch typ {
	case CSV:
		p, err = parseCSV(text, s, each)
	case OFX:
		p, err = parseOFX(text, each)
	case QIF:
		p, err = parseQIF(text, s, each)
	default:
		return nil, invalid("type must be one of: " + strings.Join(Types, ", "))
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// importText returns a file as UTF-8 text without a byte order mark, read
// in its encoding (detected when empty; see DetectEncoding). A file with
// NUL or many control bytes is binary, whatever its name says.
func importText(data []byte, enc string) (string, error) {
	data, err := decode(data, enc)
	if err != nil {
		return "", err
	}
	control := 0
	for _, b := range data {
		if b == 0 {
			return "", invalid("file is not a text file (it holds binary data)")
		}
		if b < 0x20 && b != '\n' && b != '\r' && b != '\t' && b != '\f' {
			control++
		}
	}
	if control > 0 && control*100 > len(data) {
		return "", invalid("file is not a text file (it holds binary data)")
	}
	return string(data), nil
}

// strptimeLayout turns a strptime date format (%d/%m/%Y) into a Go
// layout. Only the date directives are known; a literal may be
// punctuation or a space, never a letter or digit that Go's layout would
// read as part of its reference date.
func strptimeLayout(f string) (string, error) {
	bad := fmt.Errorf("date_format %q is not supported: use %%d, %%e, %%m, %%Y, %%y, %%b or %%B with - / . , ' or spaces between", f)
	if f == "" || len(f) > 32 {
		return "", bad
	}
	var b strings.Builder
	var day, month, year bool
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			if !strings.ContainsRune(" -/.,'", rune(c)) {
				return "", bad
			}
			b.WriteByte(c)
			continue
		}
		i++
		if i < len(f) && f[i] == '-' { // %-d: no padding; our layouts never need it
			i++
		}
		if i >= len(f) {
			return "", bad
		}
		switch f[i] {
		case 'd', 'e':
			b.WriteString("2")
			day = true
		case 'm':
			b.WriteString("1")
			month = true
		case 'Y':
			b.WriteString("2006")
			year = true
		case 'y':
			b.WriteString("06")
			year = true
		case 'b', 'h':
			b.WriteString("Jan")
			month = true
		case 'B':
			b.WriteString("January")
			month = true
		default:
			return "", bad
		}
	}
	if !day || !month || !year {
		return "", bad
	}
	return b.String(), nil
}

// parseFileDate reads a date of a file with the import's layout.
func parseFileDate(raw, layout, format string) (string, error) {
	t, err := time.Parse(layout, strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("date %q does not match the format %s", raw, format)
	}
	d, err := dayOf(t)
	if err != nil {
		return "", fmt.Errorf("date %q is out of range (1900 to 2199)", raw)
	}
	return d, nil
}

// parseFileNumber reads an amount of a file in its number format, as the
// reference app does: currency signs and letters are dropped, the
// thousands delimiter removed and the decimal separator made a point. A
// leading or trailing minus and parentheses mark a negative. More than
// four decimals round half away from zero.
func parseFileNumber(raw, format string) (int64, error) {
	f := NumberFormats[format]
	sep, delim := f[0], f[1]
	s := strings.TrimSpace(raw)
	neg := false
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		neg, s = true, s[1:len(s)-1]
	}
	// Letters and currency signs may surround the number (USD 12.00,
	// 12,00 €), never sit inside it (1e5 is not 15).
	first := strings.IndexFunc(s, unicode.IsDigit)
	last := strings.LastIndexFunc(s, unicode.IsDigit)
	if first >= 0 && strings.IndexFunc(s[first:last+1], func(r rune) bool { return unicode.IsLetter(r) || unicode.Is(unicode.Sc, r) }) >= 0 {
		return 0, fmt.Errorf("amount %q is not a number in the format %s", raw, format)
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '-' || r == '−':
			if neg {
				return 0, fmt.Errorf("amount %q is not a number", raw)
			}
			neg = true
		case string(r) == sep:
			b.WriteByte('.')
		case string(r) == delim, delim == " " && unicode.IsSpace(r), r == '+', r == '\'' && delim == ",":
		case unicode.IsLetter(r) || unicode.Is(unicode.Sc, r) || unicode.IsSpace(r):
		default:
			return 0, fmt.Errorf("amount %q is not a number in the format %s", raw, format)
		}
	}
	digits := b.String()
	if !strings.ContainsAny(digits, "0123456789") || strings.Count(digits, ".") > 1 {
		return 0, fmt.Errorf("amount %q is not a number in the format %s", raw, format)
	}
	num := strings.TrimSuffix(strings.TrimLeft(digits, "0"), ".")
	if num == "" || num[0] == '.' {
		num = "0" + num
	}
	if neg {
		num = "-" + num
	}
	a, err := parseDecimal(num)
	if err != nil {
		return 0, fmt.Errorf("amount %q is not a number in the format %s (at most 12 digits before the point)", raw, format)
	}
	return a, nil
}

// ledgerAmount turns an amount of the file into the ledger's sign
// (positive is money out).
func ledgerAmount(a int64, signage string) int64 {
	if signage == InflowsNegative {
		return a
	}
	return -a
}

// clip shortens s to at most n characters.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// finishRow fills a row's name and checks its lengths.
func finishRow(r *Row) {
	r.Name = clip(strings.Join(strings.Fields(r.Name), " "), 255)
	if r.Name == "" {
		r.Name = defaultRowName
	}
	r.Category = clip(strings.TrimSpace(r.Category), 255)
	r.Notes = clip(strings.TrimSpace(r.Notes), 10_000)
	r.Tags = clip(strings.TrimSpace(r.Tags), 2_000)
	if utf8.RuneCountInString(r.ExternalID) > 255 {
		r.Problems = append(r.Problems, "external id is longer than 255 characters")
		r.ExternalID = clip(r.ExternalID, 255)
	}
	for _, s := range []*string{&r.Name, &r.Category, &r.Notes, &r.Tags, &r.ExternalID, &r.RawDate, &r.RawAmount} {
		*s = strings.ReplaceAll(*s, "\x00", "")
	}
	r.RawDate, r.RawAmount = clip(r.RawDate, 255), clip(r.RawAmount, 255)
}

// itoa is strconv.Itoa, short for messages.
func itoa(n int) string { return strconv.Itoa(n) }
