package models

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/money"
)

// Account statuses.
const (
	AccountActive          = "active"
	AccountDisabled        = "disabled"
	AccountPendingDeletion = "pending_deletion"
)

// AccountTypes lists every account type; the last three are liabilities.
var AccountTypes = []string{"depository", "investment", "crypto", "property", "vehicle", "other_asset", "credit_card", "loan", "other_liability"}

// Account is a place money is kept or owed.
type Account struct {
	bun.BaseModel `bun:"table:accounts,alias:a"`

	ID             uuid.UUID    `bun:"id,pk"`
	FamilyID       uuid.UUID    `bun:"family_id"`
	Name           string       `bun:"name"`
	AccountType    string       `bun:"account_type,nullzero"` // "": untyped (NULL), counted as an asset
	Subtype        *string      `bun:"subtype"`
	Currency       string       `bun:"currency"`
	Status         string       `bun:"status"`
	OpeningBalance money.Amount `bun:"opening_balance"`
	Balance        money.Amount `bun:"balance"` // derived; see RecalculateBalance
	CashBalance    money.Amount `bun:"cash_balance"`
	// OpeningDate is what CreateAccount and UpdateAccount date the opening
	// balance with (nil: the day before the first transaction); it is
	// kept on the opening valuation, not read back here (see OpeningDate).
	OpeningDate       *civil.Date `bun:"-"`
	InstitutionName   *string     `bun:"institution_name"`
	InstitutionDomain *string     `bun:"institution_domain"`
	BalanceUpdatedAt  *time.Time  `bun:"balance_updated_at"`
	BalanceError      *string     `bun:"balance_error"` // nil, or BalanceOverflow: Balance is the last that could be computed
	CreatedAt         time.Time   `bun:"created_at"`
	UpdatedAt         time.Time   `bun:"updated_at"`
}

// BalanceOverflow is the balance error of an account whose transactions
// add up to more than an Amount holds.
const BalanceOverflow = "overflow"

// ValidAccountType reports whether t is a known account type.
func ValidAccountType(t string) bool {
	for _, v := range AccountTypes {
		if v == t {
			return true
		}
	}
	return false
}

// ValidAccountStatus reports whether st is a known account status.
func ValidAccountStatus(st string) bool {
	return st == AccountActive || st == AccountDisabled || st == AccountPendingDeletion
}

// Liability reports whether a balance of this type is money owed.
func Liability(accountType string) bool {
	return accountType == "credit_card" || accountType == "loan" || accountType == "other_liability"
}

// Classification is "liability" or "asset".
func (a *Account) Classification() string {
	if Liability(a.AccountType) {
		return "liability"
	}
	return "asset"
}

// Accounts lists a page of the family's accounts, oldest first.
func (s *Store) Accounts(ctx context.Context, familyID uuid.UUID, p Page) ([]Account, int, error) {
	var as []Account
	n, err := p.scan(ctx, s.db.NewSelect().Model(&as).
		Where("a.family_id = ?", familyID).
		OrderExpr("a.created_at ASC, a.id ASC"))
	return as, n, dbErr("list accounts", err)
}

// Account returns one account of the family.
func (s *Store) Account(ctx context.Context, familyID, id uuid.UUID) (*Account, error) {
	return oneOf[Account](ctx, s, familyID, id, "get account")
}

// CreateAccount inserts an account and its opening valuation (dated
// a.OpeningDate, or undated: the day before the first transaction); its
// balance starts at the opening balance.
func (s *Store) CreateAccount(ctx context.Context, a *Account) error {
	a.ID = NewID()
	a.CreatedAt = s.now()
	a.UpdatedAt = a.CreatedAt
	if a.Status == "" {
		a.Status = AccountActive
	}
	a.Balance = a.OpeningBalance
	a.CashBalance = cashPart(a.AccountType, a.Balance)
	a.BalanceUpdatedAt = &a.CreatedAt
	return s.RunInTx(ctx, func(tx *Store) error {
		if _, err := tx.db.NewInsert().Model(a).Exec(ctx); err != nil {
			return dbErr("create account", err)
		}
		return tx.writeOpening(ctx, a, a.OpeningDate)
	})
}

// UpdateAccount writes the named columns of an account of a.FamilyID. A
// column its balance is made of (see RecalculateBalance) changes the
// balance. The column "opening_balance_date" (no column of accounts)
// writes a.OpeningDate with the opening balance: both are its opening
// valuation's.
func (s *Store) UpdateAccount(ctx context.Context, a *Account, columns ...string) error {
	a.UpdatedAt = s.now()
	opening, cols := false, make([]string, 0, len(columns))
	for _, c := range columns {
		switch c {
		case "opening_balance_date":
			opening = true
			continue
		case "opening_balance":
			opening = true
		}
		cols = append(cols, c)
	}
	return s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.updateOne(ctx, a, a.FamilyID, a.ID, "update account", cols...); err != nil {
			return err
		}
		if opening {
			date := a.OpeningDate
			if !slices.Contains(columns, "opening_balance_date") {
				v, err := tx.opening(ctx, a.FamilyID, a.ID)
				if err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
				date = v.Date
			} else if !slices.Contains(columns, "opening_balance") {
				v, err := tx.opening(ctx, a.FamilyID, a.ID)
				if err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
				if err == nil {
					a.OpeningBalance = v.Amount
				}
			}
			if err := tx.writeOpening(ctx, a, date); err != nil {
				return err
			}
		}
		for _, c := range columns {
			if c == "opening_balance" || c == "opening_balance_date" || c == "currency" || c == "account_type" {
				// What every row moves changes: rewritten from the full walk
				// here, as a valuation is (see balance_keep.go).
				if err := tx.recalculate(ctx, a.FamilyID, a.ID); err != nil && !errors.Is(err, ErrBalanceOverflow) {
					return err
				}
				tx.balanceChange(ctx, a.FamilyID, a.ID)
				break
			}
		}
		return nil
	})
}

// DeleteAccount removes an account and, through the schema, its transactions.
func (s *Store) DeleteAccount(ctx context.Context, familyID, id uuid.UUID) error {
	return s.deleteOne(ctx, (*Account)(nil), familyID, id, "delete account")
}

// cashPart is the share of a balance that is cash: all of it for a bank
// account or a card, none for an asset such as a house.
func cashPart(accountType string, balance money.Amount) money.Amount {
	if accountType == "depository" || accountType == "credit_card" {
		return balance
	}
	return 0
}

// AccountRef names an account of a family, for jobs that visit many.
type AccountRef struct {
	FamilyID uuid.UUID `bun:"family_id"`
	ID       uuid.UUID `bun:"id"`
}

// AllAccountRefs lists every account of every family, for the periodic
// balance sweep (the only cross-family read, and it returns ids only).
func (s *Store) AllAccountRefs(ctx context.Context) ([]AccountRef, error) {
	var refs []AccountRef
	err := s.db.NewSelect().Model((*Account)(nil)).Column("family_id", "id").
		OrderExpr("family_id, id").Scan(ctx, &refs)
	return refs, dbErr("list account refs", err)
}
