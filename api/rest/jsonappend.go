package rest

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// The chat list is the API's most read page, and encoding/json's
// reflection and time.Format were a sixth of its CPU under load. These
// appenders write what encoding/json writes for the same values (the same
// escapes, the same key order); TestChatListJSON compares the two.

// appendTimestamp appends timestamp(t) without time.Format.
func appendTimestamp(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, "2006-01-02T15:04:05Z")
	}
	h, mi, s := t.Clock()
	b = appendTwo(appendTwo(b, y/100), y%100)
	b = appendTwo(append(b, '-'), int(mo))
	b = appendTwo(append(b, '-'), d)
	b = appendTwo(append(b, 'T'), h)
	b = appendTwo(append(b, ':'), mi)
	b = appendTwo(append(b, ':'), s)
	return append(b, 'Z')
}

// twoDigits holds "00" to "99".
const twoDigits = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// appendTwo appends n (0 <= n < 100) in two digits.
func appendTwo(b []byte, n int) []byte {
	return append(b, twoDigits[2*n], twoDigits[2*n+1])
}

// appendUUID appends id as a JSON string.
func appendUUID(b []byte, id uuid.UUID) []byte {
	b = append(b, '"')
	for i, x := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[x>>4], hexDigits[x&0xF])
	}
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as encoding/json does: HTML characters,
// U+2028 and U+2029 escaped, invalid UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(append(b, s[start:i]...), `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(append(b, s[start:]...), '"')
}

// appendOptString appends s, or null.
func appendOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

// appendOptTimestamp appends t as a JSON string, or null.
func appendOptTimestamp(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return append(appendTimestamp(append(b, '"'), *t), '"')
}

// appendPagination appends p as encoding/json does.
func appendPagination(b []byte, p Pagination) []byte {
	b = strconv.AppendInt(append(b, `{"page":`...), int64(p.Page), 10)
	b = strconv.AppendInt(append(b, `,"per_page":`...), int64(p.PerPage), 10)
	b = strconv.AppendInt(append(b, `,"total_count":`...), int64(p.TotalCount), 10)
	b = strconv.AppendInt(append(b, `,"total_pages":`...), int64(p.TotalPages), 10)
	return append(b, '}')
}
