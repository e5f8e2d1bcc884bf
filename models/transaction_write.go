package models

import (
	"context"

	"github.com/google/uuid"
)

// importColumns are written by an import; an update keeps the rest
// (category, merchant, tags, locks) as they are. The category and the
// merchant (and the rule that set them) are the rules' on a new row (see
// importRules), never updated.
var importColumns = []string{"id", "family_id", "account_id", "date", "amount", "currency", "name", "notes", "external_id",
	"source", "pending", "provider_connection_id", "content_key", "provider_meta", "excluded", "excluded_reason",
	"created_at", "updated_at", "category_id", "merchant_id", "rule_id"}

// stageSQL is the COPY target of an import on PostgreSQL: plain text
// columns, cast once by the set-based upsert below.
const stageSQL = `CREATE TEMP TABLE import_stage (
    id text, family_id text, account_id text, date text, amount bigint, currency text, name text, notes text,
    external_id text, source text, pending boolean, provider_connection_id text, content_key text, provider_meta text,
    excluded boolean, excluded_reason text, created_at timestamptz, updated_at timestamptz, category_id text,
    merchant_id text, rule_id text) ON COMMIT DROP`

// upsertStageSQL writes every staged row in one statement: new ids are
// inserted, known ids take the provider-owned values the importer
// computed (locked fields already kept).
const upsertStageSQL = `
INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name, notes, external_id, source, pending,
                          provider_connection_id, content_key, provider_meta, excluded, excluded_reason, created_at, updated_at,
                          category_id, merchant_id, rule_id)
SELECT id::uuid, family_id::uuid, account_id::uuid, date::date, amount, currency, name, notes, external_id, source, pending,
       provider_connection_id::uuid, content_key, provider_meta::jsonb, excluded, excluded_reason, created_at, updated_at,
       category_id::uuid, merchant_id::uuid, rule_id::uuid
FROM import_stage
ON CONFLICT (id) DO UPDATE SET date = EXCLUDED.date, amount = EXCLUDED.amount, name = EXCLUDED.name, notes = EXCLUDED.notes,
    external_id = EXCLUDED.external_id, pending = EXCLUDED.pending, provider_connection_id = EXCLUDED.provider_connection_id,
    content_key = EXCLUDED.content_key, provider_meta = EXCLUDED.provider_meta, excluded = EXCLUDED.excluded,
    excluded_reason = EXCLUDED.excluded_reason, updated_at = EXCLUDED.updated_at`

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
			t := &ts[i]
			rows[i] = []any{t.ID.String(), t.FamilyID.String(), t.AccountID.String(), string(t.Date), int64(t.Amount), t.Currency,
				t.Name, t.Notes, t.ExternalID, t.Source, t.Pending, t.ProviderConnectionID.String(), t.ContentKey, t.ProviderMeta,
				t.Excluded, t.ExcludedReason, t.CreatedAt, t.UpdatedAt, uuidText(t.CategoryID), uuidText(t.MerchantID), uuidText(t.RuleID)}
		}
		if err := copyRows(ctx, "import_stage", importColumns, rows); err != nil {
			return dbErr("copy import stage", err)
		}
		_, err := s.db.ExecContext(ctx, upsertStageSQL)
		return dbErr("upsert imported rows", err)
	}
	for start := 0; start < len(ts); start += 1000 {
		batch := ts[start:min(start+1000, len(ts))]
		q := s.db.NewInsert().Model(&batch).Column(importColumns...).On("CONFLICT (id) DO UPDATE")
		for _, c := range importColumns[3:16] {
			if c != "currency" && c != "source" {
				q.Set(c + " = EXCLUDED." + c)
			}
		}
		if _, err := q.Set("updated_at = EXCLUDED.updated_at").Exec(ctx); err != nil {
			return dbErr("upsert imported rows", err)
		}
	}
	return nil
}

// uuidText is an optional id as COPY writes it into a text column.
func uuidText(id *uuid.UUID) *string {
	if id == nil {
		return nil
	}
	s := id.String()
	return &s
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
