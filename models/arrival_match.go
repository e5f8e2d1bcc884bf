package models

import (
	"context"
	"strconv"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/money"
)

// AliasMatched is the reason of an alias that ties a keyed row of one door
// (a bank sync, an API client's bank id) to the transaction another door
// wrote for the same movement (a file, a person): the row is that
// transaction, under the new door's id, now and whenever it comes again.
const AliasMatched = "matched"

// arrivalCandidates is the condition, shared with the partial index that
// serves it, of the rows an arriving keyed row may be the same movement
// as: a person's or coffer's own (no key), a file's or a bank sync's.
// Rows an API client keyed are its own records, matched by their keys.
const arrivalCandidates = "(external_id IS NULL OR source IN ('file_import', 'simplefin'))"

// arrivalAmount is the amount a row had when it arrived, its
// fingerprint's second field, as transactions_arrival_amount_idx holds it
// (migration 20261210500000): a query must repeat the index's expression
// as it is for the planner to use the index. A row is only ever the same
// movement as a row of its own amount (see rowMatcher.match), so the
// arrival check reads that amount's rows of its days, however dense the
// account.
const (
	pgArrivalAmount     = "split_part(fingerprint, '|', 2)"
	sqliteArrivalAmount = "substr(fingerprint, 12, instr(substr(fingerprint, 12), '|') - 1)"
)

func (s *Store) arrivalAmount() string {
	if s.Postgres() {
		return pgArrivalAmount
	}
	return sqliteArrivalAmount
}

// arrivalAmountText is an amount as a fingerprint writes it (see
// Fingerprint).
func arrivalAmountText(a money.Amount) string { return strconv.FormatInt(int64(a), 10) }

// loadArrivalMatcher reads the account's transactions that an arriving
// keyed row of source may be the same movement as: live, posted rows of
// one of amounts whose fingerprints fall between from and to (widened for
// made rows), of another door (see arrivalCandidates; a row of source is
// that door's own, found by its key). Those an alias of source already
// ties to a key are claimed: they answer for that key, not for another.
// held reports whether there was any such row, claimed or not.
func (s *Store) loadArrivalMatcher(ctx context.Context, familyID, accountID uuid.UUID, source string, from, to civil.Date, amounts []money.Amount) (m *rowMatcher, held bool, err error) {
	m = &rowMatcher{byDayAmount: map[string][]*matchable{}}
	if len(amounts) == 0 {
		return m, false, nil
	}
	texts, seen := make([]string, 0, len(amounts)), make(map[money.Amount]bool, len(amounts))
	for _, a := range amounts {
		if !seen[a] {
			seen[a] = true
			texts = append(texts, arrivalAmountText(a))
		}
	}
	from, to = widen(from, to)
	var existing []struct {
		ID          uuid.UUID    `bun:"id"`
		Date        civil.Date   `bun:"date"`
		Amount      money.Amount `bun:"amount"`
		Name        string       `bun:"name"`
		Fingerprint *string      `bun:"fingerprint"`
		Claimed     bool         `bun:"claimed"`
	}
	claimed := s.db.NewSelect().Model((*TransactionAlias)(nil)).ColumnExpr("1").
		Where("ta.family_id = ?", familyID).Where("ta.account_id = ?", accountID).Where("ta.source = ?", source).
		Where("ta.transaction_id = t.id")
	err = s.db.NewSelect().Model((*Transaction)(nil)).Column("id", "date", "amount", "name", "fingerprint").
		ColumnExpr("EXISTS (?) AS claimed", claimed).
		Where("t.family_id = ?", familyID).Where("t.account_id = ?", accountID).
		// "|" sorts after every digit: the range holds each day's
		// fingerprints whatever their amount and text.
		Where("t.fingerprint >= ? AND t.fingerprint < ?", string(from)+"|", string(to)+"|~").
		Where(s.arrivalAmount()+" IN (?)", bun.List(texts)).
		Where(arrivalCandidates).
		Where("t.deleted_at IS NULL").Where("NOT t.pending").Where("t.split_parent_id IS NULL"). // a part never arrived
		Where("(t.source IS NULL OR t.source <> ?)", source).OrderExpr("t.id").Scan(ctx, &existing)
	if err != nil {
		return nil, false, dbErr("find transactions an arrival matches", err)
	}
	for _, e := range existing {
		if !e.Claimed {
			m.add(&matchable{id: e.ID}, e.Fingerprint, e.Date, e.Amount, e.Name)
		}
	}
	return m, len(existing) > 0, nil
}

// matchArrivals finds, for the keyed rows of a batch entering by the
// pipeline (an API client sending its bank's ids), the ones the account
// already holds from a file, a bank sync or a person, so that a movement
// imported from a file first and sent again by an app is not doubled. A
// row whose key is stored is a replay and left to the pipeline; a row
// whose key was matched before gets that transaction again; any other is
// matched by its fingerprint, and the match kept as an alias. Matched
// rows get IngestDuplicate and the stored transaction; they are not
// written. Rows without an external id are a person's entries, each its
// own movement even when it looks like another: they are never matched.
// A batch that matches nothing costs two indexed queries: the candidates
// of its rows' days and amounts, and the aliases of its keys.
func (s *Store) matchArrivals(ctx context.Context, familyID uuid.UUID, rows []*NewTransaction) error {
	type group struct {
		accountID uuid.UUID
		source    string
		m         *rowMatcher
	}
	groups := map[string]*group{}
	var keyed []*NewTransaction
	for _, r := range rows {
		if !arrives(r) {
			continue
		}
		t := r.Row
		keyed = append(keyed, r)
		groups[t.AccountID.String()+"\x00"+Str(t.Source)] = &group{accountID: t.AccountID, source: Str(t.Source)}
	}
	if len(keyed) == 0 {
		return nil
	}
	live := false
	for _, g := range groups {
		from, to, amounts := arrivalSpan(keyed, g.accountID, g.source)
		m, some, err := s.loadArrivalMatcher(ctx, familyID, g.accountID, g.source, from, to, amounts)
		if err != nil {
			return err
		}
		if some {
			g.m, live = m, true
		}
	}
	// A key matched before answers with its transaction whatever the row
	// says now: a replay whose amount or day the bank has since corrected
	// is still that movement, even with no candidate left in its days.
	keys := keysOf(keyed, func(*NewTransaction) bool { return true })
	var aliases []TransactionAlias
	if err := s.db.NewSelect().Model(&aliases).Where("ta.family_id = ?", familyID).
		Where("ta.account_id IN (?)", bun.List(keys.accounts)).Where("ta.source IN (?)", bun.List(keys.sources)).
		Where("ta.external_id IN (?)", bun.List(keys.exts)).Scan(ctx); err != nil {
		return dbErr("find matched keys", err)
	}
	if !live && len(aliases) == 0 {
		return nil
	}

	stored := map[string]bool{}
	var held []struct {
		AccountID  uuid.UUID `bun:"account_id"`
		Source     *string   `bun:"source"`
		ExternalID *string   `bun:"external_id"`
	}
	if err := keys.where(s.db.NewSelect().Model((*Transaction)(nil)).Column("account_id", "source", "external_id").
		Where("family_id = ?", familyID), "", keys.exts).Scan(ctx, &held); err != nil {
		return dbErr("find stored keys", err)
	}
	for _, h := range held {
		stored[h.AccountID.String()+"\x00"+Str(h.Source)+"\x00"+Str(h.ExternalID)] = true
	}
	aliasOf := map[string]uuid.UUID{}
	for _, a := range aliases {
		aliasOf[a.AccountID.String()+"\x00"+a.Source+"\x00"+a.ExternalID] = a.TransactionID
	}

	found := map[*NewTransaction]uuid.UUID{}
	var made []TransactionAlias
	for _, r := range keyed {
		k, _ := ingestKey(r.Row)
		if stored[k] {
			continue
		}
		if id, ok := aliasOf[k]; ok { // matched before, or by an earlier row of this batch
			found[r] = id
			continue
		}
		g := groups[r.Row.AccountID.String()+"\x00"+Str(r.Row.Source)]
		if g.m == nil {
			continue
		}
		if id, ok := g.m.match(r.Row.Date, r.Row.Amount, r.Row.Name, false); ok {
			found[r], aliasOf[k] = id, id
			made = append(made, TransactionAlias{AccountID: r.Row.AccountID, FamilyID: familyID, Source: Str(r.Row.Source),
				ExternalID: *r.Row.ExternalID, TransactionID: id, Reason: AliasMatched, CreatedAt: s.now()})
		}
	}
	if len(found) == 0 {
		return nil
	}
	if err := s.insertAliases(ctx, made); err != nil {
		return err
	}
	ids := make([]uuid.UUID, 0, len(found))
	for _, id := range found {
		ids = append(ids, id)
	}
	var txs []*Transaction
	if err := s.transactionSelect(&txs, familyID).Where("t.id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		return dbErr("get matched transactions", err)
	}
	if err := s.loadTransactionLinks(ctx, familyID, txs); err != nil {
		return err
	}
	byID := make(map[uuid.UUID]*Transaction, len(txs))
	for _, t := range txs {
		byID[t.ID] = t
	}
	for r, id := range found {
		// A matched transaction deleted since is not there to answer
		// for the row: the row is then written as new.
		if t := byID[id]; t != nil {
			r.Status, r.Row = IngestDuplicate, t
		}
	}
	return nil
}

// arrives reports whether r is a keyed row that matchArrivals looks at:
// valid, not decided yet, posted, keyed by a door other than a file or a
// bank sync.
func arrives(r *NewTransaction) bool {
	t := r.Row
	return len(r.Problems) == 0 && r.Status == "" && t.ExternalID != nil && t.AccountID != uuid.Nil && !t.Pending &&
		Str(t.Source) != SourceFileImport && Str(t.Source) != SourceSimpleFIN
}

// arrivalSpan is the first and last day of the keyed rows of one account
// and source, and their amounts.
func arrivalSpan(rows []*NewTransaction, accountID uuid.UUID, source string) (from, to civil.Date, amounts []money.Amount) {
	for _, r := range rows {
		if r.Row.AccountID != accountID || Str(r.Row.Source) != source {
			continue
		}
		amounts = append(amounts, r.Row.Amount)
		if from == "" || r.Row.Date < from {
			from = r.Row.Date
		}
		if r.Row.Date > to {
			to = r.Row.Date
		}
	}
	return from, to, amounts
}
