package screens

import (
	"testing"

	"coffer/models/money"
)

func TestNumberFormatParse(t *testing.T) {
	for _, tc := range []struct {
		n    numberFormat
		in   string
		want money.Amount
		ok   bool
	}{
		{pointDecimals, "12.50", 12_5000, true},
		{pointDecimals, "1,234.56", 1234_5600, true},
		{pointDecimals, "1,234,567", 1234567_0000, true},
		{pointDecimals, " 7 ", 7_0000, true},
		{pointDecimals, "12,50", 0, false}, // a comma groups thousands: twelve and a half is 12.50
		{pointDecimals, "1,2345.00", 0, false},
		{pointDecimals, ",123", 0, false},
		{pointDecimals, "1234,567.1", 0, false},
		{pointDecimals, "12.", 0, false},
		{pointDecimals, "-5", 0, false},
		{pointDecimals, "1.2.3", 0, false},
		{pointDecimals, "12.34567", 0, false},
		{commaDecimals, "12,50", 12_5000, true},
		{commaDecimals, "1.234,56", 1234_5600, true},
		{commaDecimals, "1234,5", 1234_5000, true},
		{commaDecimals, "1.234", 1234_0000, true},
		{commaDecimals, "12.50", 0, false}, // a point groups thousands here
		{commaDecimals, "12,5,0", 0, false},
		{commaDecimals, "1.234,5.6", 0, false},
		{spaceGroups, "1 234,56", 1234_5600, true},
		{spaceGroups, "1\u00a0234,56", 1234_5600, true},
		{spaceGroups, "1\u202f234", 1234_0000, true},
		{spaceGroups, "12 50", 0, false},
		{spaceGroups, "12.50", 0, false},
	} {
		got, ok := tc.n.parse(tc.in)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%s parse(%q) = %v, %v; want %v, %v", tc.n.Example, tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// What a form shows is read back as the same amount in every format.
func TestNumberFormatRoundTrip(t *testing.T) {
	for _, n := range []numberFormat{pointDecimals, commaDecimals, spaceGroups} {
		f := &form{numbers: n}
		for _, a := range []money.Amount{0, 1, 12_5000, 1234_5600, 999_999_999_999_9999} {
			v := f.amountValue(a)
			if got, ok := n.parse(v); !ok || got != a {
				t.Errorf("%s: %v shown as %q reads back as %v, %v", n.Example, a, v, got, ok)
			}
		}
	}
}

func TestNumberFormatOf(t *testing.T) {
	if numberFormatOf("EUR") != commaDecimals || numberFormatOf("SEK") != spaceGroups || numberFormatOf("USD") != pointDecimals ||
		numberFormatOf("XYZ") != pointDecimals {
		t.Fatal("a currency's default format")
	}
}

// No text makes the parser panic, and what it accepts is a plain
// positive decimal whatever the format.
func FuzzNumberFormat(f *testing.F) {
	for _, s := range []string{"12.50", "1,234.56", "1.234,56", "1 234,56", "12,50", ",", "..", "1\u00a0234"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, n := range []numberFormat{pointDecimals, commaDecimals, spaceGroups} {
			if plain, ok := n.normalize(s); ok {
				if a, ok := n.parse(s); ok {
					if _, err := money.ParseAmount(plain); err != nil || a < 0 {
						t.Fatalf("%s: %q accepted as %q", n.Example, s, plain)
					}
				}
			}
		}
	})
}
