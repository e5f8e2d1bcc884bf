package money

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// Rate is an exchange rate: how many units of one currency one unit of
// another buys. It is exact (a rational number, never a float): a rate
// read from text keeps every digit it was given, and the inverse of a
// stored rate is exact too, so that a conversion rounds once, at the end.
// The zero Rate is no rate; ParseRate never returns it.
type Rate struct {
	r *big.Rat // positive; never changed once made
}

// Limits of a rate's text: a rate is positive, at most twelve digits
// before the point and eighteen after it (ECB rates carry six significant
// digits, and the smallest real cross rates need about ten decimals).
const (
	maxRateIntegerDigits  = 12
	maxRateFractionDigits = 18
	maxRateExponent       = 30 // upstream numbers such as 5.8e-05
)

// ErrBadRate is returned for text that is not a positive decimal rate.
var ErrBadRate = errors.New("rate must be a positive decimal number with at most 12 digits before the point and 18 after it")

// ErrConvertOverflow is returned when a converted amount leaves the range
// an Amount holds.
var ErrConvertOverflow = errors.New("converted amount is too large")

// ParseRate reads a plain positive decimal ("1.0823", "163.45", "0.0061"):
// digits, at most one point, no sign, no exponent, no spaces.
func ParseRate(s string) (Rate, error) {
	intPart, frac, hasPoint := strings.Cut(s, ".")
	if !digitsOnly(intPart) || len(intPart) > maxRateIntegerDigits || (len(intPart) > 1 && intPart[0] == '0') ||
		(hasPoint && (!digitsOnly(frac) || len(frac) > maxRateFractionDigits)) {
		return Rate{}, ErrBadRate
	}
	r, ok := new(big.Rat).SetString(intPart + "." + frac + "0")
	if !ok || r.Sign() <= 0 {
		return Rate{}, ErrBadRate
	}
	return Rate{r: r}, nil
}

// ParseRateNumber reads a rate as an upstream service writes it in JSON:
// a plain decimal, or one with an exponent ("5.8e-05"), within the same
// bounds as ParseRate once written out.
func ParseRateNumber(s string) (Rate, error) {
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	if !hasExp {
		return ParseRate(s)
	}
	// The exponent is JSON's: one optional sign, then digits ("1e++0" and
	// "1e+-2" are not numbers).
	digits := strings.TrimPrefix(strings.TrimPrefix(exp, "+"), "-")
	if len(exp)-len(digits) > 1 || digits == "" || !digitsOnly(digits) {
		return Rate{}, ErrBadRate
	}
	e, err := strconv.Atoi(exp)
	if err != nil || e < -maxRateExponent || e > maxRateExponent {
		return Rate{}, ErrBadRate
	}
	m, err := ParseRate(mant)
	if err != nil {
		return Rate{}, err
	}
	pow := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(e))), nil))
	r := new(big.Rat)
	if e >= 0 {
		r.Mul(m.r, pow)
	} else {
		r.Quo(m.r, pow)
	}
	// Within bounds once written out: what is stored reads back by ParseRate.
	return ParseRate(decimalText(r))
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// IsZero reports whether r is the zero Rate (no rate).
func (r Rate) IsZero() bool { return r.r == nil }

// Inverse returns 1/r, exactly.
func (r Rate) Inverse() Rate {
	if r.r == nil {
		return r
	}
	return Rate{r: new(big.Rat).Inv(r.r)}
}

// Equal reports whether r and o are the same number.
func (r Rate) Equal(o Rate) bool {
	if r.r == nil || o.r == nil {
		return r.r == o.r
	}
	return r.r.Cmp(o.r) == 0
}

// String renders the rate as a plain decimal without trailing zeros: all
// of its digits when it has at most eighteen after the point (every rate
// that was parsed), else rounded to twelve significant digits (a derived
// inverse such as 1/1.0823).
func (r Rate) String() string {
	if r.r == nil {
		return ""
	}
	return decimalText(r.r)
}

// decimalText writes a positive rational as a decimal: exact when it ends
// within maxRateFractionDigits, else to twelve significant digits.
func decimalText(r *big.Rat) string {
	places := maxRateFractionDigits
	if s := r.FloatString(places); !ratEqualsDecimal(r, s) {
		// Twelve significant digits: below 1, as many places as there are
		// zeros after the point, plus twelve; above, what the integer
		// digits leave of twelve.
		places = 12
		if r.Cmp(big.NewRat(1, 1)) < 0 {
			for x := new(big.Rat).Set(r); x.Cmp(big.NewRat(1, 10)) < 0; x.Mul(x, big.NewRat(10, 1)) {
				places++
			}
		} else {
			places = max(places-len(new(big.Int).Quo(r.Num(), r.Denom()).String()), 0)
		}
	}
	s := r.FloatString(places) // rounded half away from zero
	if places == 0 {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// ratEqualsDecimal reports whether the decimal text s is exactly r.
func ratEqualsDecimal(r *big.Rat, s string) bool {
	d, ok := new(big.Rat).SetString(s)
	return ok && d.Cmp(r) == 0
}

// Value implements driver.Valuer: a rate is stored as its decimal text,
// exact on PostgreSQL and SQLite alike (SQLite's numeric is a float).
func (r Rate) Value() (driver.Value, error) {
	if r.r == nil {
		return nil, errors.New("money: no rate to store")
	}
	return r.String(), nil
}

// Scan implements sql.Scanner for the text Value writes.
func (r *Rate) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("money: cannot scan %T into Rate", src)
	}
	p, err := ParseRate(s)
	if err != nil {
		return fmt.Errorf("money: stored rate %q: %w", s, err)
	}
	*r = p
	return nil
}

// Convert returns a × r, rounded once to the ten-thousandth (the Amount
// unit), half away from zero. A result outside the int64 range is
// ErrConvertOverflow; the zero Rate converts nothing (ErrBadRate).
func Convert(a Amount, r Rate) (Amount, error) {
	if r.r == nil {
		return 0, ErrBadRate
	}
	if v, ok := convert64(a, r.r); ok {
		return v, nil
	}
	return convertBig(a, r.r)
}

// convert64 is Convert in 128-bit integer arithmetic, for a rate whose
// numerator and denominator fit 64 bits (every parsed rate and its
// inverse): a report converts every row, and this is several times
// faster than big.Int. ok is false when the result may not fit; then
// convertBig decides.
func convert64(a Amount, r *big.Rat) (Amount, bool) {
	num, den := r.Num(), r.Denom()
	if !num.IsUint64() || !den.IsUint64() {
		return 0, false
	}
	n, d := num.Uint64(), den.Uint64()
	ua := uint64(a)
	if a < 0 {
		ua = -ua // two's complement: right for math.MinInt64 too
	}
	hi, lo := bits.Mul64(ua, n)
	if hi >= d {
		return 0, false
	}
	q, rem := bits.Div64(hi, lo, d)
	if rem >= d-rem { // 2·rem ≥ d without overflow: half away from zero
		q++
	}
	if q == 0 || q > math.MaxInt64 {
		return 0, q == 0
	}
	if a < 0 {
		return -Amount(q), true
	}
	return Amount(q), true
}

// convertBig is Convert in big.Int arithmetic, for any rate.
func convertBig(a Amount, r *big.Rat) (Amount, error) {
	num := new(big.Int).Mul(big.NewInt(int64(a)), r.Num())
	neg := num.Sign() < 0
	num.Abs(num)
	den := r.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Lsh(m, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	if !q.IsInt64() || q.Int64() == math.MinInt64 {
		return 0, ErrConvertOverflow
	}
	return Amount(q.Int64()), nil
}

// RateBetween is the rate that two amounts of one movement imply: what
// arrived (to) per unit of what left (from), signs ignored, exactly. ok
// is false when either is zero.
func RateBetween(from, to Amount) (r Rate, ok bool) {
	if from == 0 || to == 0 {
		return Rate{}, false
	}
	return Rate{r: new(big.Rat).SetFrac(big.NewInt(int64(to.Abs())), big.NewInt(int64(from.Abs())))}, true
}

// Within reports whether r lies within pct percent of want, either side.
func (r Rate) Within(want Rate, pct int64) bool {
	if r.r == nil || want.r == nil {
		return false
	}
	diff := new(big.Rat).Sub(r.r, want.r)
	diff.Abs(diff)
	limit := new(big.Rat).Mul(want.r, big.NewRat(pct, 100))
	return diff.Cmp(limit) <= 0
}

// Ratio returns r as num/den in lowest terms, when both fit an int64:
// a database converting in 64-bit integers (a × num / den, rounded as
// Convert rounds) then gets the same answer as Convert for every amount
// whose |a| × num fits too. ok is false for the zero Rate or a larger
// fraction.
func (r Rate) Ratio() (num, den int64, ok bool) {
	if r.r == nil || !r.r.Num().IsInt64() || !r.r.Denom().IsInt64() {
		return 0, 0, false
	}
	return r.r.Num().Int64(), r.r.Denom().Int64(), true
}
