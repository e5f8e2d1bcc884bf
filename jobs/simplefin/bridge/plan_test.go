package bridge

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"coffer/models/money"
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
	for _, s := range []string{"1e3", "NaN", "1,000.00", "", "12.345678", "-0.5", "0.00", " 42 ", "12.5", ".5", "-", "+1",
		"9999999999999999", "1.2.3", "--1", "+", "1-", "5.", "-.00005", "123456789012345.99995"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, rounded, err := ParseRemoteAmount(s)
		trimmed := strings.TrimSpace(s)
		want, fits := amountGrammar(trimmed), false
		var q *big.Int
		if want {
			// The value, worked out independently: exact, then rounded
			// half away from zero to 4 decimals; it must be within the
			// ledger's bound, models.MaxAmount.
			r, ok := new(big.Rat).SetString(strings.TrimSuffix(trimmed, "."))
			if !ok {
				t.Fatalf("%q: big.Rat cannot read it", s)
			}
			r.Mul(r, big.NewRat(money.AmountScale, 1))
			num, den := new(big.Int).Abs(r.Num()), r.Denom()
			var m big.Int
			q, _ = new(big.Int).QuoRem(num, den, &m)
			if new(big.Int).Mul(&m, big.NewInt(2)).Cmp(den) >= 0 {
				q.Add(q, big.NewInt(1))
			}
			if r.Sign() < 0 {
				q.Neg(q)
			}
			fits = q.CmpAbs(big.NewInt(int64(money.MaxAmount))) <= 0
		}
		if (err == nil) != (want && fits) {
			t.Fatalf("%q: accepted %v (err %v); grammar %v, fits %v", s, err == nil, err, want, fits)
		}
		if err != nil {
			return
		}
		if q.Int64() != int64(a) {
			t.Fatalf("%q read as %d, want %s", s, a, q)
		}
		_, frac, _ := strings.Cut(trimmed, ".")
		if rounded != (len(frac) > 4) {
			t.Fatalf("%q: rounded %v", s, rounded)
		}
	})
}

// amountGrammar is spec §9's amount rule, written out by hand: an
// optional sign, at most 15 integer digits, an optional "." and digits,
// and at least one digit.
func amountGrammar(s string) bool {
	digits := func(i int) int {
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j
	}
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	j := digits(i)
	intDigits, fracDigits := j-i, 0
	if j < len(s) && s[j] == '.' {
		k := digits(j + 1)
		fracDigits, j = k-j-1, k
	}
	return j == len(s) && intDigits <= 15 && intDigits+fracDigits > 0
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
