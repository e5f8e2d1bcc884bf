package models

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Transaction is one movement of money on an account. Amount is stored
// signed: positive is money out (an expense), negative is money in.
type Transaction struct {
	bun.BaseModel `bun:"table:transactions,alias:t"`

	ID         uuid.UUID  `bun:"id,pk"`
	FamilyID   uuid.UUID  `bun:"family_id"`
	AccountID  uuid.UUID  `bun:"account_id"`
	Date       Date       `bun:"date"`
	Amount     Amount     `bun:"amount"`
	Currency   string     `bun:"currency"`
	Name       string     `bun:"name"`
	Notes      *string    `bun:"notes"`
	ExternalID *string    `bun:"external_id"` // idempotency key, unique per (account, source)
	Source     *string    `bun:"source"`
	Pending    bool       `bun:"pending"`
	CategoryID *uuid.UUID `bun:"category_id"`
	MerchantID *uuid.UUID `bun:"merchant_id"`
	CreatedAt  time.Time  `bun:"created_at"`
	UpdatedAt  time.Time  `bun:"updated_at"`

	Account  *Account      `bun:"rel:belongs-to,join:account_id=id,join:family_id=family_id"`
	Category *Category     `bun:"rel:belongs-to,join:category_id=id,join:family_id=family_id"`
	Merchant *Merchant     `bun:"rel:belongs-to,join:merchant_id=id,join:family_id=family_id"`
	Tags     []Tag         `bun:"-"`
	Transfer *TransferLink `bun:"-"`
}

// TransactionTag links a transaction to one of its tags.
type TransactionTag struct {
	bun.BaseModel `bun:"table:transaction_tags,alias:tt"`

	TransactionID uuid.UUID `bun:"transaction_id,pk"`
	TagID         uuid.UUID `bun:"tag_id,pk"`
	FamilyID      uuid.UUID `bun:"family_id"`
}

// TransferLink is what a transaction shows of the transfer it is part of.
type TransferLink struct {
	ID           uuid.UUID
	Amount       Amount // absolute
	Currency     string
	OtherAccount *Account
}

// TransactionRefs are the records a transaction points to, checked against
// the family before a write.
type TransactionRefs struct {
	AccountID  *uuid.UUID // nil: not being set
	CategoryID *uuid.UUID
	MerchantID *uuid.UUID
	TagIDs     []uuid.UUID
}

// CheckTransactionRefs returns one message per reference that is not a
// record of the family (or, for the account, not an active one).
func (s *Store) CheckTransactionRefs(ctx context.Context, familyID uuid.UUID, r TransactionRefs) ([]string, error) {
	var problems []string
	if r.AccountID != nil {
		a, err := s.Account(ctx, familyID, *r.AccountID)
		switch {
		case errors.Is(err, ErrNotFound):
			problems = append(problems, "Account not found")
		case err != nil:
			return nil, err
		case a.Status != AccountActive:
			problems = append(problems, "Account is not active")
		}
	}
	checks := []struct {
		table, label string
		ids          []uuid.UUID
	}{
		{"categories", "Category", optionalIDs(r.CategoryID)},
		{"merchants", "Merchant", optionalIDs(r.MerchantID)},
		{"tags", "Tag", r.TagIDs},
	}
	for _, c := range checks {
		missing, err := s.missingIDs(ctx, c.table, familyID, c.ids)
		if err != nil {
			return nil, err
		}
		for _, id := range missing {
			problems = append(problems, c.label+" "+id.String()+" not found")
		}
	}
	return problems, nil
}

func optionalIDs(id *uuid.UUID) []uuid.UUID {
	if id == nil {
		return nil
	}
	return []uuid.UUID{*id}
}

// Transaction returns one transaction of the family with everything the
// API shows of it.
func (s *Store) Transaction(ctx context.Context, familyID, id uuid.UUID) (*Transaction, error) {
	t := new(Transaction)
	err := s.transactionSelect(t, familyID).Where("t.id = ?", id).Scan(ctx)
	if err != nil {
		return nil, dbErr("get transaction", err)
	}
	txs := []*Transaction{t}
	if err := s.loadTransactionLinks(ctx, familyID, txs); err != nil {
		return nil, err
	}
	return t, nil
}

// TransactionByExternalID finds the transaction an idempotency key names.
func (s *Store) TransactionByExternalID(ctx context.Context, familyID, accountID uuid.UUID, source, externalID string) (*Transaction, error) {
	var id uuid.UUID
	err := s.db.NewSelect().Model((*Transaction)(nil)).Column("id").
		Where("family_id = ?", familyID).
		Where("account_id = ?", accountID).
		Where("source = ?", source).
		Where("external_id = ?", externalID).
		Scan(ctx, &id)
	if err != nil {
		return nil, dbErr("get transaction by external id", err)
	}
	return s.Transaction(ctx, familyID, id)
}

func (s *Store) transactionSelect(model any, familyID uuid.UUID) *bun.SelectQuery {
	return s.db.NewSelect().Model(model).
		Relation("Account").
		Relation("Category").
		Relation("Merchant").
		Where("t.family_id = ?", familyID)
}

// CreateTransaction inserts a transaction and its tags in one database
// transaction. With an external id, a row already holding the same
// (account, source, external id) wins: nothing is written and created is
// false. The unique index decides, so concurrent identical creates make
// exactly one row.
func (s *Store) CreateTransaction(ctx context.Context, t *Transaction, tagIDs []uuid.UUID) (created bool, err error) {
	t.ID = NewID()
	t.CreatedAt = s.now()
	t.UpdatedAt = t.CreatedAt
	err = s.RunInTx(ctx, func(tx *Store) error {
		problems, err := tx.CheckTransactionRefs(ctx, t.FamilyID, TransactionRefs{
			AccountID: &t.AccountID, CategoryID: t.CategoryID, MerchantID: t.MerchantID, TagIDs: tagIDs,
		})
		if err != nil {
			return err
		}
		if len(problems) > 0 {
			return Invalid(problems...)
		}
		res, err := tx.db.NewInsert().Model(t).
			On("CONFLICT (account_id, source, external_id) WHERE external_id IS NOT NULL DO NOTHING").
			Returning("NULL").
			Exec(ctx)
		if err != nil {
			return dbErr("create transaction", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // an existing row holds the key
		}
		created = true
		return tx.setTransactionTags(ctx, t.FamilyID, t.ID, tagIDs)
	})
	return created, err
}

func (s *Store) setTransactionTags(ctx context.Context, familyID, id uuid.UUID, tagIDs []uuid.UUID) error {
	if _, err := s.db.NewDelete().Model((*TransactionTag)(nil)).
		Where("family_id = ?", familyID).
		Where("transaction_id = ?", id).
		Exec(ctx); err != nil {
		return dbErr("clear transaction tags", err)
	}
	if len(tagIDs) == 0 {
		return nil
	}
	rows := make([]TransactionTag, 0, len(tagIDs))
	seen := map[uuid.UUID]bool{}
	for _, tag := range tagIDs {
		if seen[tag] {
			continue
		}
		seen[tag] = true
		rows = append(rows, TransactionTag{TransactionID: id, TagID: tag, FamilyID: familyID})
	}
	_, err := s.db.NewInsert().Model(&rows).Exec(ctx)
	return dbErr("set transaction tags", err)
}

// UpdateTransaction writes the named columns of a transaction of
// t.FamilyID and, when tagIDs is not nil, replaces its tags, in one
// database transaction. It returns the account the transaction was on
// before, whose balance also changes when the account does.
func (s *Store) UpdateTransaction(ctx context.Context, t *Transaction, columns []string, tagIDs *[]uuid.UUID) (previousAccount uuid.UUID, err error) {
	t.UpdatedAt = s.now()
	err = s.RunInTx(ctx, func(tx *Store) error {
		var before Transaction
		err := tx.db.NewSelect().Model(&before).Column("account_id").
			Where("family_id = ?", t.FamilyID).Where("id = ?", t.ID).Scan(ctx)
		if err != nil {
			return dbErr("get transaction", err)
		}
		previousAccount = before.AccountID
		refs := TransactionRefs{CategoryID: t.CategoryID, MerchantID: t.MerchantID}
		if t.AccountID != before.AccountID {
			refs.AccountID = &t.AccountID
		}
		if tagIDs != nil {
			refs.TagIDs = *tagIDs
		}
		problems, err := tx.CheckTransactionRefs(ctx, t.FamilyID, refs)
		if err != nil {
			return err
		}
		if len(problems) > 0 {
			return Invalid(problems...)
		}
		res, err := tx.db.NewUpdate().Model(t).
			Column(append(columns, "updated_at")...).
			Where("t.family_id = ?", t.FamilyID).
			Where("t.id = ?", t.ID).
			Exec(ctx)
		if err := affectedOne(res, err, "update transaction"); err != nil {
			return err
		}
		if tagIDs != nil {
			return tx.setTransactionTags(ctx, t.FamilyID, t.ID, *tagIDs)
		}
		return nil
	})
	return previousAccount, err
}

// DeleteTransaction removes a transaction (and the transfer it was part
// of) and returns its account, whose balance changes.
func (s *Store) DeleteTransaction(ctx context.Context, familyID, id uuid.UUID) (accountID uuid.UUID, err error) {
	err = s.RunInTx(ctx, func(tx *Store) error {
		var t Transaction
		err := tx.db.NewSelect().Model(&t).Column("account_id").
			Where("family_id = ?", familyID).Where("id = ?", id).Scan(ctx)
		if err != nil {
			return dbErr("get transaction", err)
		}
		accountID = t.AccountID
		return tx.deleteOne(ctx, (*Transaction)(nil), familyID, id, "delete transaction")
	})
	return accountID, err
}
