package importfile

import (
	"errors"
	"io"
	"strings"
)

// parseCSV reads a CSV file record by record (csvReader): the first record
// that is not blank is the header; blank lines and records whose every
// field is empty are skipped; quoted fields may hold separators and
// newlines.
func parseCSV(text string, s Settings) (*File, error) {
	sep := byte(',')
	if s.ColSep != "" {
		if len(s.ColSep) != 1 || strings.ContainsAny(s.ColSep, "\"\r\n") {
			return nil, invalid("col_sep must be one of: , ; | or a tab")
		}
		sep = s.ColSep[0]
	}
	r := newCSVReader(text, sep)
	p := &File{}
	var cols csvColumns
	layout, layoutErr := strptimeLayout(s.DateFormat)
	for {
		rec, err := r.read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if blank(rec) {
			continue
		}
		if p.Headers == nil {
			p.Headers = make([]string, len(rec))
			for i, h := range rec {
				p.Headers[i] = strings.Clone(strings.TrimSpace(strings.TrimPrefix(h, "\uFEFF")))
			}
			cols, p.Problems = mapColumns(p.Headers, s)
			if layoutErr != nil {
				p.Problems = append(p.Problems, layoutErr.Error())
			}
			continue
		}
		if len(p.Rows) >= MaxRows {
			return nil, invalid("file has more than " + itoa(MaxRows) + " rows")
		}
		row := Row{Position: len(p.Rows) + 1, Line: r.start}
		field := func(i int) string {
			if i < 0 || i >= len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[i])
		}
		row.RawDate, row.RawAmount = field(cols.date), field(cols.amount)
		row.Name, row.Category, row.Tags = field(cols.name), field(cols.category), field(cols.tags)
		row.Notes, row.ExternalID = field(cols.notes), field(cols.externalID)
		if cols.debit >= 0 {
			row.RawAmount = debitCredit(field(cols.debit), field(cols.credit))
		}
		if len(p.Problems) == 0 {
			readDateAndAmount(&row, layout, s, cols.debit >= 0)
		}
		// A line with more fields than the header was cut or shifted by a
		// separator inside a field: its values cannot be trusted.
		if extra := extraFields(rec, len(p.Headers)); extra > 0 {
			row.Problems = append(row.Problems, "line "+itoa(row.Line)+" has "+itoa(len(p.Headers)+extra)+
				" fields but the header has "+itoa(len(p.Headers))+" (a separator inside an unquoted value?)")
		}
		finishRow(&row)
		p.Rows = append(p.Rows, row)
	}
	if p.Headers == nil {
		return nil, invalid("file has no header row")
	}
	return p, nil
}

// extraFields counts the fields of a record past the header's that are
// not empty (a trailing separator is no harm).
func extraFields(rec []string, headers int) int {
	n := 0
	for i := headers; i < len(rec); i++ {
		n = i - headers + 1
		if strings.TrimSpace(rec[i]) == "" && i == len(rec)-1 {
			n--
		}
	}
	return max(n, 0)
}

// debitCredit is the amount of a line of a debit and credit layout, as
// text the amount parser reads, money in positive: the credit as it is,
// or the debit made negative (a debit written negative already stays so).
// Both filled is kept as "debit | credit" for readDateAndAmount to refuse.
func debitCredit(debit, credit string) string {
	debit, credit = strings.TrimSpace(debit), strings.TrimSpace(credit)
	// Some banks fill the other column with a zero.
	if strings.Trim(debit, "0.,- ") == "" {
		debit = ""
	}
	if strings.Trim(credit, "0.,- ") == "" {
		credit = ""
	}
	switch {
	case debit != "" && credit != "":
		return debit + " | " + credit
	case credit != "":
		return strings.TrimPrefix(strings.TrimPrefix(credit, "+"), "-")
	case debit != "":
		return "-" + strings.TrimPrefix(strings.TrimPrefix(debit, "+"), "-")
	}
	return ""
}

// readDateAndAmount parses a row's date and amount, noting what is wrong.
func readDateAndAmount(row *Row, layout string, s Settings, split bool) {
	if row.RawDate == "" {
		row.Problems = append(row.Problems, "date is required")
	} else if d, err := parseFileDate(row.RawDate, layout, s.DateFormat); err != nil {
		row.Problems = append(row.Problems, err.Error())
	} else {
		row.Date = &d
	}
	if split {
		s.SignageConvention = InflowsPositive // debitCredit made money in positive
	}
	switch {
	case row.RawAmount == "" && split:
		row.Problems = append(row.Problems, "debit or credit is required")
	case strings.Contains(row.RawAmount, " | ") && split:
		row.Problems = append(row.Problems, "both debit and credit are filled: keep one")
	case row.RawAmount == "":
		row.Problems = append(row.Problems, "amount is required")
	default:
		readAmount(row, s)
	}
}

// readAmount parses a row's amount in the file's number format.
func readAmount(row *Row, s Settings) {
	if a, err := parseFileNumber(row.RawAmount, s.NumberFormat); err != nil {
		row.Problems = append(row.Problems, err.Error())
	} else {
		a = ledgerAmount(a, s.SignageConvention)
		row.Amount = &a
	}
}

func blank(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// csvColumns are the header positions of the mapped columns, -1 when not
// mapped.
type csvColumns struct {
	date, amount, name, category, tags, notes, externalID int
	debit, credit                                         int // -1 without a debit and credit layout
}

// mapColumns finds each mapped label in the header. Date and amount are
// required; a label given but absent from the header is a problem.
func mapColumns(headers []string, s Settings) (csvColumns, []string) {
	var problems []string
	find := func(setting string, label *string, required bool) int {
		if label == nil || strings.TrimSpace(*label) == "" {
			if required {
				problems = append(problems, setting+" is required: name the column that holds it")
			}
			return -1
		}
		want := strings.ToLower(strings.TrimSpace(*label))
		for i, h := range headers {
			if strings.ToLower(h) == want {
				return i
			}
		}
		problems = append(problems, setting+" "+quote(*label)+" is not a column of the file (columns: "+columnList(headers)+")")
		return -1
	}
	c := csvColumns{date: find("date_col_label", s.DateColLabel, true), amount: -1, debit: -1, credit: -1}
	if s.DebitColLabel != nil && s.CreditColLabel != nil {
		c.debit = find("debit_col_label", s.DebitColLabel, true)
		c.credit = find("credit_col_label", s.CreditColLabel, true)
	} else {
		c.amount = find("amount_col_label", s.AmountColLabel, true)
	}
	c.name = find("name_col_label", nameLabel(headers, s.NameColLabel), false)
	c.category = find("category_col_label", s.CategoryColLabel, false)
	c.tags = find("tags_col_label", s.TagsColLabel, false)
	c.notes = find("notes_col_label", s.NotesColLabel, false)
	c.externalID = find("external_id_col_label", s.ExternalIDColLabel, false)
	return c, problems
}

// shownColumns is how many of a file's columns a message names.
const shownColumns = 20

// columnList names a file's first columns, each clipped, and counts the
// rest: a message stays short however wide the file.
func columnList(headers []string) string {
	var b strings.Builder
	for i, h := range headers[:min(len(headers), shownColumns)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(clip(h, 60))
	}
	if len(headers) > shownColumns {
		b.WriteString(", and " + itoa(len(headers)-shownColumns) + " more")
	}
	return b.String()
}

func quote(s string) string { return "\"" + clip(s, 60) + "\"" }

// nameLabel is the name column's label: the one set, else "name" when the
// file has such a column.
func nameLabel(headers []string, set *string) *string {
	if set != nil {
		return set
	}
	for _, h := range headers {
		if strings.EqualFold(h, "name") {
			return &h
		}
	}
	return nil
}

// GuessColSep returns the separator a CSV text most likely uses: the one
// of , ; tab and | that its first non-blank line holds most of (comma on a
// tie). Screens use it for a file uploaded without settings.
func GuessColSep(data []byte) string {
	text := strings.TrimPrefix(string(data[:min(len(data), 64<<10)]), "\uFEFF")
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		best, n := ",", strings.Count(line, ",")
		for _, sep := range []string{";", "\t", "|"} {
			if c := strings.Count(line, sep); c > n {
				best, n = sep, c
			}
		}
		return best
	}
	return ","
}
