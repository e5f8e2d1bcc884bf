package web

import (
	"strings"
	"unicode/utf8"
)

// HasControl reports control characters (NUL included), which no email
// holds and the database would refuse.
func HasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// Clip is CleanText for an optional column: nil when nothing is left.
func Clip(s string, n int) *string {
	s = CleanText(s, n)
	if s == "" {
		return nil
	}
	return &s
}

// CleanText makes a string from outside (a header, an identity provider's
// claim) storable in both databases: valid UTF-8, no control characters
// (PostgreSQL refuses NUL), at most n bytes, cut between characters.
func CleanText(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return strings.Clone(s)
}

// NonEmpty is s as an optional column: nil when empty.
func NonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
