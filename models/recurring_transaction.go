package models

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/money"
	"coffer/models/recur"
)

// The statuses of a recurring transaction, as the reference app's. A
// suggested row is the detector's, awaiting a person's confirmation (it
// becomes active) or dismissal (it becomes ended). An ended row is a
// tombstone: the detector never makes that series again.
const (
	RecurringSuggested = "suggested"
	RecurringActive    = "active"
	RecurringPaused    = "paused"
	RecurringInactive  = "inactive"
	RecurringEnded     = "ended"
)

// RecurringStatuses lists every status.
var RecurringStatuses = []string{RecurringSuggested, RecurringActive, RecurringPaused, RecurringInactive, RecurringEnded}

// RecurringTransaction is a bill, subscription or income that comes back on
// a cadence. Manual rows were made by a person; the others by the detector.
type RecurringTransaction struct {
	bun.BaseModel `bun:"table:recurring_transactions,alias:rt"`

	ID         uuid.UUID  `bun:"id,pk"`
	FamilyID   uuid.UUID  `bun:"family_id"`
	AccountID  *uuid.UUID `bun:"account_id"`
	MerchantID *uuid.UUID `bun:"merchant_id"`
	Name       string     `bun:"name"`
	// MatchKey is recur.Key of the merchant or name: with Cadence, what the
	// detector's upsert matches on.
	MatchKey       string        `bun:"match_key"`
	Amount         money.Amount  `bun:"amount"` // signed as transactions are
	PreviousAmount *money.Amount `bun:"previous_amount"`
	AmountMin      *money.Amount `bun:"expected_amount_min"`
	AmountMax      *money.Amount `bun:"expected_amount_max"`
	Currency       string        `bun:"currency"`
	Cadence        string        `bun:"cadence"`
	ExpectedDay    int           `bun:"expected_day_of_month"`
	LastDate       *civil.Date   `bun:"last_occurrence_date"`
	NextDate       civil.Date    `bun:"next_expected_date"`
	Occurrences    int           `bun:"occurrence_count"`
	Status         string        `bun:"status"`
	Manual         bool          `bun:"manual"`
	Autopay        bool          `bun:"autopay"`
	Notes          *string       `bun:"notes"`
	CreatedAt      time.Time     `bun:"created_at"`
	UpdatedAt      time.Time     `bun:"updated_at"`

	Account  *Account  `bun:"rel:belongs-to,join:account_id=id,join:family_id=family_id"`
	Merchant *Merchant `bun:"rel:belongs-to,join:merchant_id=id,join:family_id=family_id"`
}

// WasAmount is the amount before a price change; zero when there was none.
func (r *RecurringTransaction) WasAmount() money.Amount {
	if r.PreviousAmount == nil {
		return 0
	}
	return *r.PreviousAmount
}

// validate lists what is wrong with r; nil when it can be saved.
func (r *RecurringTransaction) validate() error {
	var p []string
	if r.Amount == 0 {
		p = append(p, "Amount must not be zero")
	}
	if _, ok := money.LookupCurrency(r.Currency); !ok {
		p = append(p, "Currency is not a known currency code")
	}
	if !recur.Cadence(r.Cadence).Valid() {
		p = append(p, "Cadence must be one of weekly, biweekly, monthly, quarterly, yearly")
	}
	if !slices.Contains(RecurringStatuses, r.Status) {
		p = append(p, "Status must be one of "+strings.Join(RecurringStatuses, ", "))
	}
	if r.ExpectedDay < 1 || r.ExpectedDay > 31 {
		p = append(p, "Expected day of month must be between 1 and 31")
	}
	if r.NextDate == "" {
		p = append(p, "Next expected date can't be blank")
	}
	if r.Occurrences < 0 {
		p = append(p, "Occurrence count must be 0 or more")
	}
	if strings.TrimSpace(r.Name) == "" && r.MerchantID == nil {
		p = append(p, "Name or merchant is required")
	}
	if len(r.Name) > 255 {
		p = append(p, "Name is too long (at most 255 characters)")
	}
	if len(p) > 0 {
		return Invalid(p...)
	}
	return nil
}

// RecurringFilter narrows RecurringTransactions; zero fields match all.
type RecurringFilter struct {
	Status    string
	AccountID *uuid.UUID
}

// RecurringTransactions returns one page of the family's recurring
// transactions, by status then next expected date (the reference's order).
func (s *Store) RecurringTransactions(ctx context.Context, familyID uuid.UUID, f RecurringFilter, p Page) ([]RecurringTransaction, int, error) {
	out := []RecurringTransaction{}
	q := s.db.NewSelect().Model(&out).Relation("Account").Relation("Merchant").
		Where("rt.family_id = ?", familyID).
		OrderExpr("rt.status ASC, rt.next_expected_date ASC, rt.id ASC")
	if f.Status != "" {
		q = q.Where("rt.status = ?", f.Status)
	}
	if f.AccountID != nil {
		q = q.Where("rt.account_id = ?", *f.AccountID)
	}
	n, err := p.scan(ctx, q)
	return out, n, dbErr("list recurring transactions", err)
}

// RecurringTransaction returns one recurring transaction of the family,
// with its account and merchant.
func (s *Store) RecurringTransaction(ctx context.Context, familyID, id uuid.UUID) (*RecurringTransaction, error) {
	r := new(RecurringTransaction)
	err := s.db.NewSelect().Model(r).Relation("Account").Relation("Merchant").
		Where("rt.family_id = ?", familyID).Where("rt.id = ?", id).Scan(ctx)
	return r, dbErr("get recurring transaction", err)
}

// checkRecurringRefs makes sure the account and merchant r points to are
// the family's: another family's is ErrNotFound.
func (s *Store) checkRecurringRefs(ctx context.Context, r *RecurringTransaction) error {
	if r.AccountID != nil {
		if _, err := s.Account(ctx, r.FamilyID, *r.AccountID); err != nil {
			return err
		}
	}
	if r.MerchantID != nil {
		if _, err := s.Merchant(ctx, r.FamilyID, *r.MerchantID); err != nil {
			return err
		}
	}
	return nil
}

// CreateRecurringTransaction validates and inserts r (an *InvalidError
// when it cannot be saved); its account and merchant must be the family's.
func (s *Store) CreateRecurringTransaction(ctx context.Context, r *RecurringTransaction) error {
	if r.Status == "" {
		r.Status = RecurringActive
	}
	r.Name = strings.TrimSpace(r.Name)
	if err := r.validate(); err != nil {
		return err
	}
	if err := s.checkRecurringRefs(ctx, r); err != nil {
		return err
	}
	if r.MatchKey == "" {
		r.MatchKey = recur.Key(r.MerchantID, r.Name)
	}
	r.ID = NewID()
	r.CreatedAt = s.now()
	r.UpdatedAt = r.CreatedAt
	_, err := s.db.NewInsert().Model(r).Exec(ctx)
	return dbErr("create recurring transaction", err)
}

// RecurringEditable are the columns UpdateRecurringTransaction may write,
// the reference's update parameters and the amount.
var RecurringEditable = []string{"status", "expected_day_of_month", "next_expected_date", "autopay", "notes", "amount", "name", "cadence"}

// UpdateRecurringTransaction validates r and writes the named columns
// (of RecurringEditable) of the row with r's family and id.
func (s *Store) UpdateRecurringTransaction(ctx context.Context, r *RecurringTransaction, columns ...string) error {
	for _, c := range columns {
		if !slices.Contains(RecurringEditable, c) {
			return Invalid("Field " + c + " cannot be changed")
		}
	}
	r.Name = strings.TrimSpace(r.Name)
	if err := r.validate(); err != nil {
		return err
	}
	r.UpdatedAt = s.now()
	return s.updateOne(ctx, r, r.FamilyID, r.ID, "update recurring transaction", columns...)
}

// SetRecurringStatus moves one recurring transaction to status: the
// screen's confirm (active), dismiss and end (ended) buttons.
func (s *Store) SetRecurringStatus(ctx context.Context, familyID, id uuid.UUID, status string) error {
	if !slices.Contains(RecurringStatuses, status) {
		return Invalid("Status must be one of " + strings.Join(RecurringStatuses, ", "))
	}
	r := &RecurringTransaction{ID: id, FamilyID: familyID, Status: status, UpdatedAt: s.now()}
	return s.updateOne(ctx, r, familyID, id, "set recurring status", "status")
}

// DeleteRecurringTransaction removes one recurring transaction.
func (s *Store) DeleteRecurringTransaction(ctx context.Context, familyID, id uuid.UUID) error {
	return s.deleteOne(ctx, (*RecurringTransaction)(nil), familyID, id, "delete recurring transaction")
}
