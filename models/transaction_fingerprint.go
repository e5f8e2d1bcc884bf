package models

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"coffer/models/civil"
	"coffer/models/money"
)

// Fingerprint is what a row was when it first arrived, the key every door's
// duplicate check compares: its day, its amount and the bank's own text,
// as "YYYY-MM-DD|amount in ten-thousandths|text" (the migration that added
// the column writes the same form). A person's edits (a rename, a new
// category) never change it, so an overlapping file imported again still
// finds the row.
func Fingerprint(d civil.Date, a money.Amount, text string) string {
	text = strings.TrimSpace(text)
	if utf8.RuneCountInString(text) > 255 {
		text = string([]rune(text)[:255])
	}
	return string(d) + "|" + strconv.FormatInt(int64(a), 10) + "|" + text
}

// fingerprintOf is a row's fingerprint: the one taken when it arrived, or,
// for a row written without one, what it is now.
func fingerprintOf(t *Transaction) string {
	if t.Fingerprint != nil {
		return *t.Fingerprint
	}
	return Fingerprint(t.Date, t.Amount, t.Name)
}

// takeFingerprint records a row's fingerprint as it arrives, before the
// rules rename it.
func takeFingerprint(t *Transaction) {
	if t.Fingerprint == nil {
		fp := Fingerprint(t.Date, t.Amount, t.Name)
		t.Fingerprint = &fp
	}
}

// madeFingerprint marks a row coffer made rather than received: the side
// of a transfer a person recorded, or that a rule mirrored into the other
// account. It has no bank text, so the bank's own row of the movement,
// when it comes, matches it by amount within a few days (see
// rowMatcher.match) instead of doubling it.
func madeFingerprint(t *Transaction) {
	fp := Fingerprint(t.Date, t.Amount, "")
	t.Fingerprint = &fp
}

// splitFingerprint reads a fingerprint back; ok is false for one that is
// not of the form.
func splitFingerprint(fp string) (day civil.Date, amount int64, text string, ok bool) {
	d, rest, ok1 := strings.Cut(fp, "|")
	a, text, ok2 := strings.Cut(rest, "|")
	n, err := strconv.ParseInt(a, 10, 64)
	if !ok1 || !ok2 || err != nil {
		return "", 0, "", false
	}
	return civil.Date(d), n, text, true
}

// sameBankText reports whether two texts of the bank, normalized (see
// NormalizedName: case and spacing ignored), name the same movement:
// equal, or one the start of the other (an OFX NAME is cut at 32
// characters where the CSV of the same bank gives the whole text). The
// matcher normalizes each text once, not once for each comparison.
func sameBankText(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return utf8.RuneCountInString(a) >= 8 && strings.HasPrefix(b, a)
}
