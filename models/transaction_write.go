package models

import "context"

// importColumns are written by an import; an update keeps the rest
// (category, merchant, tags, locks) as they are.
var importColumns = []string{"id", "family_id", "account_id", "date", "amount", "currency", "name", "notes", "external_id",
	"source", "pending", "provider_connection_id", "content_key", "provider_meta", "excluded", "excluded_reason",
	"created_at", "updated_at"}

// stageSQL is the COPY target of an import on PostgreSQL: plain text
// columns, cast once by the set-based upsert below.
const stageSQL = `CREATE TEMP TABLE import_stage (
    id text, family_id text, account_id text, date text, amount bigint, currency text, name text, notes text,
    external_id text, source text, pending boolean, provider_connection_id text, content_key text, provider_meta text,
    excluded boolean, excluded_reason text, created_at timestamptz, updated_at timestamptz) ON COMMIT DROP`

// upsertStageSQL writes every staged row in one statement: new ids are
// inserted, known ids take the provider-owned values the importer
// computed (locked fields already kept).
const upsertStageSQL = `
INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name, notes, external_id, source, pending,
                          provider_connection_id, content_key, provider_meta, excluded, excluded_reason, created_at, updated_at)
SELECT id::uuid, family_id::uuid, account_id::uuid, date::date, amount, currency, name, notes, external_id, source, pending,
       provider_connection_id::uuid, content_key, provider_meta::jsonb, excluded, excluded_reason, created_at, updated_at
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
				t.Excluded, t.ExcludedReason, t.CreatedAt, t.UpdatedAt}
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
