package screens

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// form is a submitted HTML form: the values as typed, kept to re-render
// the form, and the problem of each field, shown beside it.
type form struct {
	c      *fiber.Ctx
	Values map[string]string
	Errors map[string]string
	// numbers is how the family writes amounts (amountForm sets it).
	numbers numberFormat
}

func newForm(c *fiber.Ctx) *form {
	return &form{c: c, Values: map[string]string{}, Errors: map[string]string{}, numbers: pointDecimals}
}

// amountForm is newForm for a form with amounts, which reads and shows
// them as the family writes them.
func (h *Handler) amountForm(c *fiber.Ctx) (*form, error) {
	fam, err := h.store.Family(c.UserContext(), web.SessionOf(c).User.FamilyID)
	if err != nil {
		return nil, err
	}
	f := newForm(c)
	f.numbers = familyNumbers(fam)
	return f, nil
}

// amountValue is an amount as the form shows it to be typed again:
// positive, in the family's format without grouping, with at least two
// decimals ("1234.50", or "1234,50" where a comma starts the decimals).
func (f *form) amountValue(a money.Amount) string {
	v := amountValue(a)
	if f.numbers.Decimal != '.' {
		v = strings.Replace(v, ".", string(f.numbers.Decimal), 1)
	}
	return v
}

// value reads a field once, trimmed and copied out of fiber's buffer.
func (f *form) value(name string) string {
	if v, ok := f.Values[name]; ok {
		return v
	}
	v := strings.Clone(strings.TrimSpace(f.c.FormValue(name)))
	f.Values[name] = v
	return v
}

func (f *form) fail(name, msg string) {
	if _, dup := f.Errors[name]; !dup {
		f.Errors[name] = msg
	}
}

func (f *form) ok() bool { return len(f.Errors) == 0 }

// text reads a line of text of at most max characters.
func (f *form) text(name, label string, max int, required bool) string {
	v := f.value(name)
	switch {
	case v == "" && required:
		f.fail(name, label+" can't be blank.")
	case utf8.RuneCountInString(v) > max:
		f.fail(name, label+" must be at most "+strconv.Itoa(max)+" characters.")
	case strings.ContainsRune(v, 0) || !utf8.ValidString(v):
		f.fail(name, label+" contains characters that cannot be stored.")
	}
	return v
}

// amount reads a positive amount such as 12.50 (the sign is a separate
// choice on every form, so a person never types a minus).
func (f *form) amount(name, label string, required bool) (money.Amount, bool) {
	v := f.value(name)
	if v == "" {
		if required {
			f.fail(name, label+" can't be blank.")
		}
		return 0, false
	}
	a, ok := f.numbers.parse(v)
	if !ok {
		f.fail(name, label+f.numbers.hint())
		return 0, false
	}
	return a, true
}

// date reads a YYYY-MM-DD date.
func (f *form) date(name, label string, required bool) (civil.Date, bool) {
	v := f.value(name)
	if v == "" {
		if required {
			f.fail(name, label+" can't be blank.")
		}
		return "", false
	}
	d, err := civil.ParseDate(v)
	if err != nil {
		f.fail(name, label+" must be a date such as 2026-01-31.")
		return "", false
	}
	return d, true
}

// id reads an optional id from a select; "" is none.
func (f *form) id(name, label string) *uuid.UUID {
	v := f.value(name)
	if v == "" {
		return nil
	}
	id, err := uuid.Parse(v)
	if err != nil {
		f.fail(name, label+" is not one of the choices.")
		return nil
	}
	return &id
}

// ids reads every value of a multi-valued field (checkboxes).
func (f *form) ids(name string) []uuid.UUID {
	var out []uuid.UUID
	args := f.c.Request().PostArgs()
	for _, raw := range args.PeekMulti(name) {
		if id, err := uuid.ParseBytes(raw); err == nil {
			out = append(out, id)
		}
	}
	return out
}

// oneOf reads a field that must be one of the allowed values.
func (f *form) oneOf(name, label string, allowed ...string) string {
	v := f.value(name)
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	f.fail(name, label+" is not one of the choices.")
	return ""
}

// pageOf reads ?page= (from 1) for a list of size rows a page.
func pageOf(c *fiber.Ctx, size int) models.Page {
	p := models.Page{Number: 1, Size: size}
	if n, err := strconv.Atoi(c.Query("page")); err == nil && n > 0 && n < 1_000_000 {
		p.Number = n
	}
	return p
}

// clipQuery bounds a search box's text.
func clipQuery(s string) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > 100 {
		s = string([]rune(s)[:100])
	}
	return strings.Clone(strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), ""))
}

// stamp is a row's version as a form carries it, to tell a stale form.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// byPath calls fn with the signed-in family and the :id of the path; an
// id that is not a UUID is a 404 without a lookup.
func byPath[T any](c *fiber.Ctx, fn func(ctx context.Context, familyID, id uuid.UUID) (T, error)) (T, error) {
	id, err := httperr.PathID(c)
	if err != nil {
		var zero T
		return zero, err
	}
	return fn(c.UserContext(), web.SessionOf(c).User.FamilyID, id)
}
