package models

import (
	"context"
	"errors"
	"slices"
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

	// Set on rows imported from an aggregator (spec/aggregator.md §3).
	ProviderConnectionID *uuid.UUID `bun:"provider_connection_id"`
	Excluded             bool       `bun:"excluded"`
	ExcludedReason       *string    `bun:"excluded_reason"`
	LockedFields         []string   `bun:"locked_fields"` // fields the user edited; imports keep them
	DeletedAt            *time.Time `bun:"deleted_at"`    // tombstone of a deleted imported row
	ContentKey           *string    `bun:"content_key"`
	ProviderMeta         *string    `bun:"provider_meta"` // the row as the provider sent it, JSON
	RuleID               *uuid.UUID `bun:"rule_id"`       // the rule that last changed it

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
	_, problems, err := s.resolveRefs(ctx, familyID, r)
	return problems, err
}

// resolvedRefs are the records a transaction's references name.
type resolvedRefs struct {
	account  *Account
	category *Category
	merchant *Merchant
	tags     []Tag
}

// resolveRefs loads the referenced records of the family, with a message
// for each one that is missing.
func (s *Store) resolveRefs(ctx context.Context, familyID uuid.UUID, r TransactionRefs) (resolvedRefs, []string, error) {
	var out resolvedRefs
	var problems []string
	if r.AccountID != nil {
		a, err := s.Account(ctx, familyID, *r.AccountID)
		switch {
		case errors.Is(err, ErrNotFound):
			problems = append(problems, "Account not found")
		case err != nil:
			return out, nil, err
		case a.Status != AccountActive:
			problems = append(problems, "Account is not active")
		default:
			out.account = a
		}
	}
	if r.CategoryID != nil {
		c := new(Category)
		err := s.db.NewSelect().Model(c).Where("c.family_id = ?", familyID).Where("c.id = ?", *r.CategoryID).Scan(ctx)
		if err := dbErr("get category", err); errors.Is(err, ErrNotFound) {
			problems = append(problems, "Category "+r.CategoryID.String()+" not found")
		} else if err != nil {
			return out, nil, err
		}
		out.category = c
	}
	if r.MerchantID != nil {
		m, err := s.Merchant(ctx, familyID, *r.MerchantID)
		if errors.Is(err, ErrNotFound) {
			problems = append(problems, "Merchant "+r.MerchantID.String()+" not found")
		} else if err != nil {
			return out, nil, err
		}
		out.merchant = m
	}
	if len(r.TagIDs) > 0 {
		err := s.db.NewSelect().Model(&out.tags).
			Where("tg.family_id = ?", familyID).
			Where("tg.id IN (?)", bun.List(r.TagIDs)).
			OrderExpr("lower(tg.name), tg.id").
			Scan(ctx)
		if err != nil {
			return out, nil, dbErr("get tags", err)
		}
		have := make(map[uuid.UUID]bool, len(out.tags))
		for _, t := range out.tags {
			have[t.ID] = true
		}
		for _, id := range r.TagIDs {
			if !have[id] {
				problems = append(problems, "Tag "+id.String()+" not found")
				have[id] = true // name each missing id once
			}
		}
	}
	return out, problems, nil
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
		Where("t.family_id = ?", familyID).
		Where("t.deleted_at IS NULL") // tombstones of deleted imported rows are invisible
}

// insertTransactionSQL inserts a transaction only while its account is an
// active account of the family, in one statement, so that the check and
// the write cannot be split by a concurrent change. The unique index on
// (account, source, external id) turns a replay into no row.
const insertTransactionSQL = `
INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name, notes, external_id, source,
                          pending, category_id, merchant_id, excluded, excluded_reason, rule_id, created_at, updated_at)
SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
FROM accounts WHERE id = ? AND family_id = ? AND status = 'active'
ON CONFLICT (account_id, source, external_id) WHERE external_id IS NOT NULL DO NOTHING`

// CreateTransaction runs the family's rules on a transaction, checks its
// references against the family, then inserts it with its tags (and the
// other side of a transfer a rule made), atomically, and returns it with its
// account, category, merchant and tags filled in. With an external id, a
// row already holding the same (account, source, external id) wins: a
// retried create gets that row and created false, whatever the rest of t
// says (even references that no longer resolve), so that it gets the
// answer the first one got. The unique index decides, so concurrent
// identical creates make exactly one row.
func (s *Store) CreateTransaction(ctx context.Context, t *Transaction, tagIDs []uuid.UUID) (row *Transaction, created bool, err error) {
	t.ID = NewID()
	t.CreatedAt = s.now()
	t.UpdatedAt = t.CreatedAt
	// The family's rules file the new row before it is written; a
	// category or merchant the caller chose is theirs and stays.
	rules, err := s.ActiveRules(ctx, t.FamilyID)
	if err != nil {
		return nil, false, err
	}
	filed := rules.Apply(RuleRowOf(t, tagIDs))
	tagIDs = filed.ApplyTo(t, tagIDs)
	refs, problems, err := s.resolveRefs(ctx, t.FamilyID, TransactionRefs{
		AccountID: &t.AccountID, CategoryID: t.CategoryID, MerchantID: t.MerchantID, TagIDs: tagIDs,
	})
	if err != nil {
		return nil, false, err
	}
	if len(problems) > 0 {
		return s.replayTransaction(ctx, t, Invalid(problems...))
	}
	t.Account, t.Category, t.Merchant, t.Tags = refs.account, refs.category, refs.merchant, refs.tags
	if t.Tags == nil {
		t.Tags = []Tag{}
	}
	insert := func(db *Store) error {
		res, err := db.db.NewRaw(insertTransactionSQL,
			t.ID, t.FamilyID, t.AccountID, t.Date, t.Amount, t.Currency, t.Name, t.Notes, t.ExternalID, t.Source,
			t.Pending, t.CategoryID, t.MerchantID, t.Excluded, t.ExcludedReason, t.RuleID, t.CreatedAt, t.UpdatedAt,
			t.AccountID, t.FamilyID).Exec(ctx)
		if err != nil {
			return dbErr("create transaction", err)
		}
		n, _ := res.RowsAffected()
		created = n == 1
		return nil
	}
	if len(tagIDs) == 0 && filed.TransferTo == nil {
		// One statement is atomic on its own: no transaction round trips.
		err = insert(s)
	} else {
		err = s.RunInTx(ctx, func(tx *Store) error {
			if err := insert(tx); err != nil || !created {
				return err
			}
			if filed.TransferTo != nil {
				if _, err := tx.ruleTransfer(ctx, t.FamilyID, &filed); err != nil {
					return err
				}
			}
			return tx.insertTransactionTags(ctx, t.FamilyID, t.ID, tagIDs)
		})
	}
	if err != nil {
		return nil, false, err
	}
	if created && filed.TransferTo != nil {
		// The new side of the transfer is shown with the row.
		row, err := s.Transaction(ctx, t.FamilyID, t.ID)
		return row, true, err
	}
	if created {
		return t, true, nil
	}
	// No row: a replay, or the account stopped being active since the check.
	return s.replayTransaction(ctx, t, Invalid("Account is not active"))
}

// replayTransaction returns the row holding t's idempotency key, if t has
// one and the row exists; else refusal.
func (s *Store) replayTransaction(ctx context.Context, t *Transaction, refusal error) (*Transaction, bool, error) {
	if t.ExternalID == nil {
		return nil, false, refusal
	}
	row, err := s.TransactionByExternalID(ctx, t.FamilyID, t.AccountID, Str(t.Source), *t.ExternalID)
	if errors.Is(err, ErrNotFound) {
		return nil, false, refusal
	}
	if err != nil {
		return nil, false, err
	}
	return row, false, nil
}

// setTransactionTags replaces a transaction's tags.
func (s *Store) setTransactionTags(ctx context.Context, familyID, id uuid.UUID, tagIDs []uuid.UUID) error {
	if _, err := s.db.NewDelete().Model((*TransactionTag)(nil)).
		Where("family_id = ?", familyID).
		Where("transaction_id = ?", id).
		Exec(ctx); err != nil {
		return dbErr("clear transaction tags", err)
	}
	return s.insertTransactionTags(ctx, familyID, id, tagIDs)
}

func (s *Store) insertTransactionTags(ctx context.Context, familyID, id uuid.UUID, tagIDs []uuid.UUID) error {
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
		err := tx.db.NewSelect().Model(&before).Column("account_id", "source", "locked_fields").
			Where("family_id = ?", t.FamilyID).Where("id = ?", t.ID).Where("deleted_at IS NULL").Scan(ctx)
		if err != nil {
			return dbErr("get transaction", err)
		}
		previousAccount = before.AccountID
		if locked := lockEdited(before, columns); locked != nil {
			t.LockedFields, columns = locked, append(columns, "locked_fields")
		}
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
// of) and returns its account, whose balance changes. An imported row is
// tombstoned instead, so that the next import does not bring it back.
func (s *Store) DeleteTransaction(ctx context.Context, familyID, id uuid.UUID) (accountID uuid.UUID, err error) {
	err = s.RunInTx(ctx, func(tx *Store) error {
		var t Transaction
		err := tx.db.NewSelect().Model(&t).Column("account_id", "source").
			Where("family_id = ?", familyID).Where("id = ?", id).Where("deleted_at IS NULL").Scan(ctx)
		if err != nil {
			return dbErr("get transaction", err)
		}
		accountID = t.AccountID
		if t.Source != nil && *t.Source == SourceSimpleFIN {
			now := tx.now()
			res, err := tx.db.NewUpdate().Model((*Transaction)(nil)).Set("deleted_at = ?", now).Set("updated_at = ?", now).
				Where("family_id = ?", familyID).Where("id = ?", id).Exec(ctx)
			return affectedOne(res, err, "tombstone transaction")
		}
		return tx.deleteOne(ctx, (*Transaction)(nil), familyID, id, "delete transaction")
	})
	return accountID, err
}

// lockedByColumn names the field a user edit of a column locks.
var lockedByColumn = map[string]string{"date": "date", "amount": "amount", "name": "name", "notes": "notes",
	"category_id": "category", "merchant_id": "merchant", "excluded": "excluded"}

// lockEdited returns a row's locked fields with those the edit touches
// added, or nil when nothing new is locked: the importer and the rules
// never write a locked field again.
func lockEdited(before Transaction, columns []string) []string {
	locked := append([]string{}, before.LockedFields...)
	added := false
	for _, c := range columns {
		if f, ok := lockedByColumn[c]; ok && !slices.Contains(locked, f) {
			locked, added = append(locked, f), true
		}
	}
	if !added {
		return nil
	}
	return locked
}
