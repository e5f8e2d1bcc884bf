package recur

import (
	"time"

	"github.com/google/uuid"
)

// Grace is how many days after its date an occurrence may still come
// before it counts as missed, and how many days before it one may come
// early: a bank posts a weekly debit a day or two late, a yearly renewal
// may move by a week.
func (c Cadence) Grace() int {
	switch c {
	case Weekly:
		return 2
	case Biweekly:
		return 3
	case Monthly:
		return 5
	case Quarterly:
		return 7
	default:
		return 10
	}
}

// Bill is what matching and projecting read of a recurring item: a bill,
// a subscription or an income.
type Bill struct {
	Key       string     // the item's match key (see Key)
	Name      string     // the item's name; a row of the same normalised name matches too
	AccountID *uuid.UUID // nil: any account
	Currency  string
	Amount    int64  // signed as transactions are
	Min, Max  *int64 // the amounts seen, when the detector saw them
	Cadence   Cadence
	Day       int        // expected day of the month
	Next      time.Time  // the next expected date, midnight UTC
	Last      *time.Time // the latest payment's date; nil: none known

	// The days a late payment may have (see Late), worked out on its
	// first call: a batch asks for each of its rows.
	lateFrom, lateTo time.Time
	lateKnown        bool
}

// Window is the dates a transaction paying the next occurrence may have.
func (b *Bill) Window() (lo, hi time.Time) {
	g := b.Cadence.Grace()
	return b.Next.AddDate(0, 0, -g), b.Next.AddDate(0, 0, g)
}

// Matches reports whether t pays b's next occurrence: same account when b
// has one, same currency and direction, the same merchant or normalised
// name, an amount within the series' tolerance (or its range seen), and a
// date from the start of Window to the start of the following
// occurrence's. Past Window the payment is late, and pays this occurrence
// all the same: the missed job, which would have recorded it missed, has
// not run yet (run, it moves b on and Late finds the payment).
func (b *Bill) Matches(t *Txn) bool {
	lo, _ := b.Window()
	return !t.Date.Before(lo) && t.Date.Before(b.following()) && b.payee(t)
}

// following is the start of the window of the occurrence after b's next:
// the first day that is no longer the next occurrence's.
func (b *Bill) following() time.Time {
	return b.Cadence.Next(b.Next, b.Day).AddDate(0, 0, -b.Cadence.Grace())
}

// payee is Matches without the date: t is a payment of this series.
func (b *Bill) payee(t *Txn) bool {
	if t.Amount == 0 || (t.Amount < 0) != (b.Amount < 0) || t.Currency != b.Currency {
		return false
	}
	if b.AccountID != nil && *b.AccountID != t.AccountID {
		return false
	}
	if k := Key(t.MerchantID, t.Name); k == "" || (k != b.Key && Normalize(t.Name) != Normalize(b.Name)) {
		return false
	}
	if Within(t.Amount, b.Amount) {
		return true
	}
	return b.Min != nil && b.Max != nil && t.Amount >= *b.Min && t.Amount <= *b.Max
}

// LateDays is how far before b's next date Late looks: as far back as the
// missed job records.
const LateDays = 366

// Late reports the earlier due date that t pays late: a payment of the
// series dated after Window of one of b's past occurrences (which the
// missed job then moved b past) and before the window of the occurrence
// after it. Each past occurrence owns the days from the start of its
// window to the start of the next one's, so a late payment pays the
// occurrence it was late for, never the next one early. Late does not
// know whether that occurrence was missed (the store's record says); it
// knows only that none paid from b.Last on was.
func (b *Bill) Late(t *Txn) (time.Time, bool) {
	// The span first, the payee only for a row inside it: most items were
	// paid last time (an empty span), and most rows are not theirs.
	from, to := b.lateSpan()
	if t.Date.Before(from) || !t.Date.Before(to) {
		return time.Time{}, false
	}
	g := b.Cadence.Grace()
	d := b.Cadence.Prev(b.Next, b.Day)
	for t.Date.Before(d.AddDate(0, 0, -g)) {
		d = b.Cadence.Prev(d, b.Day)
	}
	return d, b.payee(t)
}

// lateSpan is the days a late payment of b may have: from the start of
// the window of the oldest past occurrence not paid (none from b.Last on
// was; at most LateDays back) to the start of the next one's window.
// Empty when the last occurrence was paid.
func (b *Bill) lateSpan() (from, to time.Time) {
	if b.lateKnown {
		return b.lateFrom, b.lateTo
	}
	g := b.Cadence.Grace()
	b.lateTo = b.Next.AddDate(0, 0, -g)
	b.lateFrom = b.lateTo
	floor := b.Next.AddDate(0, 0, -LateDays)
	for d := b.Cadence.Prev(b.Next, b.Day); !d.Before(floor); d = b.Cadence.Prev(d, b.Day) {
		lo := d.AddDate(0, 0, -g)
		if b.Last != nil && !b.Last.Before(lo) {
			break
		}
		b.lateFrom = lo
	}
	b.lateKnown = true
	return b.lateFrom, b.lateTo
}

// Advance moves b to its following occurrence, one cadence after the one
// it was at: from the due date, not from when it was paid, so an early or
// late payment does not drift the schedule.
func (b *Bill) Advance() {
	b.Next = b.Cadence.Next(b.Next, b.Day)
	b.lateKnown = false
}

// Occurrences are the dates of a series whose next occurrence is next,
// from from to to (both included), at most limit of them. A next date
// before from is walked forward first.
func Occurrences(c Cadence, day int, next, from, to time.Time, limit int) []time.Time {
	var out []time.Time
	// A bound on the walk: a next date years behind still ends.
	for d, n := next, 0; !d.After(to) && len(out) < limit && n < 10000; d, n = c.Next(d, day), n+1 {
		if !d.Before(from) {
			out = append(out, d)
		}
	}
	return out
}
