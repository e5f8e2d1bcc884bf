package importfile

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// No maintained Go library reads QIF, so this is a small parser of the
// part that matters here: the transactions of a bank, cash, credit card or
// other asset/liability account. A record is a run of lines, each a
// one-letter code and its value, ended by "^"; "!" lines switch sections.
// Records of other sections (categories, classes, memorized payees,
// account lists) are skipped; investment accounts are refused.

// qifAccountTypes are the !Type: sections that hold plain transactions.
var qifAccountTypes = map[string]bool{"bank": true, "cash": true, "ccard": true, "oth a": true, "oth l": true}

// parseQIF reads a QIF file. The name is the payee (P), else the memo (M);
// the amount (T, else U) is negative for money out, as Quicken writes it;
// L is the category ([Name] is a transfer and is kept as written). Dates
// are read in the order of the import's date format (day first for
// %d/%m/%Y), with Quicken's two-digit years ('24 is 2024).
func parseQIF(text string, s Settings, each func(Row) error) (*File, error) {
	p := &File{}
	count := 0
	var emitErr error
	order := qifDateOrder(s.DateFormat)
	section := ""
	inTransactions := false
	sawType := false
	var cur *Row
	var fields int
	flush := func() {
		if cur != nil && fields > 0 && emitErr == nil {
			finishQIF(cur, s)
			emitErr = each(*cur)
		}
		cur, fields = nil, 0
	}
	for n := 0; text != ""; n++ {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		if len(line) > MaxLineBytes {
			return nil, invalid(fmt.Sprintf("line %d is longer than %d KiB", n+1, MaxLineBytes>>10))
		}
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if line[0] == '!' {
			if flush(); emitErr != nil {
				return nil, emitErr
			}
			section = strings.ToLower(strings.TrimSpace(line[1:]))
			switch {
			case strings.HasPrefix(section, "type:"):
				kind := strings.TrimSpace(strings.TrimPrefix(section, "type:"))
				if strings.HasPrefix(kind, "invst") {
					return nil, invalid("QIF investment accounts cannot be imported; export the account's cash transactions instead")
				}
				inTransactions = qifAccountTypes[kind]
				sawType = sawType || inTransactions
			case strings.HasPrefix(section, "option:"), strings.HasPrefix(section, "clear:"):
				// options do not change the section
			default:
				inTransactions = false // !Account and the like
			}
			continue
		}
		if !inTransactions {
			if !sawType && section == "" {
				return nil, invalid(fmt.Sprintf("file is not a QIF file: line %d comes before any !Type: header", n+1))
			}
			continue
		}
		code, value := line[0], strings.TrimSpace(line[1:])
		if code == '^' {
			if flush(); emitErr != nil {
				return nil, emitErr
			}
			continue
		}
		if cur == nil {
			if count >= MaxRows {
				return nil, invalid("file has more than " + itoa(MaxRows) + " rows")
			}
			count++
			cur = &Row{Position: count}
		}
		fields++
		switch code {
		case 'D':
			cur.RawDate = value
			if d, err := parseQIFDate(value, order); err != nil {
				cur.Problems = append(cur.Problems, err.Error())
			} else {
				cur.Date = &d
			}
		case 'T':
			cur.RawAmount = value
		case 'U':
			if cur.RawAmount == "" {
				cur.RawAmount = value
			}
		case 'P':
			cur.Name = value
		case 'M':
			cur.Notes = value
		case 'L':
			cur.Category = value
		}
	}
	if flush(); emitErr != nil {
		return nil, emitErr
	}
	if !sawType {
		return nil, invalid("file is not a QIF file: it has no !Type:Bank, Cash, CCard, Oth A or Oth L section")
	}
	return p, nil
}

func finishQIF(r *Row, s Settings) {
	if r.RawDate == "" {
		r.Problems = append(r.Problems, "date (D) is required")
	}
	if r.RawAmount == "" {
		r.Problems = append(r.Problems, "amount (T) is required")
	} else if a, err := parseFileNumber(r.RawAmount, s.NumberFormat); err != nil {
		r.Problems = append(r.Problems, err.Error())
	} else {
		a = -a // Quicken writes money out as negative
		r.Amount = &a
	}
	if r.Name == "" {
		r.Name, r.Notes = r.Notes, ""
	}
	finishRow(r)
}

// qifDateOrder is the order of day, month and year that a strptime
// format names: "dmy", "ymd" or the default "mdy".
func qifDateOrder(format string) string {
	var order []byte
	for i := 0; i+1 < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		switch format[i+1] {
		case 'd', 'e':
			order = append(order, 'd')
		case 'm', 'b', 'B':
			order = append(order, 'm')
		case 'Y', 'y':
			order = append(order, 'y')
		}
	}
	if s := string(order); s == "dmy" || s == "ymd" {
		return s
	}
	return "mdy"
}

// parseQIFDate reads a QIF date: three numbers separated by / - . ' or
// spaces, in the given order; a two-digit year after an apostrophe is in
// the 2000s, otherwise 00-49 are 2000s and 50-99 1900s.
func parseQIFDate(raw, order string) (string, error) {
	bad := fmt.Errorf("date %q is not a date", raw)
	apostrophe := strings.Contains(raw, "'")
	parts := strings.FieldsFunc(raw, func(r rune) bool { return strings.ContainsRune("/-.' ", r) })
	if len(parts) != 3 {
		return "", bad
	}
	nums := make([]int, 3)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || len(p) > 4 {
			return "", bad
		}
		nums[i] = n
	}
	var d, m, y int
	yearLen := 0
	switch order {
	case "dmy":
		d, m, y, yearLen = nums[0], nums[1], nums[2], len(parts[2])
	case "ymd":
		y, m, d, yearLen = nums[0], nums[1], nums[2], len(parts[0])
	default:
		m, d, y, yearLen = nums[0], nums[1], nums[2], len(parts[2])
	}
	if yearLen <= 2 {
		switch {
		case apostrophe || y < 50:
			y += 2000
		default:
			y += 1900
		}
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d || int(t.Month()) != m || t.Year() != y {
		return "", bad
	}
	date, err := dayOf(t)
	if err != nil {
		return "", fmt.Errorf("date %q is out of range (1900 to 2199)", raw)
	}
	return date, nil
}
