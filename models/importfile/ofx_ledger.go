package importfile

import (
	"strings"

	"github.com/aclindsa/ofxgo"
)

// LedgerBalance is a statement's ledger balance (LEDGERBAL): BALAMT as
// the bank sent it (ten-thousandths, its sign: what a card owes is
// usually below zero) at the end of DTASOF's day (YYYY-MM-DD).
type LedgerBalance struct {
	Amount int64
	Date   string
}

// OFXLedgerBalance reads the ledger balance of an OFX or QFX file's first
// bank or credit card statement; false when the file has none that can be
// read (a missing or out-of-range figure or day).
func OFXLedgerBalance(text string) (LedgerBalance, bool) {
	text = strings.TrimLeft(text, " \t\r\n")
	if checkOFX(text) != nil {
		return LedgerBalance{}, false
	}
	body, err := ofxAsXML(text, func([]byte) error { return nil })
	if err != nil {
		return LedgerBalance{}, false
	}
	resp, err := ofxgo.DecodeResponse(strings.NewReader(body))
	if err != nil {
		return LedgerBalance{}, false
	}
	var amt ofxgo.Amount
	var asOf ofxgo.Date
	switch {
	case len(resp.Bank) > 0:
		st, ok := resp.Bank[0].(*ofxgo.StatementResponse)
		if !ok {
			return LedgerBalance{}, false
		}
		amt, asOf = st.BalAmt, st.DtAsOf
	case len(resp.CreditCard) > 0:
		st, ok := resp.CreditCard[0].(*ofxgo.CCStatementResponse)
		if !ok {
			return LedgerBalance{}, false
		}
		amt, asOf = st.BalAmt, st.DtAsOf
	default:
		return LedgerBalance{}, false
	}
	if asOf.IsZero() {
		return LedgerBalance{}, false
	}
	a, err := parseDecimal(amt.FloatString(4))
	if err != nil {
		return LedgerBalance{}, false
	}
	day, err := dayOf(asOf.Time)
	if err != nil {
		return LedgerBalance{}, false
	}
	return LedgerBalance{Amount: a, Date: day}, true
}
