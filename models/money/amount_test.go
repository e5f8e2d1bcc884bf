package money_test

import (
	"encoding/json"
	"testing"

	"coffer/models/money"
)

func TestParseAmount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want money.Amount
		ok   bool
	}{
		{"0", 0, true},
		{"12", 120000, true},
		{"12.5", 125000, true},
		{"12.50", 125000, true},
		{"-0.0001", -1, true},
		{"1234.5678", 12345678, true},
		{"999999999999.9999", money.MaxAmount, true},
		{"-999999999999.9999", -money.MaxAmount, true},
		{"1000000000000", 0, false},
		{"900000000000000", 0, false}, // two of these overflowed a balance
		{"922337203685477.5807", 0, false},
		{"999999999999999", 0, false},
		{"1000000000000000", 0, false},
		{"1.00000", 0, false},
		{"1e3", 0, false},
		{"1E3", 0, false},
		{"1,234", 0, false},
		{"12abc", 0, false},
		{"NaN", 0, false},
		{"Infinity", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1.", 0, false},
		{".5", 0, false},
		{"01", 0, false},
		{"-", 0, false},
		{"", 0, false},
		{"--1", 0, false},
		{"0x10", 0, false},
		{"١٢", 0, false},
	} {
		got, err := money.ParseAmount(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseAmount(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestParseAmountJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want money.Amount
		ok   bool
	}{
		{`12.5`, 125000, true},
		{`"12.50"`, 125000, true},
		{` 7 `, 70000, true},
		{`1e3`, 0, false},
		{`"1e3"`, 0, false},
		{`true`, 0, false},
		{`null`, 0, false},
		{`[1]`, 0, false},
		{`{"a":1}`, 0, false},
		{`"12\u0000"`, 0, false},
		{`"`, 0, false},
	} {
		got, err := money.ParseAmountJSON(json.RawMessage(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseAmountJSON(%s) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestAmountFormatAndMinor(t *testing.T) {
	cur := func(c string) money.Currency {
		v, ok := money.LookupCurrency(c)
		if !ok {
			t.Fatalf("unknown %s", c)
		}
		return v
	}
	for _, tc := range []struct {
		amount string
		cur    string
		format string
		minor  int64
	}{
		{"1234.56", "USD", "$1,234.56", 123456},
		{"-25", "USD", "-$25.00", -2500},
		{"1000.12", "EUR", "€1,000.12", 100012},
		{"1234.5", "JPY", "¥1,235", 1235},
		{"-1234.5", "JPY", "-¥1,235", -1235},
		{"0.005", "USD", "$0.01", 1},
		{"-0.005", "USD", "-$0.01", -1},
		{"0.0049", "USD", "$0.00", 0},
		{"1.2345", "KWD", "KWD 1.235", 1235},
		{"1234567.1", "CHF", "CHF 1,234,567.10", 123456710},
		{"0.5", "CLF", "CLF 0.5000", 5000},
		{"999999999999.9999", "USD", "$1,000,000,000,000.00", 100000000000000},
	} {
		a, err := money.ParseAmount(tc.amount)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Format(cur(tc.cur)); got != tc.format {
			t.Errorf("%s %s: Format = %q, want %q", tc.amount, tc.cur, got, tc.format)
		}
		if got := a.Minor(cur(tc.cur)); got != tc.minor {
			t.Errorf("%s %s: Minor = %d, want %d", tc.amount, tc.cur, got, tc.minor)
		}
	}
	if _, ok := money.LookupCurrency("usd"); !ok {
		t.Error("lower-case code refused")
	}
	for _, bad := range []string{"XYZ", "US", "USDD", ""} {
		if _, ok := money.LookupCurrency(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzParseAmount checks that the parser never panics, and that whatever
// it accepts renders back to the same value.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"0", "12.5", "-0.0001", "1e3", "922337203685477.5807", "1,234", "", "-", "00.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := money.ParseAmount(s)
		if err != nil {
			return
		}
		back, err := money.ParseAmount(a.String())
		if err != nil || back != a {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, a, a.String(), back, err)
		}
		_ = a.Format(money.MustCurrency("JPY"))
		_ = a.Minor(money.MustCurrency("KWD"))
		if _, err := money.ParseAmountJSON(json.RawMessage(s)); err != nil && s == a.String() {
			t.Fatalf("%q accepted as text but not as a JSON number", s)
		}
	})
}

func TestParseAmountRounded(t *testing.T) {
	for in, want := range map[string]money.Amount{
		"-19.99": -199900, "1.23456": 12346, "1.23454": 12345, "-1.23455": -12346, "0.00005": 1, "-0.00004999": 0,
		"12.50000000": 125000, "999999999999.99994": money.MaxAmount, "-999999999999.99994": -money.MaxAmount,
	} {
		if got, err := money.ParseAmountRounded(in); err != nil || got != want {
			t.Errorf("ParseAmountRounded(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"1e3", "12.3a4567", "", "-", "1,00", "922337203685477.58079", "999999999999.99995", "-999999999999.99995"} {
		if _, err := money.ParseAmountRounded(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
