package cli

import (
	"cmp"
	"encoding"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Env reads settings through Getenv (main passes os.Getenv: it stays the
// only reader of the environment) and notes every bad variable, so that
// all are reported at once.
type Env struct {
	Getenv   func(string) string
	problems []string
}

// Problem notes a bad setting.
func (e *Env) Problem(format string, args ...any) {
	e.problems = append(e.problems, fmt.Sprintf(format, args...))
}

// Err lists every problem noted, one per line; nil when there is none.
func (e *Env) Err() error {
	if len(e.problems) == 0 {
		return nil
	}
	return errors.New("  " + strings.Join(e.problems, "\n  "))
}

// Set reports whether variable name has a non-blank value.
func (e *Env) Set(name string) bool { return strings.TrimSpace(e.Getenv(name)) != "" }

// Fill sets every field of the struct that dst points to that is tagged
// `env`, and descends into its untagged struct fields: the options that
// packages take whole, whose fields carry their own tags. A tag names the
// variable and may give its `default`, its bounds (`min`, `max`, both
// needed for a number), the values allowed (`oneof`, space-separated) or,
// for a field that unmarshals its own text, what it wants (`want`).
func (e *Env) Fill(dst any) {
	e.fill(reflect.ValueOf(dst).Elem())
}

func (e *Env) fill(v reflect.Value) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if name, ok := f.Tag.Lookup("env"); ok {
			e.set(v.Field(i), name, f.Tag)
		} else if f.IsExported() && f.Type.Kind() == reflect.Struct {
			e.fill(v.Field(i))
		}
	}
}

// set parses variable name, or the tag's default when it is blank, into
// the field v: a string, a whole number, a bool, a positive duration, a
// comma-separated list, a secrets key or a list of them, or a text the
// field unmarshals itself.
func (e *Env) set(v reflect.Value, name string, tag reflect.StructTag) {
	raw := cmp.Or(strings.TrimSpace(e.Getenv(name)), tag.Get("default"))
	if raw == "" {
		return
	}
	bad := func(want string) { e.Problem("%s must be %s, got %q", name, want, raw) }
	switch p := v.Addr().Interface().(type) {
	case *string:
		if allowed := strings.Fields(tag.Get("oneof")); len(allowed) > 0 && !slices.Contains(allowed, raw) {
			bad("one of " + strings.Join(allowed, ", "))
		}
		*p = raw
	case *int, *int64:
		lo, _ := strconv.Atoi(tag.Get("min"))
		hi, _ := strconv.Atoi(tag.Get("max"))
		n, err := strconv.Atoi(raw)
		if err != nil || n < lo || n > hi {
			bad(fmt.Sprintf("a whole number from %d to %d", lo, hi))
		}
		v.SetInt(int64(n))
	case *bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			bad("true or false")
		}
		*p = b
	case *time.Duration:
		if d, err := time.ParseDuration(raw); err != nil || d <= 0 {
			bad("a positive duration such as 15m or 168h")
		} else {
			*p = d
		}
	case *[]string:
		*p = list(raw)
	case *[]byte:
		*p = e.key(name, raw)
	case *[][]byte:
		for _, k := range list(raw) {
			*p = append(*p, e.key(name, k))
		}
	case encoding.TextUnmarshaler:
		if p.UnmarshalText([]byte(raw)) != nil {
			bad(tag.Get("want"))
		}
	default:
		panic(fmt.Sprintf("cli: %s has a type that Env cannot read", name))
	}
}

// list is the non-blank items of a comma-separated value, trimmed.
func list(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// key decodes a secrets key: the Base64 of 32 bytes, or 64 hex digits
// (what `openssl rand -hex 32` and Heroku's secret generator make).
func (e *Env) key(name, v string) []byte {
	b, err := hex.DecodeString(v)
	if len(v) != 64 || err != nil {
		b, err = base64.StdEncoding.DecodeString(v)
	}
	if err != nil || len(b) != 32 {
		e.Problem("%s must be the Base64 of exactly 32 bytes (openssl rand -base64 32) or 64 hex digits", name)
		return nil
	}
	return b
}

// Print writes every tagged setting of the struct that src points to as
// NAME=value, one per line in declaration order. A field tagged
// `secret:"true"` shows only whether it is set; one tagged `secret:"url"`
// shows its URL with the password masked.
func Print(w io.Writer, src any) {
	printFields(w, reflect.ValueOf(src).Elem())
}

func printFields(w io.Writer, v reflect.Value) {
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		name, ok := f.Tag.Lookup("env")
		if !ok {
			if f.IsExported() && f.Type.Kind() == reflect.Struct {
				printFields(w, fv)
			}
			continue
		}
		val := fmt.Sprint(fv.Interface())
		switch x := fv.Interface().(type) {
		case []string:
			val = strings.Join(x, ",")
		case []byte:
			val = strings.Repeat("*", min(len(x), 8))
		case [][]byte:
			val = fmt.Sprintf("%d keys", len(x))
		}
		switch f.Tag.Get("secret") {
		case "true":
			if val != "" {
				val = "********"
			}
		case "url":
			if u, err := url.Parse(val); err == nil {
				val = u.Redacted()
			}
		}
		fmt.Fprintf(w, "%s=%s\n", name, val)
	}
}
