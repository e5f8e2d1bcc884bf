package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/money"
)

// Transfer links the outflow on one account of a family to the inflow on
// another: money that moved, not money spent.
type Transfer struct {
	bun.BaseModel `bun:"table:transfers,alias:tr"`

	ID                   uuid.UUID `bun:"id,pk"`
	FamilyID             uuid.UUID `bun:"family_id"`
	InflowTransactionID  uuid.UUID `bun:"inflow_transaction_id"`
	OutflowTransactionID uuid.UUID `bun:"outflow_transaction_id"`
	Status               string    `bun:"status"`
	Notes                *string   `bun:"notes"`
	CreatedAt            time.Time `bun:"created_at"`
	UpdatedAt            time.Time `bun:"updated_at"`

	Inflow  *Transaction `bun:"rel:belongs-to,join:inflow_transaction_id=id,join:family_id=family_id"`
	Outflow *Transaction `bun:"rel:belongs-to,join:outflow_transaction_id=id,join:family_id=family_id"`
}

// ImpliedRate is the rate the two sides imply: units of the inflow's
// currency per unit of the outflow's. ok is false for a transfer within
// one currency (no rate to show) or a side missing.
func (tr *Transfer) ImpliedRate() (money.Rate, bool) {
	if tr.Inflow == nil || tr.Outflow == nil || tr.Inflow.Currency == tr.Outflow.Currency {
		return money.Rate{}, false
	}
	return money.RateBetween(tr.Outflow.Amount, tr.Inflow.Amount)
}

// NewTransfer is what a client asks for: Amount (positive) leaves From
// on Date, in From's currency, and arrives in To. Between accounts of two
// currencies, ToAmount is what arrived, in To's currency (required);
// within one currency it is not used.
type NewTransfer struct {
	FromAccountID uuid.UUID
	ToAccountID   uuid.UUID
	Amount        money.Amount
	ToAmount      money.Amount
	Date          civil.Date
	Name          string // optional; defaults to "Transfer to <account>"
	Notes         *string
}

func (s *Store) transferSelect(model any, familyID uuid.UUID) *bun.SelectQuery {
	return s.db.NewSelect().Model(model).
		Relation("Inflow").Relation("Inflow.Account").
		Relation("Outflow").Relation("Outflow.Account").
		Where("tr.family_id = ?", familyID)
}

// Transfers lists a page of the family's transfers, newest first.
func (s *Store) Transfers(ctx context.Context, familyID uuid.UUID, p Page) ([]Transfer, int, error) {
	var trs []Transfer
	n, err := p.scan(ctx, s.transferSelect(&trs, familyID).
		OrderExpr("tr.created_at DESC, tr.id DESC"))
	return trs, n, dbErr("list transfers", err)
}

// Transfer returns one transfer of the family with both transactions.
func (s *Store) Transfer(ctx context.Context, familyID, id uuid.UUID) (*Transfer, error) {
	tr := new(Transfer)
	err := s.transferSelect(tr, familyID).Where("tr.id = ?", id).Scan(ctx)
	return tr, dbErr("get transfer", err)
}

// CreateTransfer writes both transactions and the link in one database
// transaction and returns the transfer's id.
func (s *Store) CreateTransfer(ctx context.Context, familyID uuid.UUID, nt NewTransfer) (uuid.UUID, error) {
	id := NewID()
	err := s.RunInTx(ctx, func(tx *Store) error {
		from, to, err := tx.transferAccounts(ctx, familyID, nt)
		if err != nil {
			return err
		}
		amount, arrived := nt.Amount.Abs(), nt.Amount.Abs()
		if from.Currency != to.Currency {
			arrived = nt.ToAmount
		}
		outName, inName := nt.Name, nt.Name
		if outName == "" {
			outName, inName = "Transfer to "+to.Name, "Transfer from "+from.Name
		}
		out := &Transaction{FamilyID: familyID, AccountID: from.ID, Date: nt.Date, Amount: amount, Currency: from.Currency, Name: outName}
		in := &Transaction{FamilyID: familyID, AccountID: to.ID, Date: nt.Date, Amount: -arrived, Currency: to.Currency, Name: inName}
		for _, t := range []*Transaction{out, in} {
			t.ID = NewID()
			t.CreatedAt = tx.now()
			t.UpdatedAt = t.CreatedAt
			madeFingerprint(t)
		}
		// Both legs in one statement: its balance move takes the two
		// accounts in id order, so that opposite transfers made at once
		// never wait on each other in a circle.
		legs := []Transaction{*out, *in}
		if _, err := tx.db.NewInsert().Model(&legs).Exec(ctx); err != nil {
			return dbErr("create transfer transaction", err)
		}
		tx.balanceChange(ctx, familyID, from.ID, to.ID)
		tr := &Transfer{ID: id, FamilyID: familyID, InflowTransactionID: in.ID, OutflowTransactionID: out.ID,
			Status: "confirmed", Notes: nt.Notes, CreatedAt: tx.now()}
		tr.UpdatedAt = tr.CreatedAt
		_, err = tx.db.NewInsert().Model(tr).Exec(ctx)
		return dbErr("create transfer", err)
	})
	return id, err
}

func (s *Store) transferAccounts(ctx context.Context, familyID uuid.UUID, nt NewTransfer) (from, to *Account, err error) {
	var problems []string
	get := func(id uuid.UUID, label string) *Account {
		a, err2 := s.Account(ctx, familyID, id)
		switch {
		case errors.Is(err2, ErrNotFound):
			problems = append(problems, label+" account not found")
			return nil
		case err2 != nil:
			err = err2
			return nil
		case a.Status != AccountActive:
			problems = append(problems, label+" account is not active")
		}
		return a
	}
	from = get(nt.FromAccountID, "Source")
	to = get(nt.ToAccountID, "Destination")
	if err != nil {
		return nil, nil, err
	}
	if nt.FromAccountID == nt.ToAccountID {
		problems = append(problems, "Source and destination accounts must differ")
	}
	if nt.Amount == 0 {
		problems = append(problems, "Amount must not be zero")
	}
	if from != nil && to != nil && from.Currency != to.Currency && nt.ToAmount <= 0 {
		problems = append(problems, fmt.Sprintf("to_amount, what arrived in %s, must be a positive amount when the accounts' currencies differ (%s to %s)",
			to.Currency, from.Currency, to.Currency))
	}
	if len(problems) > 0 {
		return nil, nil, Invalid(problems...)
	}
	return from, to, nil
}

// DeleteTransfer removes a transfer and both of its transactions and
// returns the two accounts whose balances change. A side a finished
// reconciliation locked is refused (ErrReconciled).
func (s *Store) DeleteTransfer(ctx context.Context, familyID, id uuid.UUID) (accounts []uuid.UUID, err error) {
	err = s.RunInTx(ctx, func(tx *Store) error {
		tr, err := tx.Transfer(ctx, familyID, id)
		if err != nil {
			return err
		}
		accounts = []uuid.UUID{tr.Outflow.AccountID, tr.Inflow.AccountID}
		locked, err := tx.db.NewSelect().Model((*Transaction)(nil)).Where("family_id = ?", familyID).
			Where("id IN (?)", bun.List([]uuid.UUID{tr.InflowTransactionID, tr.OutflowTransactionID})).
			Where("reconciliation_id IS NOT NULL").Count(ctx)
		if err != nil {
			return dbErr("check transfer sides", err)
		}
		if locked > 0 {
			return ErrReconciled
		}
		tx.balanceChange(ctx, familyID, accounts...)
		_, err = tx.db.NewDelete().Model((*Transaction)(nil)).
			Where("family_id = ?", familyID).
			Where("id IN (?)", bun.List([]uuid.UUID{tr.InflowTransactionID, tr.OutflowTransactionID})).
			Exec(ctx)
		return dbErr("delete transfer", err)
	})
	return accounts, err
}
