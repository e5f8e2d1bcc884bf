package importfile

import (
	"errors"
	"time"

	"coffer/models/money"
)

// A row's amount is in the ledger's units, ten-thousandths of the currency
// unit (money.Amount), held as its underlying type.

// MaxAmount is money.MaxAmount: twelve digits before the point.
const MaxAmount = int64(money.MaxAmount)

var errAmount = errors.New("amount out of range")

// parseDecimal reads a plain decimal (an optional minus, digits without
// leading zeros, an optional point and digits) into ten-thousandths, by
// money's own parser: more than four decimals are rounded half away from
// zero.
func parseDecimal(s string) (int64, error) {
	a, err := money.ParseAmountRounded(s)
	if err != nil {
		return 0, errAmount
	}
	return int64(a), nil
}

// dayOf is the day of t as the ledger keeps days (YYYY-MM-DD, 1900 to
// 2199, as models.ParseDate accepts), or an error.
func dayOf(t time.Time) (string, error) {
	if t.Year() < 1900 || t.Year() > 2199 {
		return "", errors.New("date out of range")
	}
	return t.Format(time.DateOnly), nil
}
