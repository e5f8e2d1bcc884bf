package models

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

// firstDate and lastDate are the first and last days ParseDate accepts.
const (
	firstDate Date = "1900-01-01"
	lastDate  Date = "2199-12-31"
)

// openRange is a date filter's from and to, an open (empty) end standing
// for the first or the last day there can be.
func openRange(from, to Date) (Date, Date) {
	if from == "" {
		from = firstDate
	}
	if to == "" {
		to = lastDate
	}
	return from, to
}

// DateOf returns the day of t in UTC.
func DateOf(t time.Time) Date { return Date(t.UTC().Format(time.DateOnly)) }

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
	default:
		return fmt.Errorf("models: cannot scan %T into Date", src)
	}
	return nil
}

func trimDate(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}
