package civil_test

import (
	"testing"
	"time"

	"coffer/models/civil"
)

func TestParseDate(t *testing.T) {
	for in, ok := range map[string]bool{
		"2024-02-29": true, "2023-02-29": false, "2024-02-30": false, "1900-01-01": true, "1899-12-31": false,
		"2199-12-31": true, "2200-01-01": false, "2024-1-01": false, "2024-01-01T00:00:00Z": false, "": false,
	} {
		if _, err := civil.ParseDate(in); (err == nil) != ok {
			t.Errorf("ParseDate(%q) err=%v, want ok=%v", in, err, ok)
		}
	}
}

// FuzzParseDate checks that accepted dates are canonical.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2024-02-29", "2024-02-30", "0000-00-00", "2024-1-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := civil.ParseDate(s)
		if err == nil && string(d) != s {
			t.Fatalf("%q parsed to %q", s, d)
		}
	})
}

// TestDateScan: a date reads from each form a driver gives, and NULL
// reads as the zero Date (nullzero's "" written as NULL, read back).
func TestDateScan(t *testing.T) {
	day := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for _, src := range []any{day, "2026-11-28", []byte("2026-11-28 00:00:00+00:00"), nil} {
		d := civil.Date("1999-01-01")
		if err := d.Scan(src); err != nil {
			t.Fatalf("Scan(%v): %v", src, err)
		}
		if want := civil.Date("2026-11-28"); src == nil && d != "" || src != nil && d != want {
			t.Fatalf("Scan(%v) = %q", src, d)
		}
	}
	var d civil.Date
	if err := d.Scan(42); err == nil {
		t.Fatal("Scan(42) accepted")
	}
}
