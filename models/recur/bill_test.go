package recur

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

func date(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestBillMatches(t *testing.T) {
	acct, other := uuid.New(), uuid.New()
	merchant := uuid.New()
	lo, hi := int64(150000), int64(160000)
	b := Bill{Key: "m:" + merchant.String(), Name: "Netflix.com", AccountID: &acct, Currency: "USD", Amount: 159900,
		Min: &lo, Max: &hi, Cadence: Monthly, Day: 15, Next: date("2026-07-15")}
	base := Txn{Name: "NETFLIX.COM 4432", AccountID: acct, Amount: 159900, Currency: "USD", Date: date("2026-07-16")}
	for _, c := range []struct {
		name string
		edit func(*Txn)
		want bool
	}{
		{"by name", func(*Txn) {}, true},
		{"by merchant", func(x *Txn) { x.Name, x.MerchantID = "Something else", &merchant }, true},
		{"other merchant", func(x *Txn) { x.Name, x.MerchantID = "Spotify", ptr(uuid.New()) }, false},
		{"other name", func(x *Txn) { x.Name = "Spotify" }, false},
		{"other account", func(x *Txn) { x.AccountID = other }, false},
		{"other currency", func(x *Txn) { x.Currency = "EUR" }, false},
		{"income, not a bill", func(x *Txn) { x.Amount = -159900 }, false},
		{"price went up a little", func(x *Txn) { x.Amount = 169900 }, true},
		{"twice the price", func(x *Txn) { x.Amount = 319800 }, false},
		{"early within grace", func(x *Txn) { x.Date = date("2026-07-10") }, true},
		{"too early", func(x *Txn) { x.Date = date("2026-07-09") }, false},
		{"late within grace", func(x *Txn) { x.Date = date("2026-07-20") }, true},
		{"late, before the missed job ran", func(x *Txn) { x.Date = date("2026-07-21") }, true},
		{"late, the day before August's window", func(x *Txn) { x.Date = date("2026-08-09") }, true},
		{"in August's window", func(x *Txn) { x.Date = date("2026-08-10") }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := base
			c.edit(&x)
			if got := b.Matches(&x); got != c.want {
				t.Errorf("Matches = %v, want %v", got, c.want)
			}
		})
	}
	anyAccount := b
	anyAccount.AccountID = nil
	x := base
	x.AccountID = other
	if !anyAccount.Matches(&x) {
		t.Error("an item without an account should match any account")
	}
}

func ptr[T any](v T) *T { return &v }

func TestOccurrences(t *testing.T) {
	for _, c := range []struct {
		name       string
		cadence    Cadence
		day        int
		next, from string
		to         string
		want       []string
	}{
		{"monthly on the 31st", Monthly, 31, "2026-01-31", "2026-01-01", "2026-04-30", []string{"2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30"}},
		{"weekly from a past next date", Weekly, 1, "2026-06-01", "2026-06-10", "2026-06-30", []string{"2026-06-15", "2026-06-22", "2026-06-29"}},
		{"biweekly", Biweekly, 3, "2026-06-03", "2026-06-01", "2026-07-01", []string{"2026-06-03", "2026-06-17", "2026-07-01"}},
		{"yearly outside", Yearly, 5, "2027-03-05", "2026-06-01", "2026-12-31", nil},
		{"quarterly", Quarterly, 15, "2026-02-15", "2026-01-01", "2026-12-31", []string{"2026-02-15", "2026-05-15", "2026-08-15", "2026-11-15"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Occurrences(c.cadence, c.day, date(c.next), date(c.from), date(c.to), 100)
			var s []string
			for _, d := range got {
				s = append(s, d.Format(time.DateOnly))
			}
			if len(s) != len(c.want) {
				t.Fatalf("got %v, want %v", s, c.want)
			}
			for i := range s {
				if s[i] != c.want[i] {
					t.Fatalf("got %v, want %v", s, c.want)
				}
			}
		})
	}
	if got := Occurrences(Weekly, 1, date("2026-01-01"), date("2026-01-01"), date("2030-01-01"), 5); len(got) != 5 {
		t.Errorf("limit: %d dates", len(got))
	}
}

func TestGrace(t *testing.T) {
	want := map[Cadence]int{Weekly: 2, Biweekly: 3, Monthly: 5, Quarterly: 7, Yearly: 10}
	for c, g := range want {
		if c.Grace() != g {
			t.Errorf("%s grace %d, want %d", c, c.Grace(), g)
		}
	}
}

// TestBillLate: a payment after an occurrence's grace and before the next
// one's window pays that occurrence late; one in the next window is the
// next one's (Matches); a bill paid since is not paid again; a payee or
// amount that does not match pays nothing.
func TestBillLate(t *testing.T) {
	acct := uuid.New()
	b := Bill{Key: "n:power", Name: "Power", AccountID: &acct, Currency: "USD", Amount: 800000, Cadence: Monthly, Day: 31,
		Next: date("2026-08-31")}
	base := Txn{Name: "POWER #4432", AccountID: acct, Amount: 812300, Currency: "USD"}
	for _, c := range []struct {
		date, last string
		name       string
		want       string // "": not late
	}{
		{"2026-08-05", "", "Power", "2026-07-31"},
		{"2026-07-26", "", "Power", "2026-07-31"}, // early in July's window, after the job ran
		{"2026-08-25", "", "Power", "2026-07-31"}, // the day before August's window
		{"2026-08-26", "", "Power", ""},           // August's window: Matches
		{"2026-09-10", "", "Power", ""},
		{"2026-07-25", "", "Power", "2026-06-30"}, // two months missed: June's
		{"2026-08-05", "2026-07-27", "Power", ""}, // July was paid
		{"2026-08-05", "2026-06-29", "Power", "2026-07-31"},
		{"2026-08-05", "", "Gas", ""},
		{"2025-06-01", "", "Power", ""}, // over a year back
	} {
		x := base
		x.Date, x.Name = date(c.date), c.name
		if c.name == "Gas" {
			x.Name = "GAS CO"
		}
		bb := b
		if c.last != "" {
			l := date(c.last)
			bb.Last = &l
		}
		d, ok := bb.Late(&x)
		got := ""
		if ok {
			got = d.Format(time.DateOnly)
		}
		if got != c.want {
			t.Errorf("%s (last %q): late for %q, want %q", c.date, c.last, got, c.want)
		}
	}
}

func TestCadencePrev(t *testing.T) {
	for _, c := range Cadences {
		for _, s := range []string{"2026-03-31", "2026-01-31", "2026-02-28", "2026-07-15"} {
			d := date(s)
			if got := c.Next(c.Prev(d, d.Day()), d.Day()); !got.Equal(d) {
				t.Errorf("%s: Next(Prev(%s)) = %s", c, s, got.Format(time.DateOnly))
			}
		}
	}
}

// BenchmarkBillMatchRow is the pay step's Go work for one row of a batch
// against 50 items paid last time: Matches alone (before Late existed)
// and Matches then Late (a row that pays no next occurrence).
func BenchmarkBillMatchRow(b *testing.B) {
	acct := uuid.New()
	var items []Bill
	for i := range 50 {
		next := date("2026-08-01").AddDate(0, 0, i%28)
		last := next.AddDate(0, -1, 1)
		items = append(items, Bill{Key: "n:bill", Name: "Bill", AccountID: &acct, Currency: "USD", Amount: int64(100000 + i),
			Cadence: Monthly, Day: next.Day(), Next: next, Last: &last})
	}
	row := Txn{Name: "CORNER SHOP 1234", AccountID: acct, Amount: 45000, Currency: "USD", Date: date("2026-07-20")}
	for _, late := range []bool{false, true} {
		b.Run(map[bool]string{false: "matches", true: "matches+late"}[late], func(b *testing.B) {
			for b.Loop() {
				for i := range items {
					if items[i].Matches(&row) {
						b.Fatal("matched")
					}
					if late {
						if _, ok := items[i].Late(&row); ok {
							b.Fatal("late")
						}
					}
				}
			}
		})
	}
}
