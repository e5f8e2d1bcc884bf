package models

import (
	"context"
	"fmt"
	"math"
	"math/big"
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

	ID                uuid.UUID    `bun:"id,pk"`
	FamilyID          uuid.UUID    `bun:"family_id"`
	Name              string       `bun:"name"`
	AccountType       string       `bun:"account_type,nullzero"` // "": untyped (NULL), counted as an asset
	Subtype           *string      `bun:"subtype"`
	Currency          string       `bun:"currency"`
	Status            string       `bun:"status"`
	OpeningBalance    money.Amount `bun:"opening_balance"`
	Balance           money.Amount `bun:"balance"` // derived; see RecalculateBalance
	CashBalance       money.Amount `bun:"cash_balance"`
	InstitutionName   *string      `bun:"institution_name"`
	InstitutionDomain *string      `bun:"institution_domain"`
	BalanceUpdatedAt  *time.Time   `bun:"balance_updated_at"`
	BalanceError      *string      `bun:"balance_error"` // nil, or BalanceOverflow: Balance is the last that could be computed
	CreatedAt         time.Time    `bun:"created_at"`
	UpdatedAt         time.Time    `bun:"updated_at"`
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

// UpdateAccount writes the named columns of an account of a.FamilyID. A
// column its balance is made of (see RecalculateBalance) changes the
// balance.
func (s *Store) UpdateAccount(ctx context.Context, a *Account, columns ...string) error {
	a.UpdatedAt = s.now()
	if err := s.updateOne(ctx, a, a.FamilyID, a.ID, "update account", columns...); err != nil {
		return err
	}
	for _, c := range columns {
		if c == "opening_balance" || c == "currency" || c == "account_type" {
			s.balanceChange(ctx, a.FamilyID, a.ID)
			break
		}
	}
	return nil
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

// movementSQL sums what an account's transactions did to its balance: the
// rows in its own currency dated up to today, neither deleted nor excluded.
// Each amount is split at 2^32 (amount = high·2^32 + low, both dialects
// truncating toward zero) so that neither SUM can overflow, however large
// or many the rows (up to 2^31 of them); Go joins the halves and checks
// that the balance fits. A plain SUM would fail the statement instead:
// SQLite raises "integer overflow", PostgreSQL's bigint column refuses the
// numeric sum.
const movementSQL = `
SELECT CAST(COALESCE(SUM(t.amount / 4294967296), 0) AS BIGINT),
       CAST(COALESCE(SUM(t.amount % 4294967296), 0) AS BIGINT)
FROM transactions t
WHERE t.family_id = ? AND t.account_id = ? AND t.currency = ? AND t.date <= ?
  AND t.deleted_at IS NULL AND NOT t.excluded`

// RecalculateBalance rewrites an account's balance from its transactions as
// of today: the opening balance, less what was spent for an asset (stored
// positive), plus it for a liability. Running it again gives the same
// result: it is safe to repeat. A balance that does not fit an Amount is
// not written: the account keeps its last balance, marked BalanceOverflow,
// and ErrBalanceOverflow is returned, so that nobody retries what cannot
// succeed until the transactions change.
func (s *Store) RecalculateBalance(ctx context.Context, familyID, id uuid.UUID) error {
	now := s.now()
	overflow := false
	err := s.RunInTx(ctx, func(tx *Store) error {
		a := new(Account)
		q := tx.db.NewSelect().Model(a).Column("account_type", "currency", "opening_balance").
			Where("a.family_id = ?", familyID).
			Where("a.id = ?", id)
		if s.Postgres() {
			// Two recalculations of one account take turns, so that an
			// older sum never overwrites a newer one. (SQLite's
			// transactions already take the write lock up front.)
			q = q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return dbErr("recalculate balance", err)
		}
		var high, low int64
		if err := tx.db.NewRaw(movementSQL, familyID, id, a.Currency, civil.DateOf(now)).Scan(ctx, &high, &low); err != nil {
			return dbErr("recalculate balance", err)
		}
		balance, ok := balanceAfter(a.AccountType, a.OpeningBalance, high, low)
		up := tx.db.NewUpdate().Model((*Account)(nil)).
			Where("family_id = ?", familyID).
			Where("id = ?", id)
		if ok {
			up = up.Set("balance = ?", balance).Set("cash_balance = ?", cashPart(a.AccountType, balance)).
				Set("balance_error = NULL").Set("balance_updated_at = ?", now)
		} else {
			overflow = true
			up = up.Set("balance_error = ?", BalanceOverflow)
		}
		_, err := up.Exec(ctx)
		return dbErr("recalculate balance", err)
	})
	if err == nil && overflow {
		return fmt.Errorf("models: recalculate balance of account %s: %w", id, ErrBalanceOverflow)
	}
	return err
}

// balanceAfter is the balance that an opening balance and a movement of
// high·2^32 + low make, and false when it does not fit an Amount (whose
// negation must fit too, for Abs).
func balanceAfter(accountType string, opening money.Amount, high, low int64) (money.Amount, bool) {
	sum := new(big.Int).Lsh(big.NewInt(high), 32)
	sum.Add(sum, big.NewInt(low))
	if !Liability(accountType) {
		sum.Neg(sum) // an expense, stored positive, lowers an asset
	}
	sum.Add(sum, big.NewInt(int64(opening)))
	if sum.CmpAbs(big.NewInt(math.MaxInt64)) > 0 {
		return 0, false
	}
	return money.Amount(sum.Int64()), true
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
