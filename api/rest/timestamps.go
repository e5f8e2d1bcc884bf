package rest

import "time"

// timestamp renders a time as RFC 3339 in UTC, to the second.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

func optTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timestamp(*t)
	return &s
}
