// Package recur finds recurring series (rent, subscriptions, pay) in a list
// of transactions. It is pure: no database and nothing of ours imported; the
// store reads the rows and keeps what Detect suggests.
package recur

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
)

// Cadence is how often a series comes back.
type Cadence string

// The cadences a series may have, shortest first.
const (
	Weekly    Cadence = "weekly"
	Biweekly  Cadence = "biweekly"
	Monthly   Cadence = "monthly"
	Quarterly Cadence = "quarterly"
	Yearly    Cadence = "yearly"
)

// Cadences lists every cadence, shortest first.
var Cadences = []Cadence{Weekly, Biweekly, Monthly, Quarterly, Yearly}

// Valid reports whether c is one of Cadences.
func (c Cadence) Valid() bool { return slices.Contains(Cadences, c) }

// Next is the date one period after d; monthly and longer cadences land on
// day (of the month) or the month's last day when it is shorter.
func (c Cadence) Next(d time.Time, day int) time.Time {
	switch c {
	case Weekly:
		return d.AddDate(0, 0, 7)
	case Biweekly:
		return d.AddDate(0, 0, 14)
	case Monthly:
		return monthsFrom(d, 1, day)
	case Quarterly:
		return monthsFrom(d, 3, day)
	default:
		return monthsFrom(d, 12, day)
	}
}

// Prev is the date one period before d, the one whose Next is d when d
// is on day.
func (c Cadence) Prev(d time.Time, day int) time.Time {
	switch c {
	case Weekly:
		return d.AddDate(0, 0, -7)
	case Biweekly:
		return d.AddDate(0, 0, -14)
	case Monthly:
		return monthsFrom(d, -1, day)
	case Quarterly:
		return monthsFrom(d, -3, day)
	default:
		return monthsFrom(d, -12, day)
	}
}

// step is one period back from d (the detector walks from the newest
// occurrence back) and how many days either side of it still count.
func (c Cadence) step(d time.Time) (time.Time, int) {
	switch c {
	case Weekly:
		return d.AddDate(0, 0, -7), 1
	case Biweekly:
		return d.AddDate(0, 0, -14), 2
	case Monthly:
		return monthsFrom(d, -1, d.Day()), 3
	case Quarterly:
		return monthsFrom(d, -3, d.Day()), 5
	default:
		return monthsFrom(d, -12, d.Day()), 7
	}
}

// monthsFrom is d moved by n months to day of that month, clamped to its
// last day (a 31st rent is due on 30 April and 28 February).
func monthsFrom(d time.Time, n, day int) time.Time {
	first := time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, n, 0)
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(max(day, 1), last)-1)
}

// Normalize is the name a series is grouped by when it has no merchant:
// lowercased, digits and punctuation removed, spaces collapsed, so that
// "NETFLIX.COM 4432" and "Netflix.com" are one payee.
func Normalize(name string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(name) {
		switch {
		case unicode.IsLetter(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
	}
	return b.String()
}

// Txn is what the detector reads of one transaction. Amount is signed as
// transactions are (positive money out), in ten-thousandths of the unit.
type Txn struct {
	Name       string
	MerchantID *uuid.UUID
	AccountID  uuid.UUID
	Amount     int64
	Currency   string
	Date       time.Time // midnight UTC
}

// Key is what a transaction's series is grouped by: its merchant when it
// has one, its normalised name otherwise; "" when it has neither.
func Key(merchantID *uuid.UUID, name string) string {
	if merchantID != nil {
		return "m:" + merchantID.String()
	}
	if n := Normalize(name); n != "" {
		return "n:" + n
	}
	return ""
}

// Suggestion is one series Detect found.
type Suggestion struct {
	Key        string // see Key
	Name       string // the newest occurrence's name, as written
	MerchantID *uuid.UUID
	AccountID  *uuid.UUID // nil when the occurrences were on several accounts
	Currency   string
	Cadence    Cadence
	// Amount is the newest occurrence's; PreviousAmount the steady amount
	// before it when the newest differs (a price change), else nil.
	Amount         int64
	PreviousAmount *int64
	Min, Max       int64
	ExpectedDay    int // of the month, of the newest occurrence
	Count          int
	Last, Next     time.Time
}

// MinOccurrences is how many times a series must have happened.
const MinOccurrences = 3

// startTries bounds how many of a group's newest rows are tried as the
// newest occurrence: a one-off purchase at a subscription's merchant is
// skipped, and a busy payee (a daily coffee) stays linear.
const startTries = 3

// Detect finds the recurring series in txns as of today. A series is at
// least MinOccurrences transactions of one key, currency and direction, each
// one cadence after the one before (within the cadence's days of slack),
// with amounts within Tolerance of each other, except for one price change
// after a steady run. A series whose next date is more than a period
// behind today has stopped and is not suggested. txns is left as it is.
func Detect(txns []Txn, today time.Time) []Suggestion {
	groups := map[string][]int{}
	for i := range txns {
		t := &txns[i]
		k := Key(t.MerchantID, t.Name)
		if k == "" || t.Amount == 0 {
			continue
		}
		gk := k + "\x00" + t.Currency
		if t.Amount < 0 {
			gk += "\x00in"
		}
		groups[gk] = append(groups[gk], i)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	var out []Suggestion
	for _, gk := range keys {
		idx := groups[gk]
		if len(idx) < MinOccurrences {
			continue
		}
		slices.SortFunc(idx, func(a, b int) int {
			return cmp.Or(txns[a].Date.Compare(txns[b].Date), cmp.Compare(a, b))
		})
		if s, ok := detectGroup(txns, idx, today); ok {
			out = append(out, s)
		}
	}
	return out
}

// detectGroup finds the longest series of one group (idx in date order).
func detectGroup(txns []Txn, idx []int, today time.Time) (Suggestion, bool) {
	var best []int
	var bestCadence Cadence
	for _, c := range Cadences {
		for s := 0; s < startTries && s < len(idx); s++ {
			chain := walk(txns, idx, len(idx)-1-s, c)
			if len(chain) > len(best) {
				best, bestCadence = chain, c
			}
		}
	}
	if len(best) < MinOccurrences {
		return Suggestion{}, false
	}
	// best runs newest first.
	newest := txns[best[0]]
	s := Suggestion{
		Key:         Key(newest.MerchantID, newest.Name),
		Name:        strings.TrimSpace(newest.Name),
		MerchantID:  newest.MerchantID,
		Currency:    newest.Currency,
		Cadence:     bestCadence,
		Amount:      newest.Amount,
		Min:         newest.Amount,
		Max:         newest.Amount,
		ExpectedDay: newest.Date.Day(),
		Count:       len(best),
		Last:        newest.Date,
	}
	account := newest.AccountID
	for _, i := range best {
		s.Min, s.Max = min(s.Min, txns[i].Amount), max(s.Max, txns[i].Amount)
		if txns[i].AccountID != account {
			account = uuid.Nil
		}
	}
	if account != uuid.Nil {
		s.AccountID = &account
	}
	// A price change: the newest amount differs from a steady run before it.
	if prev := txns[best[1]].Amount; prev != newest.Amount {
		steady := true
		for _, i := range best[1:] {
			steady = steady && txns[i].Amount == prev
		}
		if steady {
			s.PreviousAmount = &prev
		}
	}
	s.Next = bestCadence.Next(s.Last, s.ExpectedDay)
	if bestCadence.Next(s.Next, s.ExpectedDay).Before(today) {
		return Suggestion{}, false // two periods missed: it has stopped
	}
	return s, true
}

// walk follows cadence c back from idx[start] and returns the positions
// in txns of the series, newest first.
func walk(txns []Txn, idx []int, start int, c Cadence) []int {
	chain := []int{idx[start]}
	ref := txns[idx[start]].Amount
	changed := false
	pos := start
	for {
		head := txns[chain[len(chain)-1]]
		want, slack := c.step(head.Date)
		lo, hi := want.AddDate(0, 0, -slack), want.AddDate(0, 0, slack)
		// Candidates are the rows dated lo..hi before pos; the nearest in
		// amount wins.
		near, nearOut := -1, -1
		for p := pos - 1; p >= 0; p-- {
			t := txns[idx[p]]
			if t.Date.Before(lo) {
				break
			}
			if t.Date.After(hi) {
				continue
			}
			if Within(t.Amount, ref) {
				if near < 0 || dist(t.Amount, ref) < dist(txns[idx[near]].Amount, ref) {
					near = p
				}
			} else if nearOut < 0 || dist(t.Amount, ref) < dist(txns[idx[nearOut]].Amount, ref) {
				nearOut = p
			}
		}
		switch {
		case near >= 0:
		case nearOut >= 0 && !changed:
			// One price step is allowed; older rows compare to the old price.
			near, changed = nearOut, true
			ref = txns[idx[nearOut]].Amount
		default:
			return chain
		}
		chain = append(chain, idx[near])
		pos = near
	}
}

// Tolerance is how far apart two amounts of one series may be: 10% of the
// larger, or 5.00 (50000 ten-thousandths), whichever is more.
const Tolerance = 50000

// Within reports whether a and b are amounts of one series.
func Within(a, b int64) bool {
	return dist(a, b) <= max(Tolerance, max(abs(a), abs(b))/10)
}

func dist(a, b int64) int64 { return abs(a - b) }

func abs(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}
