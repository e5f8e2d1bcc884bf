package importfile

import (
	"io"
	"strconv"
	"strings"
)

// csvReader reads the records of a CSV text one at a time, as encoding/csv
// does with LazyQuotes (a quote inside a field is kept; a quoted field
// left open runs to the end of the file; empty lines are skipped), but it
// refuses a record of more than MaxColumns fields or MaxLineBytes bytes
// while reading it, so that no record costs more than those bounds.
// Unquoted fields are slices of the text, not copies.
type csvReader struct {
	text   string
	sep    byte
	pos    int
	line   int // the line pos is on, from 1
	start  int // the line the last record read starts on
	fields []string
}

func newCSVReader(text string, sep byte) *csvReader {
	return &csvReader{text: text, sep: sep, line: 1}
}

// read returns the next record (valid until the next call), or io.EOF.
func (r *csvReader) read() ([]string, error) {
	for r.pos < len(r.text) {
		if r.text[r.pos] == '\n' {
			r.pos, r.line = r.pos+1, r.line+1
		} else if strings.HasPrefix(r.text[r.pos:], "\r\n") {
			r.pos, r.line = r.pos+2, r.line+1
		} else {
			break
		}
	}
	if r.pos >= len(r.text) {
		return nil, io.EOF
	}
	start, startLine := r.pos, r.line
	r.start = startLine
	r.fields = r.fields[:0]
	for {
		if len(r.fields) == MaxColumns {
			return nil, invalid("line " + strconv.Itoa(startLine) + " has more than " + strconv.Itoa(MaxColumns) + " columns")
		}
		field, more := r.field(start + MaxLineBytes)
		if r.pos-start > MaxLineBytes {
			return nil, invalid("line " + strconv.Itoa(startLine) + " is longer than " + strconv.Itoa(MaxLineBytes>>10) + " KiB")
		}
		r.fields = append(r.fields, field)
		if !more {
			return r.fields, nil
		}
	}
}

// field reads one field from pos and reports whether the record goes on.
// It reads no further than limit (and one byte), which the caller refuses.
func (r *csvReader) field(limit int) (string, bool) {
	end := min(len(r.text), limit+1)
	if r.pos < end && r.text[r.pos] == '"' {
		return r.quoted(end)
	}
	rest := r.text[r.pos:end]
	i := strings.IndexAny(rest, string([]byte{r.sep, '\n'}))
	if i < 0 { // the end of the file, or of what may be read
		r.pos = end
		return rest, false
	}
	f := rest[:i]
	r.pos += i + 1
	if rest[i] == r.sep {
		return f, true
	}
	r.line++
	return strings.TrimSuffix(f, "\r"), false
}

// quoted reads a field that opens with a quote: a doubled quote is one
// quote, a quote followed by anything but a separator or the end of the
// line is kept, and \r\n is \n.
func (r *csvReader) quoted(end int) (string, bool) {
	var b strings.Builder
	r.pos++
	for r.pos < end {
		i := strings.IndexAny(r.text[r.pos:end], "\"\n")
		if i < 0 {
			b.WriteString(r.text[r.pos:end])
			r.pos = end
			break
		}
		chunk := r.text[r.pos : r.pos+i]
		c := r.text[r.pos+i]
		r.pos += i + 1
		if c == '\n' {
			b.WriteString(strings.TrimSuffix(chunk, "\r"))
			b.WriteByte('\n')
			r.line++
			continue
		}
		b.WriteString(chunk)
		switch {
		case r.pos < len(r.text) && r.text[r.pos] == '"':
			b.WriteByte('"')
			r.pos++
		case r.pos >= len(r.text):
			return b.String(), false
		case r.text[r.pos] == r.sep:
			r.pos++
			return b.String(), true
		case r.text[r.pos] == '\n':
			r.pos, r.line = r.pos+1, r.line+1
			return b.String(), false
		case strings.HasPrefix(r.text[r.pos:], "\r\n"):
			r.pos, r.line = r.pos+2, r.line+1
			return b.String(), false
		default:
			b.WriteByte('"')
		}
	}
	return b.String(), false
}
