package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// ImportBatchSize is how many rows one step of the import job decides and
// writes, in one database transaction.
const ImportBatchSize = 5000

// ImportStep runs one step of an import's job in one transaction: it
// takes the next ImportBatchSize pending rows, decides which are
// duplicates of what the account already holds, writes the others through
// the pipeline's rules and write steps (see writeFileImport), and
// records each row's outcome and the import's progress. With no pending
// row left it marks the import complete and reports done. An import that
// is not importing (finished, reverted, deleted) is done at once. A crash
// rolls the step back; the next run takes the same rows again.
//
// run carries what the steps of one run share; a run whose step failed
// must not be used again (a new run reloads what it holds).
func (s *Store) ImportStep(ctx context.Context, familyID, id uuid.UUID, run *ImportRun) (im *Import, done bool, err error) {
	err = s.bulkTx(ctx, func(tx *Store, copyRows copyFunc) error {
		im = new(Import)
		q := tx.db.NewSelect().Model(im).ExcludeColumn("raw_file").Where("im.family_id = ?", familyID).Where("im.id = ?", id)
		if tx.Postgres() {
			q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return dbErr("lock import", err)
		}
		if im.Status != ImportImporting {
			done = true
			if im.Status == ImportComplete { // a rerun after the commit: announce again, the policy is idempotent
				return tx.importBalances(ctx, im)
			}
			return nil
		}
		a := new(Account)
		aq := tx.db.NewSelect().Model(a).Where("a.family_id = ?", familyID).Where("a.id = ?", im.AccountID)
		if tx.Postgres() {
			aq.For("UPDATE") // one import step at a time per account: duplicates are decided against committed rows
		}
		if err := aq.Scan(ctx); err != nil {
			return dbErr("lock import account", err)
		}
		var rows []ImportLine
		if err := tx.db.NewSelect().Model(&rows).Where("ir.family_id = ?", familyID).Where("ir.import_id = ?", id).
			Where("ir.status = ?", LinePending).OrderExpr("ir.position").Limit(ImportBatchSize).Scan(ctx); err != nil {
			return dbErr("load import rows", err)
		}
		now := tx.now()
		if len(rows) == 0 {
			im.Status, im.CompletedAt, im.UpdatedAt = ImportComplete, &now, now
			_, err := tx.db.NewUpdate().Model(im).Column("status", "completed_at", "updated_at").
				Where("im.family_id = ?", familyID).Where("im.id = ?", id).Exec(ctx)
			done = true
			if err != nil {
				return dbErr("complete import", err)
			}
			return tx.importBalances(ctx, im)
		}
		if err := tx.findDuplicates(ctx, im, rows, run); err != nil {
			return err
		}
		news, err := tx.buildImported(ctx, im, a, rows, now)
		if err != nil {
			return err
		}
		if err := tx.writeFileImport(ctx, copyRows, im, news); err != nil {
			return err
		}
		return tx.recordStep(ctx, im, rows, now)
	})
	return im, done, err
}

// buildImported makes the new transactions of a step, each with the id of
// its import row (so that it is written at most once, whatever happens),
// and their tags; categories and tags are the family's of the same name
// (any case), and a name the family does not have is left out.
func (s *Store) buildImported(ctx context.Context, im *Import, a *Account, rows []ImportLine, now time.Time) ([]*NewTransaction, error) {
	var cats []Category
	var tagRows []Tag
	if err := s.db.NewSelect().Model(&cats).Column("id", "name").Where("c.family_id = ?", im.FamilyID).Scan(ctx); err != nil {
		return nil, dbErr("load categories", err)
	}
	if err := s.db.NewSelect().Model(&tagRows).Column("id", "name").Where("tg.family_id = ?", im.FamilyID).Scan(ctx); err != nil {
		return nil, dbErr("load tags", err)
	}
	catByName, tagByName := map[string]uuid.UUID{}, map[string]uuid.UUID{}
	for _, c := range cats {
		catByName[strings.ToLower(c.Name)] = c.ID
	}
	for _, t := range tagRows {
		tagByName[strings.ToLower(t.Name)] = t.ID
	}
	source := SourceFileImport
	var news []*NewTransaction
	for i := range rows {
		r := &rows[i]
		if r.Status != LineImported {
			continue
		}
		t := &Transaction{ID: r.ID, FamilyID: im.FamilyID, AccountID: a.ID, Date: *r.Date, Amount: *r.Amount, Currency: a.Currency,
			Name: r.Name, Source: &source, CreatedAt: now, UpdatedAt: now}
		takeFingerprint(t)
		if r.Notes != "" {
			t.Notes = &r.Notes
		}
		if r.ExternalID != "" {
			t.ExternalID = &r.ExternalID
		}
		if id, ok := catByName[strings.ToLower(strings.TrimSpace(r.Category))]; ok && r.Category != "" {
			t.CategoryID = &id
		}
		n := &NewTransaction{Row: t}
		for _, name := range strings.Split(r.Tags, "|") {
			if id, ok := tagByName[strings.ToLower(strings.TrimSpace(name))]; ok && !slices.Contains(n.TagIDs, id) {
				n.TagIDs = append(n.TagIDs, id)
			}
		}
		news = append(news, n)
	}
	return news, nil
}

// writeFileImport hands a step's new transactions to the pipeline's rules
// and write steps, those of every other door: the family's rules file them
// (rule_id recorded, a person's category from the file kept), then they
// and their tags are written (COPY on PostgreSQL, multi-row inserts on
// SQLite), marked as the import's, and the other side of each transfer a
// rule made is written, the import's too, and the occurrences of recurring
// transactions the rows pay are recorded. All of it in the step's
// transaction: a step that fails leaves nothing, and its re-run files each
// row once.
func (s *Store) writeFileImport(ctx context.Context, copyRows copyFunc, im *Import, news []*NewTransaction) error {
	if err := s.applyRules(ctx, im.FamilyID, newRefCache(im.FamilyID), news); err != nil {
		return err
	}
	if err := s.insertRows(ctx, copyRows, im.FamilyID, news, &im.ID); err != nil {
		return err
	}
	bills, err := s.loadBills(ctx, im.FamilyID)
	if err != nil {
		return err
	}
	if err := s.payOccurrences(ctx, im.FamilyID, bills.matchNew(news, func(*NewTransaction) bool { return true })); err != nil {
		return err
	}
	for _, n := range news {
		if n.transfer != nil {
			if _, err := s.ruleTransfer(ctx, im.FamilyID, n.transfer, &im.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordStep writes each row's outcome and the import's counts.
func (s *Store) recordStep(ctx context.Context, im *Import, rows []ImportLine, now time.Time) error {
	var imported []uuid.UUID
	var dups []ImportLine
	for _, r := range rows {
		if r.Status == LineImported {
			imported = append(imported, r.ID)
		} else {
			dups = append(dups, r)
		}
	}
	for start := 0; start < len(imported); start += 1000 {
		_, err := s.db.NewUpdate().Model((*ImportLine)(nil)).Set("status = ?", LineImported).Set("transaction_id = id").
			Where("family_id = ?", im.FamilyID).Where("import_id = ?", im.ID).
			Where("id IN (?)", bun.List(imported[start:min(start+1000, len(imported))])).Exec(ctx)
		if err != nil {
			return dbErr("mark imported rows", err)
		}
	}
	rowID, matchID := "v.column1", "v.column2"
	if s.Postgres() {
		rowID, matchID = "v.column1::uuid", "v.column2::uuid"
	}
	for start := 0; start < len(dups); start += 500 {
		batch := dups[start:min(start+500, len(dups))]
		var values strings.Builder
		args := make([]any, 0, 2*len(batch)+2)
		for i, r := range batch {
			if i > 0 {
				values.WriteString(", ")
			}
			values.WriteString("(?, ?)")
			args = append(args, r.ID.String(), r.TransactionID.String())
		}
		args = append(args, im.FamilyID, im.ID)
		// ir.id = v.column1 pairs each row with its match in one statement
		// on both dialects (VALUES names its columns column1, column2).
		_, err := s.db.NewRaw("UPDATE import_rows SET status = '"+LineDuplicate+"', transaction_id = "+matchID+
			" FROM (VALUES "+values.String()+") AS v WHERE import_rows.id = "+rowID+
			" AND import_rows.family_id = ? AND import_rows.import_id = ?", args...).Exec(ctx)
		if err != nil {
			return dbErr("mark duplicate rows", err)
		}
	}
	im.ProcessedRowsCount += len(rows)
	im.ImportedRowsCount += len(imported)
	im.DuplicateRowsCount += len(dups)
	im.UpdatedAt = now
	_, err := s.db.NewUpdate().Model(im).Column("processed_rows_count", "imported_rows_count", "duplicate_rows_count", "updated_at").
		Where("im.family_id = ?", im.FamilyID).Where("im.id = ?", im.ID).Exec(ctx)
	return dbErr("record import progress", err)
}

// importBalances reports the balance change of an import's account and of
// the other accounts its rules' transfers reached (see ImportAccounts).
func (s *Store) importBalances(ctx context.Context, im *Import) error {
	others, err := s.ImportAccounts(ctx, im.FamilyID, im.ID)
	if err != nil {
		return err
	}
	s.balanceChange(ctx, im.FamilyID, append([]uuid.UUID{im.AccountID}, others...)...)
	return nil
}

// ImportAccounts lists the accounts other than the import's own that hold
// transactions it wrote: those of the other sides of the transfers its
// rules made, whose balances its publication and its revert change too.
func (s *Store) ImportAccounts(ctx context.Context, familyID, id uuid.UUID) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := s.db.NewSelect().Model((*Transaction)(nil)).ColumnExpr("DISTINCT account_id").Where("family_id = ?", familyID).
		Where("import_id = ?", id).Where("account_id <> (SELECT account_id FROM imports WHERE family_id = ? AND id = ?)", familyID, id).
		Scan(ctx, &ids)
	return ids, dbErr("list import accounts", err)
}

// RevertImport removes every transaction the import wrote and returns it
// to pending, its rows to be decided again, in one transaction. An import
// that is not reverting is left as it is, so a repeated run does nothing.
func (s *Store) RevertImport(ctx context.Context, familyID, id uuid.UUID) (*Import, error) {
	im := new(Import)
	err := s.RunInTx(ctx, func(tx *Store) error {
		q := tx.db.NewSelect().Model(im).ExcludeColumn("raw_file").Where("im.family_id = ?", familyID).Where("im.id = ?", id)
		if tx.Postgres() {
			q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return dbErr("lock import", err)
		}
		if im.Status != ImportReverting {
			return nil
		}
		// A row reconciled since the revert was asked for: the revert
		// stops, removing nothing, and says why.
		if err := tx.checkImportUnreconciled(ctx, familyID, id); err != nil {
			var inv *InvalidError
			if !errors.As(err, &inv) {
				return err
			}
			im.Status, im.Error, im.UpdatedAt = ImportRevertFailed, Ptr(strings.Join(inv.Problems, " ")), tx.now()
			_, err := tx.db.NewUpdate().Model(im).Column("status", "error", "updated_at").
				Where("im.family_id = ?", familyID).Where("im.id = ?", id).Exec(ctx)
			return dbErr("stop revert", err)
		}
		if err := tx.importBalances(ctx, im); err != nil { // read before the rows go
			return err
		}
		if _, err := tx.db.NewDelete().Model((*Transaction)(nil)).Where("family_id = ?", familyID).Where("import_id = ?", id).Exec(ctx); err != nil {
			return dbErr("delete imported transactions", err)
		}
		if _, err := tx.db.NewUpdate().Model((*ImportLine)(nil)).Set("status = ?", LinePending).Set("transaction_id = NULL").
			Where("family_id = ?", familyID).Where("import_id = ?", id).Where("status <> ?", LineInvalid).Exec(ctx); err != nil {
			return dbErr("reset import rows", err)
		}
		im.Status, im.ProcessedRowsCount, im.ImportedRowsCount, im.DuplicateRowsCount = ImportPending, 0, 0, 0
		im.PublishedAt, im.CompletedAt, im.Error, im.UpdatedAt = nil, nil, nil, tx.now()
		_, err := tx.db.NewUpdate().Model(im).Column("status", "processed_rows_count", "imported_rows_count", "duplicate_rows_count",
			"published_at", "completed_at", "error", "updated_at").Where("im.family_id = ?", familyID).Where("im.id = ?", id).Exec(ctx)
		return dbErr("revert import", err)
	})
	return im, err
}

// checkImportUnreconciled refuses (an *InvalidError) a revert of an
// import some of whose rows a finished reconciliation holds.
func (s *Store) checkImportUnreconciled(ctx context.Context, familyID, id uuid.UUID) error {
	n, err := s.db.NewSelect().Model((*Transaction)(nil)).Where("family_id = ?", familyID).Where("import_id = ?", id).
		Where("reconciliation_id IS NOT NULL").Count(ctx)
	if err != nil {
		return dbErr("count reconciled import rows", err)
	}
	if n > 0 {
		return Invalid(fmt.Sprintf("%d of this import's transactions are reconciled; unlock them first to revert it", n))
	}
	return nil
}

// NormalizedName is how duplicate detection compares names: case and
// spacing ignored, nothing else.
func NormalizedName(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}
