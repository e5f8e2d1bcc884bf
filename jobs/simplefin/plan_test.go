package simplefin

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestPlanWindows(t *testing.T) {
	now := time.Date(2026, 11, 22, 15, 4, 5, 0, time.UTC)
	end := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	check := func(name string, ws []Window, n int, start time.Time) {
		t.Helper()
		if len(ws) != n || !ws[0].End.Equal(end) || !ws[len(ws)-1].Start.Equal(start) {
			t.Fatalf("%s: %d windows %v, want %d from %v", name, len(ws), ws, n, start)
		}
		for i, w := range ws {
			if w.End.Sub(w.Start) > 90*24*time.Hour || (i > 0 && !ws[i-1].Start.Equal(w.End)) {
				t.Fatalf("%s: window %d %v is too long or not contiguous", name, i, w)
			}
		}
	}
	check("first sync", Plan{Now: now, LookbackDays: 90, ChunkDays: 90}.Windows(), 1, end.AddDate(0, 0, -90))
	check("365-day lookback", Plan{Now: now, LookbackDays: 365, ChunkDays: 90}.Windows(), 5, end.AddDate(0, 0, -365))
	last := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	check("next day", Plan{Now: now, LookbackDays: 90, ChunkDays: 90, OverlapDays: 7, LastStart: &last}.Windows(), 1, last.AddDate(0, 0, -7))
	check("full", Plan{Now: now, LookbackDays: 90, ChunkDays: 90, OverlapDays: 7, LastStart: &last, Full: true}.Windows(), 1, end.AddDate(0, 0, -90))
	old := now.AddDate(0, 0, -200)
	check("long gap, capped at the lookback", Plan{Now: now, LookbackDays: 120, ChunkDays: 90, OverlapDays: 7, LastStart: &old}.Windows(), 2, end.AddDate(0, 0, -120))
}

func FuzzParseRemoteAmount(f *testing.F) {
	for _, s := range []string{"1e3", "NaN", "1,000.00", "", "12.345678", "-0.5", "0.00", " 42 ", "12.5", ".5", "-", "+1", "9999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, _, err := ParseRemoteAmount(s)
		if err != nil {
			return
		}
		// Anything accepted is a plain decimal: no exponent, separator or symbol.
		for _, r := range strings.TrimSpace(s) {
			if r != '.' && r != '-' && r != '+' && (r < '0' || r > '9') {
				t.Fatalf("%q accepted as %v", s, a)
			}
		}
	})
}

func FuzzAccountSet(f *testing.F) {
	for _, s := range []string{
		`{"errors":[],"accounts":[{"id":"A","name":"n","currency":"USD","balance":"1","balance-date":1,"transactions":[{"id":"t","posted":"1767225600","amount":"-1.5","description":"d"}]}]}`,
		`{"accounts":"nope"}`, `{"error":"x","accounts":[{"id":5}]}`, `{"accounts":[{"transactions":[{"amount":12.5,"posted":null,"pending":true,"transacted_at":99}]}]}`,
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, b []byte) {
		var set AccountSet
		if json.Unmarshal(b, &set) != nil {
			return
		}
		for _, a := range set.Accounts {
			rows := NormalizeTransactions(a.Transactions, now)
			for _, r := range rows.Rows {
				if r.ExternalID == "" || r.Date == "" || r.Name == "" {
					t.Fatalf("accepted an incomplete row %+v", r)
				}
			}
			NormalizeCurrency(a.Currency)
		}
	})
}
