package money_test

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"coffer/models/money"
)

func mustRate(t testing.TB, s string) money.Rate {
	t.Helper()
	r, err := money.ParseRate(s)
	if err != nil {
		t.Fatalf("ParseRate(%q): %v", s, err)
	}
	return r
}

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" : refused
	}{
		{"1.0823", "1.0823"},
		{"1.08230", "1.0823"},
		{"163.45", "163.45"},
		{"0.000058", "0.000058"},
		{"1", "1"},
		{"0.123456789012345678", "0.123456789012345678"},
		{"999999999999.5", "999999999999.5"},
		{"0", ""},
		{"0.000", ""},
		{"-1.2", ""},
		{"+1.2", ""},
		{"1e3", ""},
		{"1.", ""},
		{".5", ""},
		{"01.5", ""},
		{"1,5", ""},
		{" 1.5", ""},
		{"1.1234567890123456789", ""}, // 19 decimals
		{"1000000000000", ""},         // 13 digits
		{"NaN", ""},
		{"", ""},
	} {
		r, err := money.ParseRate(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("ParseRate(%q) = %s, want an error", tc.in, r)
			}
			continue
		}
		if err != nil || r.String() != tc.want {
			t.Errorf("ParseRate(%q) = %q, %v; want %q", tc.in, r.String(), err, tc.want)
		}
	}
}

func TestParseRateNumber(t *testing.T) {
	for in, want := range map[string]string{
		"5.8e-05": "0.000058", "1.2E+2": "120", "1.0823": "1.0823", "3e0": "3",
	} {
		r, err := money.ParseRateNumber(in)
		if err != nil || r.String() != want {
			t.Errorf("ParseRateNumber(%q) = %q, %v; want %q", in, r.String(), err, want)
		}
	}
	for _, in := range []string{"1e-40", "1e999999999", "-1e2", "1e", "e5", "1e+-2", "1e++0", "1e--2", "1e-+2", "1e 2", "1e-19", "1e13", "0e5"} {
		if r, err := money.ParseRateNumber(in); err == nil {
			t.Errorf("ParseRateNumber(%q) = %s, want an error", in, r)
		}
	}
}

// TestConvert is the rounding table: one rounding, to the ten-thousandth,
// half away from zero, on both signs and through exact inverses.
func TestConvert(t *testing.T) {
	for _, tc := range []struct {
		amount  string
		rate    string
		inverse bool
		want    string
	}{
		{"100", "1.0823", false, "108.2300"},
		{"0.0001", "0.5", false, "0.0001"},       // exactly half a unit: away from zero
		{"-0.0001", "0.5", false, "-0.0001"},     // and on the negative side
		{"0.0001", "0.4999", false, "0.0000"},    // below half
		{"-0.0001", "0.4999", false, "0.0000"},   // below half, negative
		{"0.0003", "0.5", false, "0.0002"},       // 1.5 units
		{"-0.0003", "0.5", false, "-0.0002"},     // -1.5 units
		{"12.3456", "1.00005", false, "12.3462"}, // 12.34621728
		{"1", "0.000058", false, "0.0001"},       // 0.58 units
		{"100", "1.0823", true, "92.3958"},       // 100/1.0823 = 92.39582…
		{"-100", "1.0823", true, "-92.3958"},
		{"1", "3", true, "0.3333"},
		{"2", "3", true, "0.6667"},      // 0.66666…
		{"0.0001", "2", true, "0.0001"}, // 0.5 units through the inverse: away from zero
		{"-0.0001", "2", true, "-0.0001"},
		{"999999999999.9999", "163.45", false, "163449999999999.9837"},
		{"0", "1.5", false, "0.0000"},
	} {
		a, err := money.ParseAmount(tc.amount)
		if err != nil {
			t.Fatal(err)
		}
		r := mustRate(t, tc.rate)
		if tc.inverse {
			r = r.Inverse()
		}
		got, err := money.Convert(a, r)
		if err != nil || got.String() != tc.want {
			t.Errorf("Convert(%s, %s inverse=%v) = %s, %v; want %s", tc.amount, tc.rate, tc.inverse, got, err, tc.want)
		}
	}
	if _, err := money.Convert(money.Amount(math.MaxInt64), mustRate(t, "2")); !errors.Is(err, money.ErrConvertOverflow) {
		t.Errorf("overflow: err = %v", err)
	}
	if _, err := money.Convert(1, money.Rate{}); err == nil {
		t.Error("the zero Rate converted")
	}
}

func TestRateInverseString(t *testing.T) {
	for in, want := range map[string]string{"1.0823": "0.923958237088", "2": "0.5", "163.45": "0.00611807892322", "0.000058": "17241.3793103"} {
		if got := mustRate(t, in).Inverse().String(); got != want {
			t.Errorf("1/%s = %s, want %s", in, got, want)
		}
	}
}

func TestRateScanValue(t *testing.T) {
	r := mustRate(t, "1.50")
	v, err := r.Value()
	if err != nil || v != "1.5" {
		t.Fatalf("Value = %v, %v", v, err)
	}
	var back money.Rate
	if err := back.Scan([]byte("1.5")); err != nil || !back.Equal(r) {
		t.Fatalf("Scan = %s, %v", back, err)
	}
	if err := back.Scan("-1"); err == nil {
		t.Fatal("a negative stored rate scanned")
	}
	if err := back.Scan(1.5); err == nil {
		t.Fatal("a float scanned")
	}
}

// FuzzConvert checks the conversion against the exact product: the result
// is within half a unit of it, rounds away from zero at exactly half, is
// odd in the amount, and the rate's text reads back to the same rate.
func FuzzConvert(f *testing.F) {
	for _, s := range []struct {
		a int64
		r string
		i bool
	}{{1, "0.5", false}, {-3, "0.5", false}, {1000000, "1.0823", true}, {math.MaxInt64, "1", false},
		{math.MinInt64 + 1, "0.999999999999999999", false}, {123456789, "163.45", true}, {7, "5.8e-05", false}} {
		f.Add(s.a, s.r, s.i)
	}
	f.Fuzz(func(t *testing.T, a int64, text string, inverse bool) {
		r, err := money.ParseRateNumber(text)
		if err != nil {
			return
		}
		if back, err := money.ParseRate(r.String()); err != nil || !back.Equal(r) {
			t.Fatalf("%q -> %s does not read back: %v", text, r, err)
		}
		if inverse {
			r = r.Inverse()
		}
		got, err := money.Convert(money.Amount(a), r)
		exact := new(big.Rat).Mul(new(big.Rat).SetInt64(a), ratOf(t, r, inverse, text))
		if err != nil {
			if !errors.Is(err, money.ErrConvertOverflow) {
				t.Fatal(err)
			}
			lim := new(big.Rat).SetInt64(math.MaxInt64)
			if new(big.Rat).Abs(exact).Cmp(lim) < 0 {
				t.Fatalf("%d × %s: overflow reported for %s", a, r, exact.FloatString(4))
			}
			return
		}
		diff := new(big.Rat).Sub(new(big.Rat).SetInt64(int64(got)), exact)
		half := big.NewRat(1, 2)
		if c := new(big.Rat).Abs(diff).Cmp(half); c > 0 || c == 0 && diff.Sign() != exact.Sign() {
			t.Fatalf("%d × %s = %d, exact %s", a, r, got, exact.FloatString(6))
		}
		if a != math.MinInt64 {
			if neg, err := money.Convert(money.Amount(-a), r); err != nil || neg != -got {
				t.Fatalf("Convert(-%d) = %d, %v; want %d", a, neg, err, -got)
			}
		}
	})
}

// ratOf is the exact value of the fuzzed rate, read independently of Rate.
func ratOf(t *testing.T, r money.Rate, inverse bool, text string) *big.Rat {
	t.Helper()
	x, ok := new(big.Rat).SetString(text)
	if !ok {
		t.Fatalf("big.Rat refused %q, which ParseRateNumber took as %s", text, r)
	}
	if inverse {
		x.Inv(x)
	}
	return x
}

func TestRateBetween(t *testing.T) {
	for _, c := range []struct {
		from, to money.Amount
		want     string
		ok       bool
	}{
		{1000000, 923500, "0.9235", true},
		{-1000000, 1082300, "1.0823", true},
		{30000, 10000, "0.333333333333", true},
		{0, 10000, "", false},
		{10000, 0, "", false},
	} {
		r, ok := money.RateBetween(c.from, c.to)
		if ok != c.ok || r.String() != c.want {
			t.Errorf("RateBetween(%d, %d) = %q, %v; want %q, %v", c.from, c.to, r.String(), ok, c.want, c.ok)
		}
	}
	want, _ := money.ParseRate("1.08")
	for _, c := range []struct {
		rate string
		ok   bool
	}{{"1.08", true}, {"1.134", true}, {"1.026", true}, {"1.1341", false}, {"1.0259", false}} {
		r, _ := money.ParseRate(c.rate)
		if r.Within(want, 5) != c.ok {
			t.Errorf("%s within 5%% of 1.08 = %v, want %v", c.rate, !c.ok, c.ok)
		}
	}
}
