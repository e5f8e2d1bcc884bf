package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/models/civil"
	"coffer/models/money"
)

// Length limits of text fields, in characters.
const (
	maxName  = 255
	maxNotes = 10_000
)

// fields reads the members of one JSON object and collects a message for
// every member that is malformed, so that one 422 can list them all.
type fields struct {
	raw      map[string]json.RawMessage
	problems []string
}

// decodeObject parses the body as a JSON object; with wrapper set, it
// returns the object under that key instead (`{"transaction": {...}}`).
func decodeObject(c *fiber.Ctx, wrapper string) (*fields, error) {
	body := c.Body()
	if !utf8.Valid(body) {
		return nil, httperr.BadRequest("The request body must be valid UTF-8")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, httperr.BadRequest("The request body must be a JSON object")
	}
	if wrapper == "" {
		return &fields{raw: top}, nil
	}
	inner, ok := top[wrapper]
	var obj map[string]json.RawMessage
	if !ok || json.Unmarshal(inner, &obj) != nil || obj == nil {
		return nil, httperr.BadRequest("The request body must contain a \"" + wrapper + "\" object")
	}
	return &fields{raw: obj}, nil
}

func (f *fields) add(msg string) { f.problems = append(f.problems, msg) }

// err returns the collected problems as one validation error, or nil.
func (f *fields) err() error {
	if len(f.problems) == 0 {
		return nil
	}
	return httperr.Invalid(f.problems)
}

// has reports whether the member is present (null included).
func (f *fields) has(name string) bool {
	_, ok := f.raw[name]
	return ok
}

// isNull reports whether the member is present and null.
func (f *fields) isNull(name string) bool {
	v, ok := f.raw[name]
	return ok && bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// str returns a string member; absent or null gives ok false. Text is
// trimmed when trim is set and checked for length and NUL characters.
func (f *fields) str(name string, max int, trim bool) (s string, ok bool) {
	v, present := f.raw[name]
	if !present || f.isNull(name) {
		return "", false
	}
	if plain, isPlain := plainString(v); isPlain {
		s = plain
	} else if err := json.Unmarshal(v, &s); err != nil {
		f.add(name + " must be a string")
		return "", false
	}
	if trim {
		s = strings.TrimSpace(s)
	}
	if strings.ContainsRune(s, 0) {
		f.add(name + " must not contain NUL characters")
		return "", false
	}
	if utf8.RuneCountInString(s) > max {
		f.add(name + " is too long (maximum is " + strconv.Itoa(max) + " characters)")
		return "", false
	}
	return s, true
}

// plainString is the text of a JSON string without escapes, the common
// case, read without json.Unmarshal's reflection (a bulk request has
// thousands). Invalid UTF-8 is left to json.Unmarshal, which replaces it.
func plainString(v json.RawMessage) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	for _, b := range inner {
		if b == '\\' || b == '"' || b < 0x20 {
			return "", false
		}
	}
	if !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
}

// required returns a non-blank string member or records that it is missing.
func (f *fields) required(name string, max int) string {
	s, ok := f.str(name, max, true)
	if ok && s == "" {
		f.add(name + " can't be blank")
		return ""
	}
	if !ok && !f.bad(name) {
		f.add(name + " is required")
	}
	return s
}

// bad reports whether a problem was already recorded for the member.
func (f *fields) bad(name string) bool {
	for _, p := range f.problems {
		if strings.HasPrefix(p, name+" ") {
			return true
		}
	}
	return false
}

// id returns a UUID member; absent or null gives nil.
func (f *fields) id(name string) *uuid.UUID {
	s, ok := f.str(name, 64, true)
	if !ok {
		return nil
	}
	id, err := uuid.Parse(s)
	if err != nil || len(s) != 36 {
		f.add(name + " must be a UUID")
		return nil
	}
	return &id
}

// ids returns a member that is an array of UUIDs; absent or null gives
// nil, an empty array gives an empty, non-nil slice.
func (f *fields) ids(name string) []uuid.UUID {
	v, ok := f.raw[name]
	if !ok || f.isNull(name) {
		return nil
	}
	var strs []string
	if err := json.Unmarshal(v, &strs); err != nil {
		f.add(name + " must be an array of UUIDs")
		return nil
	}
	if len(strs) > 100 {
		f.add(name + " has too many items (maximum is 100)")
		return nil
	}
	out := make([]uuid.UUID, 0, len(strs))
	for _, s := range strs {
		id, err := uuid.Parse(strings.TrimSpace(s))
		if err != nil || len(strings.TrimSpace(s)) != 36 {
			f.add(name + " must be an array of UUIDs")
			return nil
		}
		out = append(out, id)
	}
	return out
}

// amount returns a money member sent as a number or a numeric string.
func (f *fields) amount(name string) (money.Amount, bool) {
	v, ok := f.raw[name]
	if !ok || f.isNull(name) {
		return 0, false
	}
	a, err := money.ParseAmountJSON(v)
	if err != nil {
		f.add(name + " must be a decimal number with at most 12 digits before the point and 4 after it")
		return 0, false
	}
	return a, true
}

// date returns a YYYY-MM-DD member.
func (f *fields) date(name string) (civil.Date, bool) {
	s, ok := f.str(name, 32, true)
	if !ok {
		return "", false
	}
	d, err := civil.ParseDate(s)
	if err != nil {
		f.add(name + " must be a real calendar date (YYYY-MM-DD) between 1900-01-01 and 2199-12-31")
		return "", false
	}
	return d, true
}

// currency returns an ISO 4217 code member, upper-cased.
func (f *fields) currency(name string) (string, bool) {
	s, ok := f.str(name, 8, true)
	if !ok {
		return "", false
	}
	c, known := money.LookupCurrency(s)
	if !known {
		f.add(name + " must be a known ISO 4217 currency code")
		return "", false
	}
	return c.Code, true
}

// key returns an idempotency-style member: a string or a number, compared
// as text, not trimmed; blank counts as absent.
func (f *fields) key(name string) (string, bool) {
	v, ok := f.raw[name]
	if !ok || f.isNull(name) {
		return "", false
	}
	v = bytes.TrimSpace(v)
	var s string
	switch {
	case len(v) > 0 && v[0] == '"':
		if plain, isPlain := plainString(v); isPlain {
			s = plain
		} else if err := json.Unmarshal(v, &s); err != nil {
			f.add(name + " must be a string or a number")
			return "", false
		}
	case len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9'):
		s = string(v)
	default:
		f.add(name + " must be a string or a number")
		return "", false
	}
	if strings.TrimSpace(s) == "" {
		return "", false
	}
	if strings.ContainsRune(s, 0) || utf8.RuneCountInString(s) > maxName {
		f.add(name + " must be at most 255 characters without NUL characters")
		return "", false
	}
	return s, true
}

// color returns a #rrggbb member.
func (f *fields) color(name string) (string, bool) {
	s, ok := f.str(name, 7, true)
	if !ok {
		if !f.bad(name) && f.has(name) && !f.isNull(name) {
			f.add(name + " must be a color like #1a2b3c")
		}
		return "", false
	}
	if len(s) != 7 || s[0] != '#' {
		f.add(name + " must be a color like #1a2b3c")
		return "", false
	}
	for i := 1; i < 7; i++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i])) {
			f.add(name + " must be a color like #1a2b3c")
			return "", false
		}
	}
	return strings.ToLower(s), true
}

// oneOf returns a string member that must be one of the allowed values.
func (f *fields) oneOf(name string, allowed ...string) (string, bool) {
	s, ok := f.str(name, 64, true)
	if !ok {
		return "", false
	}
	for _, a := range allowed {
		if s == a {
			return s, true
		}
	}
	f.add(name + " must be one of: " + strings.Join(allowed, ", "))
	return "", false
}

// objectMembers reads a JSON object's members.
func objectMembers(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, errors.New("not an object")
	}
	return obj, nil
}
