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

// unsafeRune reports the characters that change how the text around them
// reads without being seen: C0 and C1 controls, DEL, and the
// bidirectional marks, embeddings, overrides and isolates (U+061C,
// U+200E/F, U+202A–U+202E, U+2066–U+2069), with which a name can show
// "Google" while holding something else.
func unsafeRune(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == 0x061c || r == 0x200e || r == 0x200f ||
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// HasUnsafe reports a control or bidirectional-formatting character
// (unsafeRune) in s, which a name a person must trust may not hold.
func HasUnsafe(s string) bool {
	return strings.IndexFunc(s, unsafeRune) >= 0
}

// Plain is s without its control and bidirectional-formatting characters
// (unsafeRune), for showing a name from outside that was stored before
// such characters were refused: the screens' "plain" function.
func Plain(s string) string {
	return strings.Map(func(r rune) rune {
		if unsafeRune(r) {
			return -1
		}
		return r
	}, s)
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
