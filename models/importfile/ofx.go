package importfile

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strings"

	"github.com/aclindsa/ofxgo"
	"github.com/aclindsa/xml"
)

// maxOFXDepth bounds how deeply an OFX file may nest elements. The OFX
// decoder skips unknown elements recursively, so a file of nothing but
// opening tags would otherwise exhaust the stack; real statements nest
// about ten deep (a few more where SGML leaves are left open).
const maxOFXDepth = 200

// ofxAmountTag finds the amounts of an OFX file: the decoder reads them
// with big.Rat, which would take an exponent such as 1e99999999 at its
// word and spend minutes and gigabytes on it.
var ofxAmountTag = regexp.MustCompile(`(?i)<(\w*AMT|\w*BAL|\w*RATE\w*|REWARD\w+|\w*PRICE|UNITS|MKTVAL|TOTAL|MARKUP|MARKDOWN|COMMISSION|FEES|TAXES|LOAD|WITHHOLDING|PENALTY|STATEWITHHOLDING|GAIN|VALUE)>([^<]*)`)

// parseOFX reads an OFX or QFX file (SGML with its headers, or XML) with
// ofxgo: every transaction of its bank and credit card statements. The
// name is NAME, else PAYEE's name, else MEMO; the amount's sign is the
// one the bank sent (negative is money out), turned to the ledger's;
// FITID is the external id.
func parseOFX(text string, each func(Row) error) (*File, error) {
	text = strings.TrimLeft(text, " \t\r\n")
	if err := checkOFX(text); err != nil {
		return nil, err
	}
	// Each transaction of a statement is decoded and handed out as the
	// file is rewritten; the rest, without them, is decoded whole, to
	// check the file. The whole statement decoded at once held 15 times
	// the file's size.
	count := 0
	body, err := ofxAsXML(text, func(elem []byte) error {
		var t ofxgo.Transaction
		if err := xml.NewDecoder(bytes.NewReader(elem)).Decode(&t); err != nil {
			return invalid("file is not an OFX or QFX statement that can be read: " + clip(err.Error(), 200))
		}
		if count >= MaxRows {
			return invalid("file has more than " + itoa(MaxRows) + " rows")
		}
		count++
		return each(ofxRow(&t, count))
	})
	if err != nil {
		return nil, err
	}
	resp, err := ofxgo.DecodeResponse(strings.NewReader(body))
	if err != nil {
		return nil, invalid("file is not an OFX or QFX statement that can be read: " + clip(err.Error(), 200))
	}
	if len(resp.Bank) == 0 && len(resp.CreditCard) == 0 {
		return nil, invalid("file holds no bank or credit card statement")
	}
	return &File{}, nil
}

func ofxRow(t *ofxgo.Transaction, pos int) Row {
	r := Row{Position: pos, ExternalID: strings.TrimSpace(string(t.FiTID))}
	memo := strings.TrimSpace(string(t.Memo))
	switch {
	case strings.TrimSpace(string(t.Name)) != "":
		r.Name, r.Notes = string(t.Name), memo
	case t.Payee != nil && strings.TrimSpace(string(t.Payee.Name)) != "":
		r.Name, r.Notes = string(t.Payee.Name), memo
	default:
		r.Name = memo
	}
	if t.DtPosted.IsZero() {
		r.Problems = append(r.Problems, "DTPOSTED is missing")
	} else {
		r.RawDate = t.DtPosted.Format("20060102")
		// The day the bank wrote, in the zone it wrote it in.
		if d, err := dayOf(t.DtPosted.Time); err != nil {
			r.Problems = append(r.Problems, "DTPOSTED is out of range (1900 to 2199)")
		} else {
			r.Date = &d
		}
	}
	r.RawAmount = t.TrnAmt.FloatString(4)
	if a, err := parseDecimal(r.RawAmount); err != nil {
		r.Problems = append(r.Problems, "TRNAMT "+quote(t.TrnAmt.String())+" is out of range")
	} else {
		a = -a
		r.Amount = &a
	}
	if r.ExternalID == "" {
		r.Problems = append(r.Problems, "FITID is missing")
	}
	finishRow(&r)
	return r
}

// checkOFX refuses amounts with exponents, which the decoder cannot be
// trusted with.
func checkOFX(text string) error {
	if !strings.Contains(strings.ToUpper(text[:min(len(text), 4096)]), "OFX") {
		return invalid("file is not an OFX or QFX file")
	}
	// One match at a time: a list of every match would cost more than
	// the file.
	for rest := text; ; {
		m := ofxAmountTag.FindStringSubmatchIndex(rest)
		if m == nil {
			break
		}
		if v := rest[m[4]:m[5]]; strings.ContainsAny(v, "eE/") {
			return invalid("file is not an OFX or QFX file that can be read: amount " + quote(strings.TrimSpace(v)) + " is not a decimal number")
		}
		rest = rest[m[1]:]
	}
	if n := countFold(text, "<STMTTRN>"); n > MaxRows {
		return invalid("file has more than " + itoa(MaxRows) + " rows")
	}
	return nil
}

// ofxXMLHeader stands in for an SGML file's headers once its body is XML;
// only the statements are read, so the version named is the decoder's
// most lenient.
const ofxXMLHeader = `<?xml version="1.0"?>` + "\n" +
	`<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>` + "\n"

// ofxAsXML rewrites an OFX file's body as XML: every element is closed,
// a leaf left open (SGML's way) just before the next tag, and no element
// nests deeper than maxOFXDepth. The decoder reads SGML itself, but it
// compares each tag with its list of several hundred leaf names, which
// makes a 16 MiB file a minute's work; as XML it is a tenth of that.
// A file that is XML already comes out as it went in, less comments.
// The transactions of bank and credit card statements (STMTTRN in a
// BANKTRANLIST of STMTRS or CCSTMTRS) are left out of it: each, as XML,
// goes to tx as soon as it is closed.
func ofxAsXML(text string, tx func(elem []byte) error) (string, error) {
	start := strings.IndexByte(text, '<')
	if start < 0 {
		return "", invalid("file is not an OFX or QFX file")
	}
	d := xml.NewDecoder(strings.NewReader(text[start:]))
	d.Strict = false
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	var out bytes.Buffer
	out.WriteString(ofxXMLHeader)
	var open []string         // names of the open elements, innermost last
	leaf := false             // the innermost element holds text: SGML's leaf
	childless := false        // the innermost element has no element in it yet
	txDepth, txStart := -1, 0 // the open transaction's depth and where it starts in out
	var txErr error
	closeTop := func() {
		out.WriteString("</" + open[len(open)-1] + ">")
		if len(open) == txDepth {
			if txErr == nil {
				txErr = tx(out.Bytes()[txStart:])
			}
			out.Truncate(txStart)
			txDepth = -1
		}
		open, leaf = open[:len(open)-1], false
	}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", invalid("file is not an OFX or QFX statement that can be read: " + clip(err.Error(), 200))
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if leaf {
				closeTop()
			}
			if len(open) == maxOFXDepth {
				return "", invalid("file is not an OFX or QFX file that can be read: elements are nested too deeply")
			}
			if txDepth < 0 && strings.EqualFold(t.Name.Local, "STMTTRN") && len(open) >= 2 &&
				strings.EqualFold(open[len(open)-1], "BANKTRANLIST") &&
				(strings.EqualFold(open[len(open)-2], "STMTRS") || strings.EqualFold(open[len(open)-2], "CCSTMTRS")) {
				txDepth, txStart = len(open)+1, out.Len()
			}
			open, childless = append(open, t.Name.Local), true
			out.WriteString("<" + t.Name.Local + ">")
		case xml.EndElement:
			// The tokenizer itself ends what a mismatched end tag
			// skips over; an end for a leaf closed here already is
			// dropped.
			i := len(open) - 1
			for i >= 0 && open[i] != t.Name.Local {
				i--
			}
			for i >= 0 && len(open) > i {
				closeTop()
			}
			childless = false
		case xml.CharData:
			if len(open) == 0 || len(bytes.TrimSpace(t)) == 0 {
				continue
			}
			xml.EscapeText(&out, t)
			leaf = childless
		}
		if txErr != nil {
			return "", txErr
		}
	}
	for len(open) > 0 {
		closeTop()
	}
	if txErr != nil {
		return "", txErr
	}
	return out.String(), nil
}

// countFold counts the times tag (upper case) appears in text, in any case.
func countFold(text, tag string) int {
	n := 0
	for i := 0; ; {
		j := strings.IndexByte(text[i:], '<')
		if j < 0 {
			return n
		}
		i += j
		if len(text)-i >= len(tag) && strings.EqualFold(text[i:i+len(tag)], tag) {
			n++
		}
		i++
	}
}
