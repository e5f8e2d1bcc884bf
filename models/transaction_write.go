package models

import (
	"context"
	"slices"

	"github.com/google/uuid"
)

// stageSQL (built in transaction_columns.go) is the COPY target of an
// import on PostgreSQL, and upsertStageSQL writes every staged row in one
// statement: new ids are inserted, known ids take the provider-owned
// values the importer computed (locked fields already kept).

// writeImported writes an import's new and changed rows in bulk: COPY into
// a staging table and one upsert on PostgreSQL, multi-row upserts of at
// most 1,000 rows on SQLite. Never a round trip per row.
func (s *Store) writeImported(ctx context.Context, copyRows copyFunc, ts []Transaction) error {
	if len(ts) == 0 {
		return nil
	}
	if copyRows != nil {
		if _, err := s.db.ExecContext(ctx, stageSQL); err != nil {
			return dbErr("create import stage", err)
		}
		rows := make([][]any, len(ts))
		for i := range ts {
			rows[i] = syncWrite.pgValues(make([]any, 0, len(importColumns)), &ts[i])
		}
		if err := copyRows(ctx, "import_stage", importColumns, rows); err != nil {
			return dbErr("copy import stage", err)
		}
		_, err := s.db.ExecContext(ctx, upsertStageSQL)
		return dbErr("upsert imported rows", err)
	}
	for i := range ts {
		takeFingerprint(&ts[i]) // bun writes the field; COPY above takes fingerprintOf
	}
	for start := 0; start < len(ts); start += 1000 {
		batch := ts[start:min(start+1000, len(ts))]
		q := s.db.NewInsert().Model(&batch).Column(importColumns...).On("CONFLICT (id) DO UPDATE")
		for _, set := range syncUpdateSets {
			q.Set(set)
		}
		if _, err := q.Exec(ctx); err != nil {
			return dbErr("upsert imported rows", err)
		}
	}
	return nil
}

// importRules runs the pipeline's rules step over the rows an import
// creates (writes[i] for i in created), as every other door does; rows it
// updates keep what they have. It returns the tags the rules gave, to be
// linked once the rows are written, and the transfers they made, whose
// other sides are written then (see ruleTransfer).
func (s *Store) importRules(ctx context.Context, familyID uuid.UUID, writes []Transaction, created []int) ([]TransactionTag, []*RuleResult, error) {
	if s.Rules == nil || len(created) == 0 {
		return nil, nil, nil
	}
	rows := make([]*NewTransaction, len(created))
	for k, i := range created {
		rows[k] = &NewTransaction{Row: &writes[i]}
	}
	if err := s.applyRules(ctx, familyID, newRefCache(familyID), rows); err != nil {
		return nil, nil, err
	}
	var links []TransactionTag
	var transfers []*RuleResult
	for _, r := range rows {
		for _, tag := range r.TagIDs {
			links = append(links, TransactionTag{TransactionID: r.Row.ID, TagID: tag, FamilyID: familyID})
		}
		if r.transfer != nil {
			transfers = append(transfers, r.transfer)
		}
	}
	return links, transfers, nil
}

// insertTags links tags to rows just written, in batches of MaxBulk.
func (s *Store) insertTags(ctx context.Context, links []TransactionTag) error {
	for start := 0; start < len(links); start += MaxBulk {
		part := links[start:min(start+MaxBulk, len(links))]
		if _, err := s.db.NewInsert().Model(&part).Exec(ctx); err != nil {
			return dbErr("set transaction tags", err)
		}
	}
	return nil
}

// payImported is the pay step of a sync's account step: the new rows that
// are not becoming a transfer's side pay the occurrences of recurring
// transactions they match (see payOccurrences), in the step's transaction.
// The active recurring transactions are read once, only when there are new
// rows.
func (s *Store) payImported(ctx context.Context, familyID uuid.UUID, writes []Transaction, created []int, transfers []*RuleResult) error {
	if len(created) == 0 {
		return nil
	}
	bills, err := s.loadBills(ctx, familyID)
	if err != nil {
		return err
	}
	rows := make([]*Transaction, 0, len(created))
	for _, i := range created {
		if !slices.ContainsFunc(transfers, func(r *RuleResult) bool { return r.Row.ID == writes[i].ID }) {
			rows = append(rows, &writes[i])
		}
	}
	return s.payOccurrences(ctx, familyID, bills.match(rows))
}
