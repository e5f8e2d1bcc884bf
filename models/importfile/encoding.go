package importfile

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	xunicode "golang.org/x/text/encoding/unicode"
	"golang.org/x/text/encoding/unicode/utf32"
	"golang.org/x/text/transform"
)

// The character encodings an import reads its file in. An empty encoding
// is detected from the file's bytes (DetectEncoding).
const (
	UTF8        = "utf-8"
	Windows1252 = "windows-1252"
	ISO88591    = "iso-8859-1"
	UTF16       = "utf-16"
)

// Encodings lists the encodings in the order screens offer them.
var Encodings = []string{UTF8, Windows1252, ISO88591, UTF16}

// EncodingNames are how screens name the encodings.
var EncodingNames = map[string]string{
	"":          "Detect from the file",
	UTF8:        "UTF-8",
	Windows1252: "Windows-1252 (Western European, Excel on Windows)",
	ISO88591:    "ISO-8859-1 (Latin-1)",
	UTF16:       "UTF-16",
}

// NormalizeEncoding turns the usual spellings of an encoding's name into
// ours; ok is false for an encoding we do not read.
func NormalizeEncoding(name string) (string, bool) {
	switch strings.NewReplacer("_", "-", " ", "").Replace(strings.ToLower(strings.TrimSpace(name))) {
	case "", "auto", "detect":
		return "", true
	case "utf-8", "utf8":
		return UTF8, true
	case "windows-1252", "cp1252", "windows1252", "win1252", "ansi":
		return Windows1252, true
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1":
		return ISO88591, true
	case "utf-16", "utf16", "utf-16le", "utf-16be", "ucs-2":
		return UTF16, true
	}
	return "", false
}

// DetectEncoding names the encoding a file's bytes are in: a byte order
// mark says so; failing that, a file with a NUL in every other byte of
// its start is UTF-16; valid UTF-8 is UTF-8; anything else is
// Windows-1252, what spreadsheet programs on Windows write (ISO-8859-1
// reads the same for every letter, and Windows-1252 adds €, „ and the
// like where ISO-8859-1 has control codes).
func DetectEncoding(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\xEF\xBB\xBF")):
		return UTF8
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE, 0, 0}), bytes.HasPrefix(data, []byte{0, 0, 0xFE, 0xFF}):
		return "utf-32"
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return UTF16
	}
	if looksUTF16(data) {
		return UTF16
	}
	if utf8.Valid(data) {
		return UTF8
	}
	return Windows1252
}

// looksUTF16 reports whether most of the first pairs of bytes hold one NUL:
// text of Latin letters in UTF-16 without a byte order mark.
func looksUTF16(data []byte) bool {
	n := min(len(data), 512) &^ 1
	if n < 8 {
		return false
	}
	nul := 0
	for i := 0; i < n; i += 2 {
		if (data[i] == 0) != (data[i+1] == 0) {
			nul++
		}
	}
	return nul*10 >= (n/2)*9
}

// decode turns a file in an encoding (detected when empty) into UTF-8.
func decode(data []byte, enc string) ([]byte, error) {
	if enc == "" {
		enc = DetectEncoding(data)
	}
	var dec *encoding.Decoder
	switch enc {
	case UTF8:
		data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
		if !utf8.Valid(data) {
			return nil, invalid("file is not valid UTF-8 text: choose the encoding it was saved in (Windows-1252 for most spreadsheet exports)")
		}
		return data, nil
	case "utf-32":
		dec = utf32.UTF32(utf32.BigEndian, utf32.UseBOM).NewDecoder()
	case UTF16:
		order := xunicode.LittleEndian // what Windows writes without a mark
		if len(data) >= 2 && data[0] == 0 && data[1] != 0 {
			order = xunicode.BigEndian
		}
		dec = xunicode.UTF16(order, xunicode.UseBOM).NewDecoder()
	case Windows1252:
		dec = charmap.Windows1252.NewDecoder()
	case ISO88591:
		dec = charmap.ISO8859_1.NewDecoder()
	default:
		return nil, invalid("encoding must be one of: " + strings.Join(Encodings, ", "))
	}
	out, _, err := transform.Bytes(dec, data)
	if err != nil {
		return nil, invalid("file is not valid " + EncodingNames[enc] + " text")
	}
	return bytes.TrimPrefix(out, []byte("\xEF\xBB\xBF")), nil
}
