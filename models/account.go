package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
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

	ID                uuid.UUID  `bun:"id,pk"`
	FamilyID          uuid.UUID  `bun:"family_id"`
	Name              string     `bun:"name"`
	AccountType       string     `bun:"account_type,nullzero"` // "": untyped (NULL), counted as an asset
	Subtype           *string    `bun:"subtype"`
	Currency          string     `bun:"currency"`
	Status            string     `bun:"status"`
	OpeningBalance    Amount     `bun:"opening_balance"`
	Balance           Amount     `bun:"balance"` // derived; see RecalculateBalance
	CashBalance       Amount     `bun:"cash_balance"`
	InstitutionName   *string    `bun:"institution_name"`
	InstitutionDomain *string    `bun:"institution_domain"`
	BalanceUpdatedAt  *time.Time `bun:"balance_updated_at"`
	CreatedAt         time.Time  `bun:"created_at"`
	UpdatedAt         time.Time  `bun:"updated_at"`
}

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

// CreateAccount inserts an account; its balance starts at the opening balance.
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
	_, err := s.db.NewInsert().Model(a).Exec(ctx)
	return dbErr("create account", err)
}

// UpdateAccount writes the named columns of an account of a.FamilyID.
func (s *Store) UpdateAccount(ctx context.Context, a *Account, columns ...string) error {
	a.UpdatedAt = s.now()
	return s.updateOne(ctx, a, a.FamilyID, a.ID, "update account", columns...)
}

// DeleteAccount removes an account and, through the schema, its transactions.
func (s *Store) DeleteAccount(ctx context.Context, familyID, id uuid.UUID) error {
	return s.deleteOne(ctx, (*Account)(nil), familyID, id, "delete account")
}

// cashPart is the share of a balance that is cash: all of it for a bank
// account or a card, none for an asset such as a house.
func cashPart(accountType string, balance Amount) Amount {
	if accountType == "depository" || accountType == "credit_card" {
		return balance
	}
	return 0
}

// balanceSQL derives a balance from the opening balance and the account's
// transactions in its own currency dated up to today: an asset goes down by
// what is spent (stored positive), a liability goes up. One statement, so a
// concurrent write is either wholly counted or wholly not.
const balanceSQL = `
UPDATE accounts SET
    balance = opening_balance + (CASE WHEN account_type IN ('credit_card', 'loan', 'other_liability') THEN 1 ELSE -1 END) *
        COALESCE((SELECT SUM(t.amount) FROM transactions t
                  WHERE t.account_id = accounts.id AND t.family_id = accounts.family_id
                    AND t.currency = accounts.currency AND t.date <= ?
                    AND t.deleted_at IS NULL AND NOT t.excluded), 0),
    balance_updated_at = ?
WHERE family_id = ? AND id = ?`

const cashBalanceSQL = `
UPDATE accounts SET cash_balance = CASE WHEN account_type IN ('depository', 'credit_card') THEN balance ELSE 0 END
WHERE family_id = ? AND id = ?`

// RecalculateBalance rewrites an account's balance from its transactions as
// of today. Running it again gives the same result: it is safe to repeat.
func (s *Store) RecalculateBalance(ctx context.Context, familyID, id uuid.UUID) error {
	now := s.now()
	return s.RunInTx(ctx, func(tx *Store) error {
		res, err := tx.db.NewRaw(balanceSQL, DateOf(now), now, familyID, id).Exec(ctx)
		if err := affectedOne(res, err, "recalculate balance"); err != nil {
			return err
		}
		_, err = tx.db.NewRaw(cashBalanceSQL, familyID, id).Exec(ctx)
		return dbErr("recalculate cash balance", err)
	})
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
