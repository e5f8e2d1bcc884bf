package importfile

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// A row's amount and date are in the ledger's units, which models keeps
// (models.Amount, models.Date): this package imports nothing of ours, so
// it holds them as their underlying types and checks them the same way.
const (
	// amountScale is the number of amount units in one currency unit.
	amountScale = 10_000
	// MaxAmount is models.MaxAmount: twelve digits before the point.
	MaxAmount int64 = 1e12*amountScale - 1
)

var errAmount = errors.New("amount out of range")

// parseDecimal reads a plain decimal (an optional minus, digits without
// leading zeros, an optional point and digits) into ten-thousandths,
// rounding more than four decimals half away from zero, as
// models.ParseAmountRounded does.
func parseDecimal(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	intPart, frac, hasPoint := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if !digitsOnly(intPart) || len(intPart) > 12 || (len(intPart) > 1 && intPart[0] == '0') || (hasPoint && !digitsOnly(frac)) {
		return 0, errAmount
	}
	n, err := strconv.ParseInt(intPart, 10, 64)
	if err != nil {
		return 0, errAmount
	}
	up := len(frac) > 4 && frac[4] >= '5'
	frac = (frac + "0000")[:4]
	f, _ := strconv.ParseInt(frac, 10, 64)
	v := n*amountScale + f
	if up {
		v++
	}
	if v > MaxAmount {
		return 0, errAmount
	}
	if neg {
		v = -v
	}
	return v, nil
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

// dayOf is the day of t as the ledger keeps days (YYYY-MM-DD, 1900 to
// 2199, as models.ParseDate accepts), or an error.
func dayOf(t time.Time) (string, error) {
	if t.Year() < 1900 || t.Year() > 2199 {
		return "", errors.New("date out of range")
	}
	return t.Format(time.DateOnly), nil
}
