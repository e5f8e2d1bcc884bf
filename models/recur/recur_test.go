package recur

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
)

func day(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

var acct = uuid.MustParse("00000000-0000-0000-0000-00000000000a")

func tx(name, date string, amount int64) Txn {
	return Txn{Name: name, AccountID: acct, Amount: amount, Currency: "USD", Date: day(date)}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"NETFLIX.COM 4432":     "netflix com",
		"  Rent -- May 2026 ":  "rent may",
		"12345":                "",
		"Café Crème #12":       "café crème",
		"SPOTIFY*P1A2B3 STOCK": "spotify p a b stock",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDetect(t *testing.T) {
	today := day("2026-06-10")
	p := func(v int64) *int64 { return &v }
	tests := []struct {
		name  string
		txns  []Txn
		want  []Suggestion // compared on the fields below
		check func(t *testing.T, s Suggestion)
	}{
		{
			name: "monthly rent on the 1st, days drifting",
			txns: []Txn{
				tx("RENT 2026-02", "2026-02-02", 15000000),
				tx("Rent 2026-03", "2026-03-01", 15000000),
				tx("Rent 2026-04", "2026-04-03", 15000000),
				tx("RENT 2026-05", "2026-05-01", 15000000),
				tx("Rent", "2026-06-01", 15000000),
				tx("Coffee", "2026-05-17", 45000),
			},
			want: []Suggestion{{Key: "n:rent", Name: "Rent", Cadence: Monthly, Amount: 15000000, Count: 5,
				ExpectedDay: 1, Last: day("2026-06-01"), Next: day("2026-07-01")}},
		},
		{
			name: "weekly allowance, money in",
			txns: []Txn{
				tx("Allowance", "2026-05-08", -200000),
				tx("Allowance", "2026-05-15", -200000),
				tx("Allowance", "2026-05-22", -200000),
				tx("Allowance", "2026-05-29", -200000),
				tx("Allowance", "2026-06-05", -200000),
			},
			want: []Suggestion{{Key: "n:allowance", Name: "Allowance", Cadence: Weekly, Amount: -200000, Count: 5,
				ExpectedDay: 5, Last: day("2026-06-05"), Next: day("2026-06-12")}},
		},
		{
			name: "price change of a subscription",
			txns: []Txn{
				tx("NETFLIX.COM", "2026-01-15", 99900),
				tx("NETFLIX.COM", "2026-02-15", 99900),
				tx("NETFLIX.COM", "2026-03-15", 99900),
				tx("NETFLIX.COM", "2026-04-15", 99900),
				tx("NETFLIX.COM", "2026-05-15", 159900),
			},
			want: []Suggestion{{Key: "n:netflix com", Name: "NETFLIX.COM", Cadence: Monthly, Amount: 159900,
				PreviousAmount: p(99900), Count: 5, ExpectedDay: 15, Last: day("2026-05-15"), Next: day("2026-06-15")}},
		},
		{
			name: "yearly, with a one-off at the same payee",
			txns: []Txn{
				tx("Insurance", "2023-08-20", 4000000),
				tx("Insurance", "2024-08-22", 4100000),
				tx("Insurance", "2025-08-19", 4200000),
				tx("Insurance", "2025-12-01", 150000),
			},
			want: []Suggestion{{Key: "n:insurance", Name: "Insurance", Cadence: Yearly, Amount: 4200000, Count: 3,
				ExpectedDay: 19, Last: day("2025-08-19"), Next: day("2026-08-19")}},
		},
		{
			name: "irregular dates: none",
			txns: []Txn{
				tx("Hardware store", "2026-01-03", 250000),
				tx("Hardware store", "2026-01-19", 250000),
				tx("Hardware store", "2026-03-02", 250000),
				tx("Hardware store", "2026-05-29", 250000),
			},
		},
		{
			name: "amounts far apart: none",
			txns: []Txn{
				tx("Grocer", "2026-03-05", 250000),
				tx("Grocer", "2026-04-05", 1250000),
				tx("Grocer", "2026-05-05", 80000),
			},
		},
		{
			name: "two occurrences: none",
			txns: []Txn{
				tx("Gym", "2026-04-10", 300000),
				tx("Gym", "2026-05-10", 300000),
			},
		},
		{
			name: "stopped long ago: none",
			txns: []Txn{
				tx("Old gym", "2025-01-10", 300000),
				tx("Old gym", "2025-02-10", 300000),
				tx("Old gym", "2025-03-10", 300000),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Detect(tt.txns, today)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d suggestions %+v, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Key != w.Key || g.Name != w.Name || g.Cadence != w.Cadence || g.Amount != w.Amount ||
					g.Count != w.Count || g.ExpectedDay != w.ExpectedDay || !g.Last.Equal(w.Last) || !g.Next.Equal(w.Next) ||
					fmt.Sprint(deref(g.PreviousAmount)) != fmt.Sprint(deref(w.PreviousAmount)) {
					t.Errorf("got %+v (previous %v)\nwant %+v (previous %v)", g, deref(g.PreviousAmount), w, deref(w.PreviousAmount))
				}
				if g.AccountID == nil || *g.AccountID != acct {
					t.Errorf("account %v, want %v", g.AccountID, acct)
				}
			}
		})
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestDetectMerchantKey(t *testing.T) {
	m := uuid.MustParse("00000000-0000-0000-0000-0000000000ee")
	var txns []Txn
	for i, name := range []string{"SPOTIFY P1", "Spotify AB", "spotify usa"} {
		t := tx(name, fmt.Sprintf("2026-0%d-03", i+3), 119900)
		t.MerchantID = &m
		txns = append(txns, t)
	}
	got := Detect(txns, day("2026-06-01"))
	if len(got) != 1 || got[0].Key != "m:"+m.String() || got[0].MerchantID == nil || *got[0].MerchantID != m {
		t.Fatalf("got %+v, want one series keyed by the merchant", got)
	}
}

func TestCadenceNextClamps(t *testing.T) {
	if got := Monthly.Next(day("2026-01-31"), 31); !got.Equal(day("2026-02-28")) {
		t.Errorf("Monthly.Next(31 Jan) = %s", got)
	}
	if got := Monthly.Next(day("2026-02-28"), 31); !got.Equal(day("2026-03-31")) {
		t.Errorf("Monthly.Next(28 Feb, day 31) = %s", got)
	}
}

// BenchmarkDetect: 100,000 transactions of two years, 300 payees of which
// a third recur monthly and the rest are noise.
func BenchmarkDetect(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	start := day("2024-06-01")
	var txns []Txn
	for p := 0; p < 100; p++ {
		for m := 0; m < 24; m++ {
			txns = append(txns, Txn{Name: fmt.Sprintf("Bill %c%c", 'a'+p%26, 'a'+p/26), AccountID: acct,
				Amount: int64(100000 + p*100), Currency: "USD", Date: monthsFrom(start, m, 1+p%28)})
		}
	}
	for len(txns) < 100000 {
		p := r.IntN(200)
		txns = append(txns, Txn{Name: fmt.Sprintf("Shop %c%c", 'a'+p%26, 'a'+p/26), AccountID: acct,
			Amount: int64(1000 + r.IntN(2000000)), Currency: "USD", Date: start.AddDate(0, 0, r.IntN(730))})
	}
	b.ResetTimer()
	for b.Loop() {
		if got := Detect(txns, day("2026-06-02")); len(got) < 100 {
			b.Fatalf("found %d series, want at least 100", len(got))
		}
	}
}
