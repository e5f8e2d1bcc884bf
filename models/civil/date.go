// Package civil holds the calendar day (Date) the ledger records, its strict
// parser and its two database representations. It imports nothing of ours.
package civil

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"time"
)

// Date is a calendar day, YYYY-MM-DD. PostgreSQL stores it as date and
// SQLite as text; both order correctly.
type Date string

// ErrBadDate is returned for text that is not a real calendar day in range.
var ErrBadDate = errors.New("date must be a real calendar date, YYYY-MM-DD, between 1900-01-01 and 2199-12-31")

// ParseDate accepts exactly YYYY-MM-DD for a day that exists, 1900 to 2199.
func ParseDate(s string) (Date, error) {
	if len(s) != 10 {
		return "", ErrBadDate
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || t.Year() < 1900 || t.Year() > 2199 {
		return "", ErrBadDate
	}
	return Date(s), nil
}

// First and Last are the first and last days ParseDate accepts.
const (
	First Date = "1900-01-01"
	Last  Date = "2199-12-31"
)

// OpenRange is a date filter's from and to, an open (empty) end standing
// for the first or the last day there can be.
func OpenRange(from, to Date) (Date, Date) {
	if from == "" {
		from = First
	}
	if to == "" {
		to = Last
	}
	return from, to
}

// DateOf returns the day of t in UTC.
func DateOf(t time.Time) Date { return Date(t.UTC().Format(time.DateOnly)) }

// Time returns the day at midnight UTC; an invalid Date is the zero time.
func (d Date) Time() time.Time {
	t, _ := time.Parse(time.DateOnly, string(d))
	return t
}

// Value implements driver.Valuer.
func (d Date) Value() (driver.Value, error) { return string(d), nil }

// Scan implements sql.Scanner for both drivers' representations.
func (d *Date) Scan(src any) error {
	switch v := src.(type) {
	case time.Time:
		*d = Date(v.Format(time.DateOnly))
	case string:
		*d = Date(trimDate(v))
	case []byte:
		*d = Date(trimDate(string(v)))
	case nil:
		// NULL is the zero Date: a column tagged nullzero stores "" as
		// NULL and reads it back (an upsert's RETURNING, a LEFT JOIN).
		*d = ""
	default:
		return fmt.Errorf("civil: cannot scan %T into Date", src)
	}
	return nil
}

func trimDate(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}
