package bridge

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// Rows is one remote account's transactions, validated for the importer.
type Rows struct {
	Rows     []models.ImportRow
	Rejected int
	Skipped  int // duplicates of an id within the answer
	Warnings []string
}

var plainDecimal = regexp.MustCompile(`^[+-]?(\d{1,15}(\.\d*)?|\.\d+)$`)

// ParseRemoteAmount reads a Bridge decimal exactly: an optional sign,
// digits and an optional fraction; more than 4 decimals are rounded half
// away from zero (rounded reports it). Exponents, NaN, separators,
// symbols and empty values are refused.
func ParseRemoteAmount(s string) (a money.Amount, rounded bool, err error) {
	s = strings.TrimSpace(s)
	if !plainDecimal.MatchString(s) {
		return 0, false, money.ErrBadAmount
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	intPart, frac, _ := strings.Cut(s, ".")
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	norm := intPart
	if frac != "" {
		norm += "." + frac
	}
	if neg {
		norm = "-" + norm
	}
	a, err = money.ParseAmountRounded(norm)
	if a == 0 {
		a = 0 // no negative zero
	}
	return a, len(frac) > 4, err
}

// cleanText drops control characters and collapses whitespace, then cuts
// to max characters.
func cleanText(s string, max int) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max])
	}
	return s
}

// NormalizeTransactions validates an account's transactions (spec §9, step
// 2 and 3): a bad row is rejected with a warning naming it, and of one id
// sent twice the most final version is kept.
func NormalizeTransactions(ts []Transaction, now time.Time) Rows {
	var out Rows
	index := map[string]int{}
	latest := now.AddDate(0, 0, 400).Unix()
	for _, t := range ts {
		id := strings.TrimSpace(string(t.ID))
		if id == "" || len(id) > 255 {
			out.Rejected++
			out.Warnings = append(out.Warnings, "a transaction without a usable id was rejected")
			continue
		}
		reject := func(why string) {
			out.Rejected++
			out.Warnings = append(out.Warnings, fmt.Sprintf("transaction %s rejected: %s", cleanText(id, 80), why))
		}
		amount, rounded, err := ParseRemoteAmount(string(t.Amount))
		if err != nil {
			reject("unreadable amount")
			continue
		}
		if rounded {
			out.Warnings = append(out.Warnings, fmt.Sprintf("transaction %s: amount rounded to 4 decimals", cleanText(id, 80)))
		}
		if t.Posted == BadEpoch || t.TransactedAt == BadEpoch {
			reject("unreadable date")
			continue
		}
		var when int64
		switch {
		case t.Posted > 0:
			when = int64(t.Posted)
		case t.TransactedAt > 0:
			when = int64(t.TransactedAt)
		default:
			reject("no date")
			continue
		}
		if when < 86400 || when > latest {
			reject("date out of range")
			continue
		}
		pending := t.Pending || (t.Posted == 0 && t.TransactedAt > 0)
		name := cleanText(t.Payee, 255)
		if name == "" {
			name = cleanText(t.Description, 255)
		}
		if name == "" {
			name = "Unknown transaction"
		}
		row := models.ImportRow{ExternalID: id, Date: civil.DateOf(time.Unix(when, 0)), Amount: -amount, Name: name, Pending: pending,
			Meta: models.ProviderMeta{Amount: string(t.Amount), Payee: t.Payee, Description: t.Description, Memo: t.Memo,
				Posted: int64(t.Posted), TransactedAt: int64(t.TransactedAt)}}
		if notes := cleanText(t.Memo, 1000); notes != "" {
			row.Notes = &notes
		}
		if i, seen := index[id]; seen {
			out.Skipped++
			if moreFinal(row, out.Rows[i]) {
				out.Rows[i] = row
			}
			continue
		}
		index[id] = len(out.Rows)
		out.Rows = append(out.Rows, row)
	}
	return out
}

// moreFinal: posted beats pending, then the later posted, then the later
// occurrence.
func moreFinal(a, b models.ImportRow) bool {
	if a.Pending != b.Pending {
		return !a.Pending
	}
	return a.Meta.Posted >= b.Meta.Posted
}

// NormalizeCurrency returns an ISO 4217 code, upper-cased, or XXX with
// the original kept for anything else (a custom-currency URL, an unknown
// code, nothing).
func NormalizeCurrency(s string) (code, raw string) {
	up := strings.ToUpper(strings.TrimSpace(s))
	if _, ok := money.LookupCurrency(up); ok && len(up) == 3 {
		return up, ""
	}
	return "XXX", s
}

// SanitizeMessage makes a Bridge error text safe to show: tags stripped,
// control characters removed, at most 500 characters.
func SanitizeMessage(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return cleanText(b.String(), 500)
}
