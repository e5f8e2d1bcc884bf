package models

import (
	"errors"
	"io"
	"regexp"
	"strings"
	"time"

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
func parseOFX(text string) (*ParsedFile, error) {
	text = strings.TrimLeft(text, " \t\r\n")
	if err := checkOFX(text); err != nil {
		return nil, err
	}
	resp, err := ofxgo.DecodeResponse(strings.NewReader(text))
	if err != nil {
		return nil, Invalid("file is not an OFX or QFX statement that can be read: " + clip(err.Error(), 200))
	}
	p := &ParsedFile{}
	add := func(list *ofxgo.TransactionList) {
		if list == nil {
			return
		}
		for i := range list.Transactions {
			p.Rows = append(p.Rows, ofxRow(&list.Transactions[i], len(p.Rows)+1))
		}
	}
	for _, m := range resp.Bank {
		if st, ok := m.(*ofxgo.StatementResponse); ok {
			add(st.BankTranList)
		}
	}
	for _, m := range resp.CreditCard {
		if st, ok := m.(*ofxgo.CCStatementResponse); ok {
			add(st.BankTranList)
		}
	}
	if len(resp.Bank) == 0 && len(resp.CreditCard) == 0 {
		return nil, Invalid("file holds no bank or credit card statement")
	}
	return p, nil
}

func ofxRow(t *ofxgo.Transaction, pos int) FileRow {
	r := FileRow{Position: pos, ExternalID: strings.TrimSpace(string(t.FiTID))}
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
		if d, err := ParseDate(t.DtPosted.Format(time.DateOnly)); err != nil {
			r.Problems = append(r.Problems, "DTPOSTED is out of range (1900 to 2199)")
		} else {
			r.Date = &d
		}
	}
	r.RawAmount = t.TrnAmt.FloatString(4)
	if a, err := ParseAmountRounded(r.RawAmount); err != nil {
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

// checkOFX refuses what the decoder cannot be trusted with: amounts with
// exponents and elements nested deeper than maxOFXDepth. It reads the file
// with the same tokenizer, iteratively, and without closing SGML leaves
// early, so the depth it sees is at least the decoder's.
func checkOFX(text string) error {
	if !strings.Contains(strings.ToUpper(text[:min(len(text), 4096)]), "OFX") {
		return Invalid("file is not an OFX or QFX file")
	}
	for _, m := range ofxAmountTag.FindAllStringSubmatch(text, -1) {
		if strings.ContainsAny(m[2], "eE/") {
			return Invalid("file is not an OFX or QFX file that can be read: amount " + quote(strings.TrimSpace(m[2])) + " is not a decimal number")
		}
	}
	start := strings.IndexByte(text, '<')
	if start < 0 {
		return Invalid("file is not an OFX or QFX file")
	}
	d := xml.NewDecoder(strings.NewReader(text[start:]))
	d.Strict = false
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	depth := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return nil // the decoder will say what is wrong
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
			if depth > maxOFXDepth {
				return Invalid("file is not an OFX or QFX file that can be read: elements are nested too deeply")
			}
		case xml.EndElement:
			depth--
		}
	}
}
