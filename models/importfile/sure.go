package importfile

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The reference app's family export (its Family::DataExporter): a ZIP
// whose all.ndjson holds one {"type": …, "data": {…}} object a line, the
// records of a family, each with the reference's own ids. A restore reads
// that file (or the all.ndjson alone, which the reference's SureImport
// takes) a line at a time: nothing holds the whole file as one value.

// Sure is the import type of a restore from the reference app's export.
const Sure = "SureImport"

// The limits of a restore's file. A ZIP entry is inflated through a
// counter, so a file that expands past them is refused at the byte that
// crosses the limit, never inflated whole.
const (
	MaxSureExpansion = 10      // times the uploaded file's size
	MaxSureBytes     = 1 << 30 // inflated, whatever the upload's size
	MaxSureLine      = 4 << 20 // one NDJSON line
)

// sureEntry is the export's file of records.
const sureEntry = "all.ndjson"

// SureError says why a restore's file cannot be restored: Line is the
// all.ndjson line (from 1) the problem is on, 0 for the file as a whole.
// Callers answer it as a validation failure (422), and nothing is written.
type SureError struct {
	Line   int
	Reason string
}

func (e *SureError) Error() string {
	if e.Line == 0 {
		return "importfile: " + e.Reason
	}
	return fmt.Sprintf("importfile: line %d: %s", e.Line, e.Reason)
}

func lineErr(line int, format string, args ...any) error {
	return &SureError{Line: line, Reason: fmt.Sprintf(format, args...)}
}

var errExpands = errors.New("expands too far")

// capped counts what is read through it and fails past limit.
type capped struct {
	r     io.Reader
	n     int64
	limit int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.n > c.limit {
		return 0, errExpands
	}
	if int64(len(p)) > c.limit-c.n+1 {
		p = p[:c.limit-c.n+1]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.limit {
		return n, errExpands
	}
	return n, err
}

// expansionLimit is how many bytes a file of size bytes may inflate to.
func expansionLimit(size int) int64 {
	return min(int64(size)*MaxSureExpansion, MaxSureBytes)
}

// openSure returns the NDJSON of file: the all.ndjson of a ZIP, inflated
// through the limits, or the file itself when it is NDJSON.
func openSure(file []byte) (io.ReadCloser, error) {
	if !bytes.HasPrefix(file, []byte("PK\x03\x04")) && !bytes.HasPrefix(file, []byte("PK\x05\x06")) {
		if !looksNDJSON(file) {
			return nil, &SureError{Reason: "the file is neither a ZIP of the reference app's export nor NDJSON"}
		}
		return io.NopCloser(bytes.NewReader(file)), nil
	}
	zr, err := zip.NewReader(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		return nil, &SureError{Reason: "the ZIP file is truncated or damaged"}
	}
	limit := expansionLimit(len(file))
	for _, f := range zr.File {
		if f.Name != sureEntry {
			continue
		}
		if f.UncompressedSize64 > uint64(limit) {
			return nil, &SureError{Reason: expandsReason(len(file))}
		}
		rc, err := f.Open()
		if err != nil {
			return nil, &SureError{Reason: "the ZIP's " + sureEntry + " cannot be read: " + zipReason(err)}
		}
		return struct {
			io.Reader
			io.Closer
		}{&capped{r: rc, limit: limit}, rc}, nil
	}
	return nil, &SureError{Reason: "the ZIP holds no " + sureEntry + " (is it the reference app's export?)"}
}

func expandsReason(size int) string {
	return fmt.Sprintf("the file expands past %d times its size or past %d MiB", MaxSureExpansion, MaxSureBytes>>20)
}

func zipReason(err error) string {
	switch {
	case errors.Is(err, zip.ErrAlgorithm):
		return "it is compressed with a method other than deflate"
	case errors.Is(err, zip.ErrChecksum):
		return "its checksum does not match (a damaged file)"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "it is truncated"
	}
	return "it is damaged"
}

// looksNDJSON reports whether the first line that is not blank is a JSON
// object with a type and data, as the reference's valid_ndjson_first_line?.
func looksNDJSON(file []byte) bool {
	for len(file) > 0 {
		line, rest, _ := bytes.Cut(file, []byte("\n"))
		file = rest
		if line = bytes.TrimSpace(line); len(line) == 0 {
			continue
		}
		var top struct {
			Type *string         `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		return json.Unmarshal(line, &top) == nil && top.Type != nil && len(top.Data) > 0
	}
	return false
}

// eachLine calls fn with every line of the file's NDJSON that is not
// blank, and its number. The line is valid only during the call.
func eachLine(file []byte, fn func(n int, line []byte) error) error {
	rc, err := openSure(file)
	if err != nil {
		return err
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 64<<10)
	var long []byte
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) && len(long) <= MaxSureLine {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			if len(long) > MaxSureLine {
				return lineErr(n, "the line is longer than %d MiB", MaxSureLine>>20)
			}
			line = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			if errors.Is(err, errExpands) {
				return lineErr(n, "%s", expandsReason(len(file)))
			}
			return lineErr(n, "the ZIP's %s cannot be read: %s", sureEntry, zipReason(err))
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if ferr := fn(n, t); ferr != nil {
				return ferr
			}
		}
		if err != nil { // io.EOF
			return nil
		}
	}
}
