package models

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/money"
)

// Transaction is one movement of money on an account. Amount is stored
// signed: positive is money out (an expense), negative is money in.
type Transaction struct {
	bun.BaseModel `bun:"table:transactions,alias:t"`

	ID         uuid.UUID    `bun:"id,pk"`
	FamilyID   uuid.UUID    `bun:"family_id"`
	AccountID  uuid.UUID    `bun:"account_id"`
	Date       civil.Date   `bun:"date"`
	Amount     money.Amount `bun:"amount"`
	Currency   string       `bun:"currency"`
	Name       string       `bun:"name"`
	Notes      *string      `bun:"notes"`
	ExternalID *string      `bun:"external_id"` // idempotency key, unique per (account, source)
	Source     *string      `bun:"source"`
	Pending    bool         `bun:"pending"`
	CategoryID *uuid.UUID   `bun:"category_id"`
	MerchantID *uuid.UUID   `bun:"merchant_id"`
	CreatedAt  time.Time    `bun:"created_at"`
	UpdatedAt  time.Time    `bun:"updated_at"`

	// Set on rows imported from an aggregator (spec/aggregator.md §3).
	ProviderConnectionID *uuid.UUID `bun:"provider_connection_id"`
	Excluded             bool       `bun:"excluded"`
	ExcludedReason       *string    `bun:"excluded_reason"`
	LockedFields         []string   `bun:"locked_fields"` // fields the user edited; imports keep them
	DeletedAt            *time.Time `bun:"deleted_at"`    // tombstone of a deleted imported row
	ContentKey           *string    `bun:"content_key"`
	ProviderMeta         *string    `bun:"provider_meta"` // the row as the provider sent it, JSON
	RuleID               *uuid.UUID `bun:"rule_id"`       // the rule that last changed it
	// Fingerprint is the row as it arrived (see Fingerprint), what
	// duplicate checks compare; a person's edits leave it as it was.
	Fingerprint *string `bun:"fingerprint"`
	// Cleared: the bank statement shows the row (a person ticked it).
	Cleared bool `bun:"cleared"`
	// ReconciliationID is the finished reconciliation that included the
	// row; while it is set the row is locked (see ErrReconciled).
	ReconciliationID *uuid.UUID `bun:"reconciliation_id"`
	// ImportID is the file import that wrote the row. Read only (t.* of
	// the register): the import writes it itself (see importedTx).
	ImportID *uuid.UUID `bun:"import_id,scanonly"`
	// SplitParentID is set on a part of a split: the row it was split
	// from, which stays excluded (ExcludedSplit) while its parts count.
	SplitParentID *uuid.UUID `bun:"split_parent_id"`
	// SplitNeedsReview is raised on a split parent whose amount a bank
	// sync changed: its parts no longer add up to it.
	SplitNeedsReview bool `bun:"split_needs_review"`

	Account  *Account       `bun:"rel:belongs-to,join:account_id=id,join:family_id=family_id"`
	Category *Category      `bun:"rel:belongs-to,join:category_id=id,join:family_id=family_id"`
	Merchant *Merchant      `bun:"rel:belongs-to,join:merchant_id=id,join:family_id=family_id"`
	Tags     []Tag          `bun:"-"`
	Transfer *TransferLink  `bun:"-"`
	Splits   []*Transaction `bun:"-"` // a split parent's parts, when loaded (see Transaction)
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
	Amount       money.Amount // absolute, what arrived (the reference's amount)
	Currency     string       // of what arrived
	OtherAccount *Account
	// Between two currencies: what left, in its currency, and the rate the
	// two amounts imply (units arrived per unit left); zero Rate otherwise.
	SentAmount   money.Amount
	SentCurrency string
	Rate         money.Rate
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
	if err := s.loadSplits(ctx, familyID, txs); err != nil {
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

// insertTransactionSQL (built in transaction_columns.go) inserts a
// transaction only while its account is an active account of the family,
// in one statement, so that the check and the write cannot be split by a
// concurrent change. The unique index on (account, source, external id)
// turns a replay into no row. It is the pipeline's write of a lone row
// (see writeNew).
//
// createOneSQL is insertTransactionSQL that also checks the category and
// the merchant against the family and returns what the answer shows of
// them and of the account. It is a prepared statement, planned once per
// connection.

// oneOutcome is what createOne did with a lone row, and what held it.
type oneOutcome struct {
	created bool
	// arrivals: the account holds rows of another door of the row's
	// amount in its days, which the row may be the same movement as, or
	// the row's key was matched before (see matchArrivals).
	arrivals bool
	// bills: the family has active recurring transactions, one of which
	// the row may pay (see loadBills).
	bills bool
	// foreign: the account is in another currency than the family's, so
	// it may need exchange rates (see RatesMissing).
	foreign bool
}

// held reports whether a check that the full pipeline makes in Go kept
// the row out, rather than its key, its account or its references.
func (o oneOutcome) held() bool { return o.arrivals || o.bills }

// arrivalCheck is what createOne asks of the account for an arriving
// keyed row (see matchArrivals): its fingerprint span and its amount as
// loadArrivalMatcher reads them.
type arrivalCheck struct{ from, to, amount string }

// createOne is the pipeline's happy path for a lone row on PostgreSQL,
// outside a transaction and without tags (see ingestOne): the checks, the insert and the reading of
// what the answer shows of the account (its identity, not its balances),
// category and merchant are one prepared statement and one round trip.
// The statement also asks, when arrivals is set, whether the account
// holds rows the row may be the same movement as or its key was matched
// before, and, unless billsMatched, whether the
// family has active recurring transactions: either keeps the row out, for
// the full pipeline to look at. A family without either, the commonest,
// thus pays one round trip for its create instead of three.
func (s *Store) createOne(ctx context.Context, t *Transaction, arrivals *arrivalCheck, billsMatched bool) (oneOutcome, error) {
	a := &Account{ID: t.AccountID, FamilyID: t.FamilyID}
	var acc struct {
		name, currency, status *string
		foreign                *bool
	}
	var cat struct {
		name, color, icon, class *string
		parent                   *uuid.UUID
	}
	var merchant *string
	var from, to, amount *string
	if arrivals != nil {
		from, to, amount = &arrivals.from, &arrivals.to, &arrivals.amount
	}
	// Ids go as pgUUID: as uuid.UUID (a driver.Valuer) each would be
	// formatted as text and parsed again.
	args := newWrite.pgValues(append(make([]any, 0, len(ingestColumns)+4), pgx.QueryExecModeCacheStatement), t)
	var out oneOutcome
	err := s.raw.DB.QueryRowContext(ctx, createOneSQL, append(args, from, to, amount, billsMatched)...).
		Scan(&out.arrivals, &out.bills, &acc.name, &a.AccountType, &a.Subtype, &acc.currency, &acc.status, &acc.foreign,
			&cat.name, &cat.color, &cat.icon, &cat.class, &cat.parent, &merchant)
	if err != nil || acc.name == nil {
		return out, dbErr("create transaction", err)
	}
	a.Name, a.Currency, a.Status = *acc.name, Str(acc.currency), Str(acc.status)
	out.created, out.foreign = true, acc.foreign != nil && *acc.foreign
	t.Account, t.Tags = a, []Tag{}
	if t.CategoryID != nil && cat.name != nil {
		t.Category = &Category{ID: *t.CategoryID, FamilyID: t.FamilyID, ParentID: cat.parent, Name: *cat.name,
			Color: Str(cat.color), Icon: Str(cat.icon), Classification: Str(cat.class)}
	}
	if t.MerchantID != nil && merchant != nil {
		t.Merchant = &Merchant{ID: *t.MerchantID, FamilyID: t.FamilyID, Name: *merchant}
	}
	return out, nil
}

// CreateTransaction runs one transaction of t.FamilyID through the
// ingestion pipeline (see IngestTransactions) and returns it with its
// account, category, merchant and tags filled in. With an external id, a
// row already holding the same (account, source, external id) wins: a
// retried create gets that row and created false, whatever the rest of t
// says (even references that no longer resolve), so that it gets the
// answer the first one got. The unique index decides, so concurrent
// identical creates make exactly one row. A refused row is an
// *InvalidError listing every problem.
func (s *Store) CreateTransaction(ctx context.Context, t *Transaction, tagIDs []uuid.UUID) (row *Transaction, created bool, err error) {
	r := &NewTransaction{Row: t, TagIDs: tagIDs}
	if _, err := s.IngestTransactions(ctx, t.FamilyID, []*NewTransaction{r}); err != nil {
		return nil, false, err
	}
	switch r.Status {
	case IngestCreated:
		return r.Row, true, nil
	case IngestExisting, IngestDuplicate:
		return r.Row, false, nil
	}
	return nil, false, Invalid(r.Problems...)
}

// setTransactionTags replaces a transaction's tags.
func (s *Store) setTransactionTags(ctx context.Context, familyID, id uuid.UUID, tagIDs []uuid.UUID) error {
	if _, err := s.db.NewDelete().Model((*TransactionTag)(nil)).
		Where("family_id = ?", familyID).
		Where("transaction_id = ?", id).
		Exec(ctx); err != nil {
		return dbErr("clear transaction tags", err)
	}
	links := make([]TransactionTag, 0, len(tagIDs))
	for _, tag := range tagIDs {
		if !slices.ContainsFunc(links, func(l TransactionTag) bool { return l.TagID == tag }) {
			links = append(links, TransactionTag{TransactionID: id, TagID: tag, FamilyID: familyID})
		}
	}
	return s.insertTags(ctx, links)
}

// UpdateTransaction writes a person's edit: the named columns of a
// transaction of t.FamilyID and, when tagIDs is not nil, its tags, in one
// database transaction, and locks the fields edited (see lockEdited), so
// that neither an import nor a rule overwrites them later. A row a
// finished reconciliation locked is refused (ErrReconciled) unless the
// edit unlocks it: columns name reconciliation_id, which is written NULL.
// It returns the account the transaction was on before, whose balance
// also changes when the account does.
func (s *Store) UpdateTransaction(ctx context.Context, t *Transaction, columns []string, tagIDs *[]uuid.UUID) (previousAccount uuid.UUID, err error) {
	t.UpdatedAt = s.now()
	err = s.RunInTx(ctx, func(tx *Store) error {
		var before Transaction
		err := tx.db.NewSelect().Model(&before).Column("account_id", "source", "locked_fields", "amount", "date", "currency",
			"excluded", "excluded_reason", "split_parent_id", "reconciliation_id").
			Where("family_id = ?", t.FamilyID).Where("id = ?", t.ID).Where("deleted_at IS NULL").Scan(ctx)
		if err != nil {
			return dbErr("get transaction", err)
		}
		// A reconciled row changes only together with its unlocking (the
		// column reconciliation_id written back to NULL).
		unlock := slices.Contains(columns, "reconciliation_id")
		if unlock {
			t.ReconciliationID = nil // an edit never locks: only FinishReconciliation does
		}
		if before.Reconciled() && !unlock && (len(columns) > 0 || tagIDs != nil) {
			return ErrReconciled
		}
		if err := splitGuard(&before, t, columns); err != nil {
			return err
		}
		previousAccount = before.AccountID
		tagsChanged := false
		if tagIDs != nil {
			var current []uuid.UUID
			if err := tx.db.NewSelect().Model((*TransactionTag)(nil)).Column("tag_id").
				Where("family_id = ?", t.FamilyID).Where("transaction_id = ?", t.ID).Scan(ctx, &current); err != nil {
				return dbErr("get transaction tags", err)
			}
			tagsChanged = !sameIDs(current, *tagIDs)
		}
		if locked := lockEdited(before, columns, tagsChanged); locked != nil {
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
		tx.balanceChange(ctx, t.FamilyID, before.AccountID, t.AccountID)
		if tagIDs != nil {
			return tx.setTransactionTags(ctx, t.FamilyID, t.ID, *tagIDs)
		}
		return nil
	})
	return previousAccount, err
}

// DeleteTransaction removes a transaction (and the transfer it was part
// of, or the parts it was split into) and returns its account, whose
// balance changes. An imported row is tombstoned instead, so that the
// next import does not bring it back. A split part is refused: the split
// is changed instead. A reconciled row is refused (ErrReconciled).
func (s *Store) DeleteTransaction(ctx context.Context, familyID, id uuid.UUID) (accountID uuid.UUID, err error) {
	err = s.RunInTx(ctx, func(tx *Store) error {
		var t Transaction
		err := tx.db.NewSelect().Model(&t).Column("account_id", "source", "excluded", "excluded_reason", "split_parent_id",
			"reconciliation_id").
			Where("family_id = ?", familyID).Where("id = ?", id).Where("deleted_at IS NULL").Scan(ctx)
		if err != nil {
			return dbErr("get transaction", err)
		}
		if t.Reconciled() {
			return ErrReconciled
		}
		if t.SplitParentID != nil {
			return Invalid(MsgSplitDelete)
		}
		accountID = t.AccountID
		tx.balanceChange(ctx, familyID, accountID)
		if t.IsSplitParent() { // its parts go with it, even when it is only tombstoned
			if err := tx.deleteParts(ctx, familyID, id); err != nil {
				return err
			}
		}
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

// lockedByColumn names the field a person's edit of a column locks: the
// importer never writes a locked field of an imported row again, and the
// rules never change a locked field of any row.
var lockedByColumn = map[string]string{"date": "date", "amount": "amount", "name": "name", "notes": "notes",
	"category_id": "category", "merchant_id": "merchant", "excluded": "excluded"}

// lockEdited returns a row's locked fields with those the edit touches
// added (tags when they are replaced), or nil when nothing new is locked.
func lockEdited(before Transaction, columns []string, tags bool) []string {
	locked := append([]string{}, before.LockedFields...)
	added := false
	lock := func(f string) {
		if !slices.Contains(locked, f) {
			locked, added = append(locked, f), true
		}
	}
	for _, c := range columns {
		if f, ok := lockedByColumn[c]; ok {
			lock(f)
		}
	}
	if tags {
		lock("tags")
	}
	if !added {
		return nil
	}
	return locked
}

// sameIDs reports whether a and b hold the same ids, in any order and
// counting each once.
func sameIDs(a, b []uuid.UUID) bool {
	in := make(map[uuid.UUID]bool, len(a))
	for _, id := range a {
		in[id] = true
	}
	seen := make(map[uuid.UUID]bool, len(b))
	for _, id := range b {
		if !in[id] {
			return false
		}
		seen[id] = true
	}
	return len(seen) == len(in)
}
