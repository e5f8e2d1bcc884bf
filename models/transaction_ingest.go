package models

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/uptrace/bun"
)

// IngestStatus is what the ingestion pipeline did with one row.
type IngestStatus string

// The outcomes of one row, as the bulk API names them.
const (
	IngestCreated  IngestStatus = "created"  // written now
	IngestExisting IngestStatus = "existing" // its (account, source, external id) was already stored
	// IngestDuplicate: the account holds the same movement from another
	// door (a file, a person), found by its fingerprint (see matchArrivals).
	IngestDuplicate IngestStatus = "duplicate"
	IngestInvalid   IngestStatus = "error" // refused; Problems say why
)

// NewTransaction is one row entering the ledger through the pipeline,
// whatever door it came in by (the API, one or many at a time, a screen, a
// file import). The caller fills Row and TagIDs, and Problems with what
// its own parsing refused; the pipeline sets Status and replaces Row with
// the stored row, links filled in, when there is one.
type NewTransaction struct {
	// Row is the transaction to write. A row the caller already found
	// invalid may be partial: uuid.Nil for an account it could not read.
	Row      *Transaction
	TagIDs   []uuid.UUID
	Problems []string

	Status IngestStatus

	// transfer is what a rule that makes the row one side of a transfer
	// decided: the other side is written once the row is.
	transfer *RuleResult
}

// RulesStep is the rules step of the pipeline. It is called once per batch
// with the rows about to be written (all valid, all of familyID) and may
// change what rules change: name, category, merchant, tags, exclusion.
// It must leave alone every field named in a row's LockedFields: those are
// a person's edits. tx is the store the batch is written with. An error
// fails the whole batch, so a rule that cannot apply to one row should
// skip that row rather than return one.
type RulesStep func(ctx context.Context, tx *Store, familyID uuid.UUID, rows []*NewTransaction) error

// ingestConflict makes a row whose (account, source, external id) is held
// already insert nothing: the unique index decides, under concurrency too.
const ingestConflict = "CONFLICT (account_id, source, external_id) WHERE external_id IS NOT NULL DO NOTHING"

// IngestTransactions runs rows of one family through the pipeline:
// normalize, check references, deduplicate (inside the batch and, by the
// unique index, against what is stored), apply the rules, write, and look
// up the stored row of every replay. One row's problem never fails the
// others; each row gets its Status. It returns the accounts that got new
// rows, whose balance changes it reports (see OnBalanceChange). The whole batch costs a few statements,
// never one per row. A replay is recognised before any other validation:
// a row whose key is stored is existing, whatever else it says.
func (s *Store) IngestTransactions(ctx context.Context, familyID uuid.UUID, rows []*NewTransaction) (changedAccounts []uuid.UUID, err error) {
	if len(rows) == 0 {
		return nil, nil
	}
	now := s.now()
	for _, r := range rows {
		normalize(r, familyID, now)
	}
	// A lone row first tries the one statement that checks and writes it,
	// and asks the database whether the family needs the steps below.
	first, tried, err := s.ingestOne(ctx, familyID, rows, nil)
	if err != nil || first.created {
		return s.createdOne(ctx, familyID, rows, first, err)
	}
	if !tried || first.arrivals {
		if err := s.matchArrivals(ctx, familyID, rows); err != nil {
			return nil, err
		}
	}
	if len(rows) == 1 && rows[0].Status == IngestDuplicate {
		return nil, nil
	}
	// The pay step's one read: the family's active recurring transactions,
	// matched in Go against the rows once the rules have filed them.
	bills, err := s.loadBills(ctx, familyID)
	if err != nil {
		return nil, err
	}
	if tried && first.held() {
		// Held by a check, not by the row itself: once those are done in
		// Go, the lone row may still take the one statement.
		if one, _, err := s.ingestOne(ctx, familyID, rows, bills); err != nil || one.created {
			return s.createdOne(ctx, familyID, rows, one, err)
		}
	}
	refs := newRefCache(familyID)
	if err := refs.check(ctx, s, rows); err != nil {
		return nil, err
	}

	// Inside the batch, the first valid row holding a key is the one
	// written; the others are replays of it.
	var write []*NewTransaction
	held := map[string]bool{}
	for _, r := range rows {
		if len(r.Problems) > 0 || r.Status != "" { // refused, or a movement already held (matchArrivals)
			continue
		}
		if k, ok := ingestKey(r.Row); ok {
			if held[k] {
				continue
			}
			held[k] = true
		}
		write = append(write, r)
	}

	if err := s.applyRules(ctx, familyID, refs, write); err != nil {
		return nil, err
	}

	created, err := s.writeNew(ctx, familyID, write, bills)
	if err != nil {
		return nil, err
	}
	for _, r := range write {
		if created[r.Row.ID] {
			changedAccounts = appendNew(changedAccounts, r.Row.AccountID)
		}
	}
	s.balanceChange(ctx, familyID, changedAccounts...) // committed, whatever comes next
	transferred, err := s.ruleTransfers(ctx, familyID, write, created)
	if err != nil {
		return nil, err
	}
	s.balanceChange(ctx, familyID, transferred...)
	for _, r := range write {
		if created[r.Row.ID] {
			r.Status = IngestCreated
			refs.fill(r)
		}
	}
	changedAccounts = appendNew(changedAccounts, transferred...)
	if err := s.replays(ctx, familyID, rows); err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.Status != "" {
			continue
		}
		r.Status = IngestInvalid
		if len(r.Problems) == 0 {
			// Valid when checked, yet not written: the account stopped
			// being active before the write.
			r.Problems = []string{"Account is not active"}
		}
	}
	return changedAccounts, nil
}

// applyRules is the pipeline's rules step, the same for every door (the
// file import's included): s.Rules on the rows about to be written, then
// what the rules named checked against the family (refs), a record
// deleted since being dropped rather than failing the row.
func (s *Store) applyRules(ctx context.Context, familyID uuid.UUID, refs *refCache, rows []*NewTransaction) error {
	if len(rows) == 0 || s.Rules == nil {
		return nil
	}
	if err := s.Rules(ctx, s, familyID, rows); err != nil {
		return err
	}
	return refs.afterRules(ctx, s, rows)
}

// ingestOne is the pipeline for the commonest request, one valid row
// without tags on PostgreSQL outside a transaction: after the rules, the
// checks, the insert and the reading back of what the answer shows are
// one prepared statement (createOne). Without bills (nil: not loaded yet)
// the statement also asks whether the account holds rows the row may
// arrive as (see matchArrivals) and whether the family has active
// recurring transactions, and inserts nothing when it does. tried false:
// the row is not for this path. When nothing was written, the full path
// must tell a replay from a refusal (the row is as it came, the rules
// undone, so that they run there again on it).
//
// A row that pays an occurrence of a recurring transaction takes the full
// path too, whose write is a transaction the payment joins.
func (s *Store) ingestOne(ctx context.Context, familyID uuid.UUID, rows []*NewTransaction, bills *bills) (out oneOutcome, tried bool, err error) {
	if len(rows) != 1 || len(rows[0].Problems) > 0 || len(rows[0].TagIDs) > 0 || !s.Postgres() || s.inTx() {
		return out, false, nil
	}
	r := rows[0]
	before := *r.Row
	var arrivals *arrivalCheck
	if bills == nil && arrives(r) {
		from, to := widen(r.Row.Date, r.Row.Date)
		// as loadArrivalMatcher's span and amounts
		arrivals = &arrivalCheck{from: string(from) + "|", to: string(to) + "|~", amount: arrivalAmountText(r.Row.Amount)}
	}
	if s.Rules != nil {
		if err := s.Rules(ctx, s, familyID, rows); err != nil {
			return out, false, err
		}
	}
	if len(r.TagIDs) == 0 && r.transfer == nil && len(bills.match([]*Transaction{r.Row})) == 0 {
		out, err = s.createOne(ctx, r.Row, arrivals, bills != nil)
		if err != nil {
			return out, true, err
		}
		if out.created {
			r.Status = IngestCreated
			return out, true, nil
		}
		tried = true
	}
	*r.Row, r.TagIDs, r.transfer = before, nil, nil
	return out, tried, nil
}

// createdOne is the answer of IngestTransactions for a lone row that
// ingestOne wrote (or failed on, err), after reporting its balance
// change. The statement that wrote it has already told whether its
// account is in the family's currency: when it is, the rates check of
// that report (RatesMissing) needs no query.
func (s *Store) createdOne(ctx context.Context, familyID uuid.UUID, rows []*NewTransaction, out oneOutcome, err error) ([]uuid.UUID, error) {
	if err != nil {
		return nil, err
	}
	account := rows[0].Row.AccountID
	if !out.foreign {
		ctx = context.WithValue(ctx, familyCurrencyKey{}, account)
	}
	s.balanceChange(ctx, familyID, account)
	return []uuid.UUID{account}, nil
}

// familyCurrencyKey marks the context of a balance change whose one
// account (the value) a write has just read to be in its family's
// currency (see createdOne and RatesMissing).
type familyCurrencyKey struct{}

// normalize gives a row what every door leaves to the pipeline: its id and
// timestamps, its family, a trimmed name, the default source of a keyed
// row, and each tag once.
func normalize(r *NewTransaction, familyID uuid.UUID, now time.Time) {
	t := r.Row
	t.FamilyID = familyID
	t.ID = NewID()
	t.CreatedAt, t.UpdatedAt = now, now
	t.Name = strings.TrimSpace(t.Name)
	takeFingerprint(t)
	if t.ExternalID != nil && t.Source == nil {
		src := "api"
		t.Source = &src
	}
	normalizeTags(r)
	r.Status, r.transfer = "", nil
}

// ruleTransfers writes the other side of every transfer the rules made of
// a row written now (created), in one transaction after the rows', and
// gives each such row as stored, its transfer shown. It returns the
// accounts of the other sides.
func (s *Store) ruleTransfers(ctx context.Context, familyID uuid.UUID, rows []*NewTransaction, created map[uuid.UUID]bool) ([]uuid.UUID, error) {
	var made []*NewTransaction
	for _, r := range rows {
		if r.transfer != nil && created[r.Row.ID] {
			made = append(made, r)
		}
	}
	if len(made) == 0 {
		return nil, nil
	}
	var accounts []uuid.UUID
	err := s.RunInTx(ctx, func(tx *Store) error {
		for _, r := range made {
			to, err := tx.ruleTransfer(ctx, familyID, r.transfer, nil)
			if err != nil {
				return err
			}
			if to != uuid.Nil && !slices.Contains(accounts, to) {
				accounts = append(accounts, to)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, r := range made {
		row, err := s.Transaction(ctx, familyID, r.Row.ID)
		if err != nil {
			return nil, err
		}
		*r.Row = *row
		r.transfer = nil
	}
	return accounts, nil
}

// ingestKey is a keyed row's (account, source, external id), as one string.
func ingestKey(t *Transaction) (string, bool) {
	if t.ExternalID == nil || t.AccountID == uuid.Nil {
		return "", false
	}
	return t.AccountID.String() + "\x00" + Str(t.Source) + "\x00" + *t.ExternalID, true
}

// writeNew inserts rows and their tags and returns the ids it inserted. A
// row whose key is stored already, or whose account is not active at the
// time of the write, is not inserted. One row without tags is one
// statement; more are one transaction of three. The occurrences of
// recurring transactions the rows pay (see payOccurrences) are recorded in
// that transaction; a lone row that pays one takes it too.
func (s *Store) writeNew(ctx context.Context, familyID uuid.UUID, rows []*NewTransaction, bills *bills) (map[uuid.UUID]bool, error) {
	created := map[uuid.UUID]bool{}
	if len(rows) == 0 {
		return created, nil
	}
	all := func(*NewTransaction) bool { return true }
	if len(rows) == 1 && len(rows[0].TagIDs) == 0 && len(bills.matchNew(rows, all)) == 0 {
		// The account check and the insert in one statement, atomic on its
		// own: no transaction round trips for the common single create.
		t := rows[0].Row
		args := newWrite.args(make([]any, 0, len(ingestColumns)+2), t)
		res, err := s.db.NewRaw(insertTransactionSQL, append(args, t.AccountID, t.FamilyID)...).Exec(ctx)
		if err != nil {
			return nil, dbErr("create transaction", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			created[t.ID] = true
		}
		return created, nil
	}
	if s.Postgres() && len(rows) >= copyFrom {
		created, err := s.copyNew(ctx, familyID, rows, bills)
		if !errors.Is(err, ErrConflict) {
			return created, err
		}
		// A key was stored by a concurrent write after the check: the
		// statement below lets the unique index sort it out.
		clear(created)
	}
	err := s.RunInTx(ctx, func(tx *Store) error {
		active, err := tx.lockActiveAccounts(ctx, familyID, rows)
		if err != nil {
			return err
		}
		batch := make([]Transaction, 0, len(rows))
		for _, r := range rows {
			if active[r.Row.AccountID] {
				batch = append(batch, *r.Row)
			}
		}
		for start := 0; start < len(batch); start += MaxBulk {
			part := batch[start:min(start+MaxBulk, len(batch))]
			var ids []uuid.UUID
			_, err := tx.db.NewInsert().Model(&part).Column(ingestColumns...).On(ingestConflict).
				Returning("id").Exec(ctx, &ids)
			if err != nil {
				return dbErr("create transactions", err)
			}
			for _, id := range ids {
				created[id] = true
			}
		}
		var links []TransactionTag
		for _, r := range rows {
			if created[r.Row.ID] {
				for _, tag := range r.TagIDs {
					links = append(links, TransactionTag{TransactionID: r.Row.ID, TagID: tag, FamilyID: familyID})
				}
			}
		}
		if err := tx.insertTags(ctx, links); err != nil {
			return err
		}
		return tx.payOccurrences(ctx, familyID, bills.matchNew(rows, func(r *NewTransaction) bool { return created[r.Row.ID] }))
	})
	return created, err
}

// copyFrom is the batch size from which PostgreSQL gets the rows by COPY:
// below it, one multi-row INSERT is as fast and simpler.
const copyFrom = 50

// lockActiveAccounts returns which of the rows' accounts are active, and
// keeps them so until the transaction ends: FOR SHARE holds off a
// concurrent status change and lets other writes of the account go on
// beside this one, as their balance moves only append to what waits
// (migration 20261208100000). SQLite has one writer anyway.
func (s *Store) lockActiveAccounts(ctx context.Context, familyID uuid.UUID, rows []*NewTransaction) (map[uuid.UUID]bool, error) {
	var ids []uuid.UUID
	for _, r := range rows {
		if !slices.Contains(ids, r.Row.AccountID) {
			ids = append(ids, r.Row.AccountID)
		}
	}
	var active []uuid.UUID
	q := s.db.NewSelect().Model((*Account)(nil)).Column("id").
		Where("family_id = ?", familyID).Where("id IN (?)", bun.List(ids)).Where("status = ?", AccountActive)
	if s.Postgres() {
		q.OrderExpr("id").For("SHARE")
	}
	if err := q.Scan(ctx, &active); err != nil {
		return nil, dbErr("lock accounts", err)
	}
	out := make(map[uuid.UUID]bool, len(active))
	for _, id := range active {
		out[id] = true
	}
	return out, nil
}

// copyNew is writeNew on PostgreSQL for a large batch: the keys already
// stored are read first and left out, and the rest goes in by COPY, the
// fastest way in, which has no ON CONFLICT: a key stored meanwhile by a
// concurrent write fails the COPY (ErrConflict, everything rolled back),
// and the caller falls back to the INSERT that skips it.
func (s *Store) copyNew(ctx context.Context, familyID uuid.UUID, rows []*NewTransaction, bills *bills) (map[uuid.UUID]bool, error) {
	created := map[uuid.UUID]bool{}
	err := s.bulkTx(ctx, func(tx *Store, copyRows copyFunc) error {
		active, err := tx.lockActiveAccounts(ctx, familyID, rows)
		if err != nil {
			return err
		}
		keyed := keysOf(rows, func(*NewTransaction) bool { return true })
		stored := map[string]bool{}
		for start := 0; start < len(keyed.exts); start += MaxBulk {
			var keys []Transaction
			err := keyed.where(tx.db.NewSelect().Model(&keys).Column("account_id", "source", "external_id").
				Where("family_id = ?", familyID), "", keyed.exts[start:min(start+MaxBulk, len(keyed.exts))]).Scan(ctx)
			if err != nil {
				return dbErr("get stored keys", err)
			}
			for i := range keys {
				if k, ok := ingestKey(&keys[i]); ok {
					stored[k] = true
				}
			}
		}
		var keep []*NewTransaction
		for _, r := range rows {
			if k, ok := ingestKey(r.Row); active[r.Row.AccountID] && !(ok && stored[k]) {
				keep = append(keep, r)
			}
		}
		if err := tx.insertRows(ctx, copyRows, familyID, keep, nil); err != nil {
			return err
		}
		if err := tx.payOccurrences(ctx, familyID, bills.matchNew(keep, func(*NewTransaction) bool { return true })); err != nil {
			return err
		}
		for _, r := range keep {
			created[r.Row.ID] = true
		}
		return nil
	})
	return created, err
}

// insertRows is the pipeline's write step for rows already decided new
// (deduplicated, their accounts checked), every door's: the rows and their
// tags, in the caller's transaction, by COPY when copyRows is set (see
// bulkTx), else by multi-row INSERTs. importID, when set, is the file
// import writing them, whose revert removes them.
func (s *Store) insertRows(ctx context.Context, copyRows copyFunc, familyID uuid.UUID, rows []*NewTransaction, importID *uuid.UUID) error {
	if len(rows) == 0 {
		return nil
	}
	w := newWrite
	if importID != nil {
		w = fileWrite
	}
	if copyRows != nil {
		values := make([][]any, 0, len(rows))
		var tags [][]any
		for _, r := range rows {
			if importID != nil {
				r.Row.ImportID = importID
			}
			values = append(values, w.pgValues(make([]any, 0, len(w.names)), r.Row))
			for _, tag := range r.TagIDs {
				tags = append(tags, []any{pgUUID(&r.Row.ID), pgUUID(&tag), pgUUID(&familyID)})
			}
		}
		if err := copyRows(ctx, "transactions", w.names, values); err != nil {
			return dbErr("copy transactions", err)
		}
		if len(tags) > 0 {
			if err := copyRows(ctx, "transaction_tags", []string{"transaction_id", "tag_id", "family_id"}, tags); err != nil {
				return dbErr("copy transaction tags", err)
			}
		}
		return nil
	}
	var links []TransactionTag
	for start := 0; start < len(rows); start += MaxBulk {
		part := rows[start:min(start+MaxBulk, len(rows))]
		batch := make([]Transaction, len(part))
		for i, r := range part {
			batch[i] = *r.Row
			batch[i].ImportID = importID
			takeFingerprint(&batch[i]) // bun writes the field; COPY above takes fingerprintOf
			for _, tag := range r.TagIDs {
				links = append(links, TransactionTag{TransactionID: r.Row.ID, TagID: tag, FamilyID: familyID})
			}
		}
		// Named, a scan-only column (import_id) is written too.
		if _, err := s.db.NewInsert().Model(&batch).Column(w.names...).Exec(ctx); err != nil {
			return dbErr("insert transactions", err)
		}
	}
	return s.insertTags(ctx, links)
}

// pgUUID is id as pgx writes it without a detour through text; nil is NULL.
func pgUUID(id *uuid.UUID) pgtype.UUID {
	if id == nil {
		return pgtype.UUID{}
	}
	return pgtype.UUID{Bytes: *id, Valid: true}
}

// replays gives every keyed row not written now the stored row holding
// its key, with one lookup for the batch: such a row is existing, whatever
// its problems were.
func (s *Store) replays(ctx context.Context, familyID uuid.UUID, rows []*NewTransaction) error {
	keyed := keysOf(rows, func(r *NewTransaction) bool { return r.Status == "" })
	if len(keyed.exts) == 0 {
		return nil
	}
	var stored []*Transaction
	for start := 0; start < len(keyed.exts); start += MaxBulk {
		var part []*Transaction
		err := keyed.where(s.transactionSelect(&part, familyID), "t.", keyed.exts[start:min(start+MaxBulk, len(keyed.exts))]).Scan(ctx)
		if err != nil {
			return dbErr("get transactions by external id", err)
		}
		stored = append(stored, part...)
	}
	if err := s.loadTransactionLinks(ctx, familyID, stored); err != nil {
		return err
	}
	byKey := make(map[string]*Transaction, len(stored))
	for _, t := range stored {
		if k, ok := ingestKey(t); ok {
			byKey[k] = t
		}
	}
	for _, r := range rows {
		if r.Status != "" {
			continue
		}
		if k, ok := ingestKey(r.Row); ok && byKey[k] != nil {
			r.Status, r.Row, r.Problems = IngestExisting, byKey[k], nil
		}
	}
	return nil
}

// batchKeys are the (account, source, external id) keys of a batch's
// rows, column by column.
type batchKeys struct {
	accounts []uuid.UUID
	sources  []string
	exts     []string
}

// keysOf gathers the keys of the keyed rows that pass.
func keysOf(rows []*NewTransaction, pass func(*NewTransaction) bool) batchKeys {
	var k batchKeys
	for _, r := range rows {
		t := r.Row
		if t.ExternalID == nil || t.AccountID == uuid.Nil || !pass(r) {
			continue
		}
		k.exts = append(k.exts, *t.ExternalID)
		if !slices.Contains(k.accounts, t.AccountID) {
			k.accounts = append(k.accounts, t.AccountID)
		}
		if !slices.Contains(k.sources, Str(t.Source)) {
			k.sources = append(k.sources, Str(t.Source))
		}
	}
	return k
}

// where narrows q to rows that may hold one of the keys (exts a part of
// k.exts): every column of the unique index is named, so that it serves
// the lookup however many rows the family has. The caller matches whole
// keys.
func (k batchKeys) where(q *bun.SelectQuery, alias string, exts []string) *bun.SelectQuery {
	return q.Where(alias+"account_id IN (?)", bun.List(k.accounts)).Where(alias+"source IN (?)", bun.List(k.sources)).
		Where(alias+"external_id IN (?)", bun.List(exts))
}

// refCache holds the records a batch's rows name, each loaded once.
type refCache struct {
	family     uuid.UUID
	accounts   map[uuid.UUID]*Account
	categories map[uuid.UUID]*Category
	merchants  map[uuid.UUID]*Merchant
	tags       map[uuid.UUID]*Tag
}

func newRefCache(familyID uuid.UUID) *refCache {
	return &refCache{family: familyID, accounts: map[uuid.UUID]*Account{}, categories: map[uuid.UUID]*Category{},
		merchants: map[uuid.UUID]*Merchant{}, tags: map[uuid.UUID]*Tag{}}
}

// load reads the records among the ids that are not loaded yet, one query
// per kind.
func (c *refCache) load(ctx context.Context, s *Store, rows []*NewTransaction) error {
	var acc, cat, mer, tag []uuid.UUID
	want := func(list *[]uuid.UUID, id uuid.UUID, have bool) {
		if !have && !slices.Contains(*list, id) {
			*list = append(*list, id)
		}
	}
	for _, r := range rows {
		t := r.Row
		if t.AccountID != uuid.Nil {
			_, ok := c.accounts[t.AccountID]
			want(&acc, t.AccountID, ok)
		}
		if t.CategoryID != nil {
			_, ok := c.categories[*t.CategoryID]
			want(&cat, *t.CategoryID, ok)
		}
		if t.MerchantID != nil {
			_, ok := c.merchants[*t.MerchantID]
			want(&mer, *t.MerchantID, ok)
		}
		for _, id := range r.TagIDs {
			_, ok := c.tags[id]
			want(&tag, id, ok)
		}
	}
	if err := loadRefs(ctx, s, c.family, "a", acc, c.accounts, func(a *Account) uuid.UUID { return a.ID }); err != nil {
		return err
	}
	if err := loadRefs(ctx, s, c.family, "c", cat, c.categories, func(x *Category) uuid.UUID { return x.ID }); err != nil {
		return err
	}
	if err := loadRefs(ctx, s, c.family, "m", mer, c.merchants, func(x *Merchant) uuid.UUID { return x.ID }); err != nil {
		return err
	}
	return loadRefs(ctx, s, c.family, "tg", tag, c.tags, func(x *Tag) uuid.UUID { return x.ID })
}

// loadRefs reads the family's records of one kind among ids into into; an
// id that names none is remembered as nil.
func loadRefs[T any](ctx context.Context, s *Store, familyID uuid.UUID, alias string, ids []uuid.UUID, into map[uuid.UUID]*T, id func(*T) uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	for start := 0; start < len(ids); start += MaxBulk {
		part := ids[start:min(start+MaxBulk, len(ids))]
		var found []*T
		err := s.db.NewSelect().Model(&found).
			Where(alias+".family_id = ?", familyID).Where(alias+".id IN (?)", bun.List(part)).Scan(ctx)
		if err != nil {
			return dbErr("get transaction references", err)
		}
		for _, id := range part {
			into[id] = nil
		}
		for _, f := range found {
			into[id(f)] = f
		}
	}
	return nil
}

// check adds a problem to each row for every reference that is not a
// record of the family (or, for the account, not an active one), in the
// words CheckTransactionRefs uses.
func (c *refCache) check(ctx context.Context, s *Store, rows []*NewTransaction) error {
	if err := c.load(ctx, s, rows); err != nil {
		return err
	}
	for _, r := range rows {
		t := r.Row
		if t.AccountID != uuid.Nil {
			switch a := c.accounts[t.AccountID]; {
			case a == nil:
				r.Problems = append(r.Problems, "Account not found")
			case a.Status != AccountActive:
				r.Problems = append(r.Problems, "Account is not active")
			}
		}
		if t.CategoryID != nil && c.categories[*t.CategoryID] == nil {
			r.Problems = append(r.Problems, "Category "+t.CategoryID.String()+" not found")
		}
		if t.MerchantID != nil && c.merchants[*t.MerchantID] == nil {
			r.Problems = append(r.Problems, "Merchant "+t.MerchantID.String()+" not found")
		}
		for _, id := range r.TagIDs {
			if c.tags[id] == nil {
				r.Problems = append(r.Problems, "Tag "+id.String()+" not found")
			}
		}
	}
	return nil
}

// afterRules loads what the rules named and drops a category, merchant or
// tag that is not the family's.
func (c *refCache) afterRules(ctx context.Context, s *Store, rows []*NewTransaction) error {
	for _, r := range rows {
		normalizeTags(r)
	}
	if err := c.load(ctx, s, rows); err != nil {
		return err
	}
	for _, r := range rows {
		t := r.Row
		if t.CategoryID != nil && c.categories[*t.CategoryID] == nil {
			t.CategoryID = nil
		}
		if t.MerchantID != nil && c.merchants[*t.MerchantID] == nil {
			t.MerchantID = nil
		}
		r.TagIDs = slices.DeleteFunc(r.TagIDs, func(id uuid.UUID) bool { return c.tags[id] == nil })
	}
	return nil
}

// normalizeTags keeps each tag of a row once, in order.
func normalizeTags(r *NewTransaction) {
	if len(r.TagIDs) < 2 {
		return
	}
	r.TagIDs = slices.Clone(r.TagIDs)
	seen := make(map[uuid.UUID]bool, len(r.TagIDs))
	r.TagIDs = slices.DeleteFunc(r.TagIDs, func(id uuid.UUID) bool {
		dup := seen[id]
		seen[id] = true
		return dup
	})
}

// fill gives a written row its linked records, as Transaction returns them.
func (c *refCache) fill(r *NewTransaction) {
	t := r.Row
	t.Account = c.accounts[t.AccountID]
	t.Category, t.Merchant = nil, nil
	if t.CategoryID != nil {
		t.Category = c.categories[*t.CategoryID]
	}
	if t.MerchantID != nil {
		t.Merchant = c.merchants[*t.MerchantID]
	}
	t.Tags = make([]Tag, 0, len(r.TagIDs))
	for _, id := range r.TagIDs {
		t.Tags = append(t.Tags, *c.tags[id])
	}
	slices.SortFunc(t.Tags, func(a, b Tag) int {
		if d := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); d != 0 {
			return d
		}
		return strings.Compare(a.ID.String(), b.ID.String())
	})
}
