package models

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/uuid"
	"golang.org/x/text/unicode/norm"
)

// ProviderMeta is an imported row as the provider sent it. The importer
// compares it, never a user's edit, when it decides whether a row changed
// or which pending row a posted one settles.
type ProviderMeta struct {
	Amount       string `json:"amount"`
	Payee        string `json:"payee,omitempty"`
	Description  string `json:"description"`
	Memo         string `json:"memo,omitempty"`
	Posted       int64  `json:"posted"`
	TransactedAt int64  `json:"transacted_at,omitempty"`
}

// normalizeText is NFKC, lower case, every run of characters that are
// neither letters nor digits turned into one space, trimmed.
func normalizeText(s string) string {
	s = strings.ToLower(norm.NFKC.String(s))
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		} else {
			space = true
		}
	}
	return b.String()
}

// contentKey identifies a posted row by what it is rather than by its id,
// so that a row the Bridge re-issues under a new id is recognised.
func contentKey(accountID uuid.UUID, r *ImportRow) string {
	h := sha256.New()
	for _, part := range []string{accountID.String(), string(r.Date), r.Amount.String(), normalizeText(r.Meta.Description),
		strconv.FormatInt(r.Meta.Posted, 10), strconv.FormatInt(r.Meta.TransactedAt, 10), r.Meta.Payee, r.Meta.Memo} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Words that say how a card was used, not where.
var matchStopwords = map[string]bool{"pending": true, "pos": true, "debit": true, "purchase": true, "card": true, "ach": true}

func matchTokens(s string) map[string]bool {
	out := map[string]bool{}
	for _, tok := range strings.Fields(normalizeText(s)) {
		tok = strings.Map(func(r rune) rune {
			if unicode.IsDigit(r) {
				return -1
			}
			return r
		}, tok)
		if len([]rune(tok)) >= 2 && !matchStopwords[tok] {
			out[tok] = true
		}
	}
	return out
}

// similar decides whether a pending row and a posted one describe the
// same purchase: one token set holds the other, or they share at least
// half their tokens, or the payees are the same.
func similar(a, b ProviderMeta) bool {
	if pa, pb := normalizeText(a.Payee), normalizeText(b.Payee); pa != "" && pa == pb {
		return true
	}
	ta, tb := matchTokens(a.Description), matchTokens(b.Description)
	if len(ta) == 0 || len(tb) == 0 {
		return false
	}
	common := 0
	for t := range ta {
		if tb[t] {
			common++
		}
	}
	if common == len(ta) || common == len(tb) {
		return true
	}
	return float64(common)/float64(len(ta)+len(tb)-common) >= 0.5
}
