package jobs

import (
	"testing"

	"coffer/models/money"
)

// FuzzParseSeries: whatever a rates service answers, the parser never
// panics, and what it accepts is a series of real days in order, each
// with a positive rate that reads back from its text.
func FuzzParseSeries(f *testing.F) {
	for _, s := range []string{
		`{"amount":1.0,"base":"EUR","start_date":"2026-01-02","end_date":"2026-01-05","rates":{"2026-01-02":{"USD":1.0823},"2026-01-05":{"USD":1.09}}}`,
		`{"amount":1,"base":"EUR","rates":{"2026-01-02":{"USD":5.8e-05}}}`,
		`{"base":"EUR","rates":{}}`,
		`{"base":"EUR","rates":{"2026-02-30":{"USD":1}}}`,
		`{"base":"EUR","rates":{"2026-01-02":{"USD":-1}}}`,
		`{"base":"EUR","rates":{"2026-01-02":{"USD":1,"GBP":2}}}`,
		`<html>`, `null`, `{"base":"EUR","rates":null}`, `{} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		series, err := parseSeries(body, "EUR", "USD")
		if err != nil {
			return
		}
		for i, d := range series {
			if d.Rate.IsZero() {
				t.Fatalf("day %s: no rate", d.Date)
			}
			if back, err := money.ParseRate(d.Rate.String()); err != nil || !back.Equal(d.Rate) {
				t.Fatalf("day %s: rate %s does not read back: %v", d.Date, d.Rate, err)
			}
			if i > 0 && d.Date <= series[i-1].Date {
				t.Fatalf("days out of order: %s after %s", d.Date, series[i-1].Date)
			}
		}
	})
}
