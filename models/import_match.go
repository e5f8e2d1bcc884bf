package models

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/money"
)

// ImportRun is what the steps of one run of an import's job share: the
// account's transactions that the rows could duplicate, read once for the
// whole run instead of once per step (which would read the rows of the
// earlier steps again and again).
type ImportRun struct {
	m      *rowMatcher
	loaded bool
}

// rowMatcher decides which incoming rows the account already holds, by
// the fingerprints its transactions were given when they arrived (never
// their current names): the rule every file format shares.
type rowMatcher struct {
	byDayAmount map[string][]*matchable
	made        []*matchable // rows coffer made (see madeFingerprint), by amount and a few days
}

// matchable is one transaction of the account a row may match.
type matchable struct {
	id     uuid.UUID
	text   string // normalized (see NormalizedName)
	fileID bool   // it holds a file's own id (a FITID): a row with another id is another movement
	used   bool   // each transaction answers for one row

	day    civil.Date // of a made row
	amount int64
}

// add files a transaction under its fingerprint (or, for one written
// before fingerprints were taken, under what it is now).
func (m *rowMatcher) add(c *matchable, fp *string, day civil.Date, amount money.Amount, name string) {
	f := Fingerprint(day, amount, name)
	if fp != nil {
		f = *fp
	}
	d, a, text, ok := splitFingerprint(f)
	if !ok {
		d, a, text = day, int64(amount), name
	}
	c.text = NormalizedName(text)
	if text == "" {
		c.day, c.amount = d, a
		m.made = append(m.made, c)
		return
	}
	k := dayAmount(d, a)
	m.byDayAmount[k] = append(m.byDayAmount[k], c)
}

func dayAmount(d civil.Date, a int64) string { return string(d) + "|" + money.Amount(a).String() }

// match returns the transaction a row duplicates: one of the same day and
// amount at arrival, the same text of the bank (see sameBankText), not yet
// claimed by another row. A row that carries a file's id (an OFX FITID)
// that was not found among the account's ids can still match a row that
// came without one (a CSV line of the same movement), never one that
// came with a different id.
//
// Failing that, a row matches the closest unclaimed row coffer made of the
// same amount within TransferMatchDays: the side of a transfer a rule or
// a person wrote into this account before its bank sent the movement (a
// card's payment, mirrored from the checking account, then in the card's
// file dated a day or two later).
func (m *rowMatcher) match(d civil.Date, a money.Amount, text string, hasID bool) (uuid.UUID, bool) {
	text = NormalizedName(text)
	for _, c := range m.byDayAmount[dayAmount(d, int64(a))] {
		if c.used || (hasID && c.fileID) || !sameBankText(c.text, text) {
			continue
		}
		c.used = true
		return c.id, true
	}
	var best *matchable
	gap := TransferMatchDays + 1
	for _, c := range m.made {
		if c.used || c.amount != int64(a) {
			continue
		}
		if g := abs(daysBetween(c.day, d)); g < gap {
			best, gap = c, g
		}
	}
	if best == nil {
		return uuid.Nil, false
	}
	best.used = true
	return best.id, true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// widen is a span of days with the room a made row's match needs around it.
func widen(from, to civil.Date) (civil.Date, civil.Date) {
	return civil.DateOf(from.Time().AddDate(0, 0, -TransferMatchDays)), civil.DateOf(to.Time().AddDate(0, 0, TransferMatchDays))
}

// findDuplicates marks the rows that the account already holds. A row
// with an external id (an OFX FITID) is a duplicate of the file import's
// transaction with that id; any row, failing that, is a duplicate of a
// transaction whose fingerprint (see rowMatcher.match) is the row's, that
// no other row of this import has claimed and that this import did not
// write: each existing transaction answers for one row, so two identical
// purchases in the file against one in the ledger leave one to import.
func (s *Store) findDuplicates(ctx context.Context, im *Import, rows []ImportLine, run *ImportRun) error {
	byExt, err := s.importedExternalIDs(ctx, im, rows)
	if err != nil {
		return err
	}
	if run == nil {
		run = &ImportRun{}
	}
	if !run.loaded {
		if run.m, err = s.loadMatchable(ctx, im, nil); err != nil {
			return err
		}
		run.loaded = true
	}
	for i := range rows {
		r := &rows[i]
		if r.ExternalID != "" {
			if id, ok := byExt[r.ExternalID]; ok {
				r.Status, r.TransactionID = LineDuplicate, &id
				continue
			}
			byExt[r.ExternalID] = r.ID // a second row with this FITID in the file is its duplicate
		}
		if id, ok := run.m.match(*r.Date, *r.Amount, r.Name, r.ExternalID != ""); ok {
			r.Status, r.TransactionID = LineDuplicate, &id
		} else {
			r.Status = LineImported
		}
	}
	return nil
}

// importedExternalIDs finds the account's file-imported transactions that
// hold the rows' external ids.
func (s *Store) importedExternalIDs(ctx context.Context, im *Import, rows []ImportLine) (map[string]uuid.UUID, error) {
	var ext []string
	for i := range rows {
		if rows[i].ExternalID != "" {
			ext = append(ext, rows[i].ExternalID)
		}
	}
	byExt := map[string]uuid.UUID{}
	for start := 0; start < len(ext); start += 1000 {
		var found []struct {
			ID         uuid.UUID `bun:"id"`
			ExternalID string    `bun:"external_id"`
		}
		err := s.db.NewSelect().Model((*Transaction)(nil)).Column("id", "external_id").
			Where("family_id = ?", im.FamilyID).Where("account_id = ?", im.AccountID).Where("source = ?", SourceFileImport).
			Where("external_id IN (?)", bun.List(ext[start:min(start+1000, len(ext))])).Scan(ctx, &found)
		if err != nil {
			return nil, dbErr("find imported external ids", err)
		}
		for _, f := range found {
			byExt[f.ExternalID] = f.ID
		}
	}
	return byExt, nil
}

// loadMatchable reads the account's transactions whose fingerprints fall
// in the days of the import's pending rows, less those this import wrote
// or that its rows already claimed. except, when given, are transactions
// to leave out as well.
func (s *Store) loadMatchable(ctx context.Context, im *Import, except []uuid.UUID) (*rowMatcher, error) {
	m := &rowMatcher{byDayAmount: map[string][]*matchable{}}
	var span struct {
		From *civil.Date `bun:"date_from"`
		To   *civil.Date `bun:"date_to"`
	}
	err := s.db.NewSelect().Model((*ImportLine)(nil)).ColumnExpr("MIN(date) AS date_from, MAX(date) AS date_to").
		Where("family_id = ?", im.FamilyID).Where("import_id = ?", im.ID).Where("status = ?", LinePending).Scan(ctx, &span)
	if err != nil {
		return nil, dbErr("import date range", err)
	}
	if span.From == nil || span.To == nil {
		return m, nil
	}
	*span.From, *span.To = widen(*span.From, *span.To)
	var existing []struct {
		ID          uuid.UUID    `bun:"id"`
		Date        civil.Date   `bun:"date"`
		Amount      money.Amount `bun:"amount"`
		Name        string       `bun:"name"`
		Fingerprint *string      `bun:"fingerprint"`
		ExternalID  *string      `bun:"external_id"`
		Source      *string      `bun:"source"`
	}
	claimed := s.db.NewSelect().Model((*ImportLine)(nil)).Column("transaction_id").
		Where("family_id = ?", im.FamilyID).Where("import_id = ?", im.ID).Where("status = ?", LineDuplicate).
		Where("transaction_id IS NOT NULL")
	q := s.db.NewSelect().Model((*Transaction)(nil)).Column("id", "date", "amount", "name", "fingerprint", "external_id", "source").
		Where("family_id = ?", im.FamilyID).Where("account_id = ?", im.AccountID).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			// "|" sorts after every digit: the range holds each day's
			// fingerprints whatever their amount and text.
			return q.Where("fingerprint >= ? AND fingerprint < ?", string(*span.From)+"|", string(*span.To)+"|~").
				WhereOr("fingerprint IS NULL AND date >= ? AND date <= ?", *span.From, *span.To)
		}).
		Where("deleted_at IS NULL").Where("split_parent_id IS NULL").Where("(import_id IS NULL OR import_id <> ?)", im.ID).
		Where("id NOT IN (?)", claimed).OrderExpr("id")
	if len(except) > 0 {
		q.Where("id NOT IN (?)", bun.List(except))
	}
	if err := q.Scan(ctx, &existing); err != nil {
		return nil, dbErr("find duplicate transactions", err)
	}
	for _, e := range existing {
		m.add(&matchable{id: e.ID, fileID: e.ExternalID != nil && e.Source != nil && *e.Source == SourceFileImport},
			e.Fingerprint, e.Date, e.Amount, e.Name)
	}
	return m, nil
}

// ImportSkip is a row of a pending import that its job will skip, and the
// transaction of the account that it duplicates.
type ImportSkip struct {
	Position    int
	Transaction Transaction
}

// ImportSkips says, for a pending import, which of its rows are already in
// the account and will be skipped when it runs, each with the transaction
// it matches, in file order: the job's own decision (findDuplicates), made
// now without writing anything. Another import is answered with none.
func (s *Store) ImportSkips(ctx context.Context, familyID, id uuid.UUID) (map[uuid.UUID]ImportSkip, error) {
	im, err := s.Import(ctx, familyID, id)
	if err != nil {
		return nil, err
	}
	out := map[uuid.UUID]ImportSkip{}
	if im.Status != ImportPending {
		return out, nil
	}
	var rows []ImportLine
	if err := s.db.NewSelect().Model(&rows).Column("id", "position", "name", "external_id", "date", "amount").
		Where("ir.family_id = ?", familyID).Where("ir.import_id = ?", id).Where("ir.status = ?", LinePending).
		OrderExpr("ir.position").Scan(ctx); err != nil {
		return nil, dbErr("load import rows", err)
	}
	if err := s.findDuplicates(ctx, im, rows, nil); err != nil {
		return nil, err
	}
	var ids []uuid.UUID
	for i := range rows {
		if rows[i].Status == LineDuplicate {
			ids = append(ids, *rows[i].TransactionID)
		}
	}
	byID := map[uuid.UUID]Transaction{}
	for start := 0; start < len(ids); start += 1000 {
		var txs []Transaction
		if err := s.db.NewSelect().Model(&txs).Column("id", "date", "amount", "currency", "name").
			Where("t.family_id = ?", familyID).Where("t.id IN (?)", bun.List(ids[start:min(start+1000, len(ids))])).
			Scan(ctx); err != nil {
			return nil, dbErr("load matched transactions", err)
		}
		for _, t := range txs {
			byID[t.ID] = t
		}
	}
	for i := range rows {
		r := &rows[i]
		if r.Status != LineDuplicate {
			continue
		}
		// A row matched by another row of the file (a repeated FITID) names
		// no stored transaction.
		t, ok := byID[*r.TransactionID]
		if !ok {
			t = Transaction{Name: "an earlier row of this file"}
		}
		out[r.ID] = ImportSkip{Position: r.Position, Transaction: t}
	}
	return out, nil
}
