// Package money holds exact amounts (Amount, ten-thousandths of a unit in an
// int64), their strict parsers and the ISO 4217 currencies that format them.
// It imports nothing of ours.
package money

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// Amount is an exact sum of money in ten-thousandths of the currency unit
// (4 decimal places, the precision the API accepts). It is stored as a
// bigint and never passes through a float.
type Amount int64

// AmountScale is the number of Amount units in one currency unit.
const AmountScale = 10_000

// MaxAmount is the largest amount, in absolute value, that a request, a
// form or an import may carry: 999,999,999,999.9999, twelve digits before
// the point. Sums must hold many amounts in an int64 of ten-thousandths
// (at most about 9.2e14 units): with this bound a balance of 922 amounts
// of the largest size, or of a million rows averaging 900 million units,
// still fits, where two amounts of the old fifteen digits overflowed. It
// leaves room for the largest real sums in currencies of many digits (a
// house in rials or dong). A balance that still does not fit is recorded
// as such (see RecalculateBalance), never wrapped.
const MaxAmount Amount = 1e12*AmountScale - 1

const (
	maxIntegerDigits  = 12 // MaxAmount
	maxFractionDigits = 4
)

// ErrBadAmount is returned for text that is not a plain decimal amount.
var ErrBadAmount = errors.New("amount must be a decimal number with at most 12 digits before the point and 4 after it")

// ParseAmount reads a plain decimal: an optional minus, digits without
// leading zeros, and at most four digits after a point. Exponents, signs
// other than a leading minus, separators and spaces are refused, so that
// what a client sends is exactly what is stored.
func ParseAmount(s string) (Amount, error) {
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	intPart, frac, hasPoint := strings.Cut(s, ".")
	if !digitsOnly(intPart) || len(intPart) > maxIntegerDigits ||
		(len(intPart) > 1 && intPart[0] == '0') ||
		(hasPoint && (!digitsOnly(frac) || len(frac) > maxFractionDigits)) {
		return 0, ErrBadAmount
	}
	n, err := strconv.ParseInt(intPart, 10, 64)
	if err != nil {
		return 0, ErrBadAmount
	}
	var f int64
	if hasPoint {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", maxFractionDigits-len(frac)), 10, 64)
	}
	v := n*AmountScale + f // at most MaxAmount: twelve digits cannot overflow
	if neg {
		v = -v
	}
	return Amount(v), nil
}

func digitsOnly(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ParseAmountJSON reads an amount sent as a JSON number (12.5) or a JSON
// string ("12.50"); anything else is ErrBadAmount.
func ParseAmountJSON(raw json.RawMessage) (Amount, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 {
		return 0, ErrBadAmount
	}
	if raw[0] == '"' {
		if len(raw) >= 2 && raw[len(raw)-1] == '"' && !bytes.ContainsAny(raw[1:len(raw)-1], "\\\"") {
			return ParseAmount(string(raw[1 : len(raw)-1])) // no escapes: the text is the bytes
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, ErrBadAmount
		}
		return ParseAmount(s)
	}
	return ParseAmount(string(raw))
}

// Abs returns the absolute value.
func (a Amount) Abs() Amount {
	if a < 0 {
		return -a
	}
	return a
}

// String renders the amount as a plain decimal with four places.
func (a Amount) String() string {
	var b strings.Builder
	if a < 0 {
		b.WriteByte('-')
	}
	abs := uint64(a.Abs())
	b.WriteString(strconv.FormatUint(abs/AmountScale, 10))
	frac := strconv.FormatUint(abs%AmountScale+AmountScale, 10)[1:]
	b.WriteByte('.')
	b.WriteString(frac)
	return b.String()
}

// Minor converts the amount to the currency's minor units (cents for USD,
// yen for JPY, fils for KWD), rounding half away from zero.
func (a Amount) Minor(c Currency) int64 {
	div := int64(1)
	for i := c.Exponent; i < maxFractionDigits; i++ {
		div *= 10
	}
	v := int64(a.Abs())
	q, r := v/div, v%div
	if r*2 >= div {
		q++
	}
	if a < 0 {
		return -q
	}
	return q
}

// Format renders the amount as display money in the English convention
// whatever the reader's locale: "$1,234.56", "-$25.00", "¥1,235".
func (a Amount) Format(c Currency) string {
	minor := a.Minor(c)
	neg := minor < 0
	if neg {
		minor = -minor
	}
	digits := strconv.FormatInt(minor, 10)
	if c.Exponent > 0 {
		if pad := c.Exponent + 1 - len(digits); pad > 0 {
			digits = strings.Repeat("0", pad) + digits
		}
	}
	intPart := digits[:len(digits)-c.Exponent]
	frac := digits[len(digits)-c.Exponent:]

	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(c.Symbol)
	if c.spaced() {
		b.WriteByte(' ')
	}
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if c.Exponent > 0 {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// ParseAmountRounded reads an upstream decimal (an aggregator's amount) the
// way ParseAmount does, but accepts more than four decimals and rounds
// them half away from zero; the caller keeps the raw text alongside.
func ParseAmountRounded(s string) (Amount, error) {
	_, frac, hasPoint := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if !hasPoint || len(frac) <= maxFractionDigits {
		return ParseAmount(s)
	}
	if !digitsOnly(frac) {
		return 0, ErrBadAmount
	}
	kept, rest := frac[:maxFractionDigits], frac[maxFractionDigits:]
	a, err := ParseAmount(s[:len(s)-len(frac)] + kept)
	if err != nil {
		return 0, err
	}
	if rest[0] >= '5' { // half away from zero
		if strings.HasPrefix(s, "-") {
			a--
		} else {
			a++
		}
	}
	if a.Abs() > MaxAmount { // 999999999999.99995 rounds past the bound
		return 0, ErrBadAmount
	}
	return a, nil
}
