package screens

import (
	"context"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/importfile"
	"coffer/models/money"
)

// ledgerOffer is an OFX statement's ledger balance offered, once the
// import is published, as the account's balance at the end of its day:
// the bank's figure, shown the ledger's way (what is owed, for a card or
// a loan), beside what the ledger makes of that day now.
type ledgerOffer struct {
	Date   civil.Date
	Amount money.Amount
	Value  string // Amount as the value form reads it, in the family's format
	Ledger money.Amount
}

// offerLedger reads the statement's LEDGERBAL of a published OFX import;
// nil when there is none or the account is gone.
func (h *Handler) offerLedger(ctx context.Context, f *form, im *models.Import, a *models.Account) (*ledgerOffer, error) {
	if a == nil || a.ID == uuid.Nil || im.Type != importfile.OFX || im.Status != models.ImportComplete {
		return nil, nil
	}
	lb, ok := importfile.OFXLedgerBalance(im.RawFile)
	if !ok {
		return nil, nil
	}
	o := &ledgerOffer{Date: civil.Date(lb.Date), Amount: money.Amount(lb.Amount)}
	switch a.AccountType { // as a bank sync reads a bank's balance
	case "credit_card":
		o.Amount = -o.Amount
	case "loan":
		o.Amount = o.Amount.Abs()
	}
	o.Value = f.amountValue(o.Amount)
	if o.Amount < 0 {
		o.Value = "-" + o.Value
	}
	var err error
	o.Ledger, err = h.store.BalanceOn(ctx, a.FamilyID, a.ID, o.Date)
	return o, err
}
