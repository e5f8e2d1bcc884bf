package rest

import "time"

// timestamp renders a time as RFC 3339 in UTC, to the second.
func timestamp(t time.Time) string {
	var b [20]byte
	return string(appendTimestamp(b[:0], t))
}

func optTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timestamp(*t)
	return &s
}
