package models

import (
	"strconv"
	"strings"
	"time"

	"coffer/models/civil"
)

// txColumn is one column of transactions as the writes name it: which
// writes set it, and its value in a row, twice: as bun writes the field
// (arg: the statements formatted by bun, on both databases) and as pgx
// takes it (pg: COPY and the prepared statements of PostgreSQL, ids as
// pgtype.UUID, which pgx encodes without a detour through text).
type txColumn struct {
	name   string
	writes writeSet
	arg    func(t *Transaction) any
	pg     func(t *Transaction) any
}

// writeSet is the writes that set a column.
type writeSet uint8

const (
	writeNew        writeSet = 1 << iota // the pipeline's new row (every door; see IngestTransactions)
	writeFile                            // a file import's new row: the pipeline's, and the import that wrote it
	writeSync                            // a SimpleFIN import's row, new or changed (see writeImported)
	writeSyncUpdate                      // a SimpleFIN import's changed row: what the provider owns
	writeNone       writeSet = 0         // no bulk write: set by edits, deletes and the model's own inserts
)

// transactionColumns is every column of transactions, in one list: each
// insert, COPY, staging table and upsert of a new or imported row below is
// built from it, once. A new column is one line here (and its migration);
// TestTransactionColumns fails until the line is there.
var transactionColumns = []txColumn{
	{"id", writeNew | writeFile | writeSync, func(t *Transaction) any { return t.ID }, func(t *Transaction) any { return pgUUID(&t.ID) }},
	{"family_id", writeNew | writeFile | writeSync, func(t *Transaction) any { return t.FamilyID }, func(t *Transaction) any { return pgUUID(&t.FamilyID) }},
	{"account_id", writeNew | writeFile | writeSync, func(t *Transaction) any { return t.AccountID }, func(t *Transaction) any { return pgUUID(&t.AccountID) }},
	{"date", writeNew | writeFile | writeSync | writeSyncUpdate, func(t *Transaction) any { return t.Date }, func(t *Transaction) any { return pgDate(t.Date) }},
	{"amount", writeNew | writeFile | writeSync | writeSyncUpdate, func(t *Transaction) any { return t.Amount }, func(t *Transaction) any { return int64(t.Amount) }},
	{"currency", writeNew | writeFile | writeSync, func(t *Transaction) any { return t.Currency }, func(t *Transaction) any { return t.Currency }},
	{"name", writeNew | writeFile | writeSync | writeSyncUpdate, func(t *Transaction) any { return t.Name }, func(t *Transaction) any { return t.Name }},
	{"notes", writeNew | writeFile | writeSync | writeSyncUpdate, func(t *Transaction) any { return t.Notes }, func(t *Transaction) any { return t.Notes }},
	{"external_id", writeNew | writeFile | writeSync | writeSyncUpdate, func(t *Transaction) any { return t.ExternalID }, func(t *Transaction) any { return t.ExternalID }},
	{"source", writeNew | writeFile | writeSync, func(t *Transaction) any { return t.Source }, func(t *Transaction) any { return t.Source }},
	{"pending", writeNew | writeFile | writeSync | writeSyncUpdate, func(t *Transaction) any { return t.Pending }, func(t *Transaction) any { return t.Pending }},
	{"category_id", writeNew | writeFile | writeSync, func(t *Transaction) any { return t.CategoryID }, func(t *Transaction) any { return pgUUID(t.CategoryID) }},
	{"merchant_id", writeNew | writeFile | writeSync, func(t *Transaction) any { return t.MerchantID }, func(t *Transaction) any { return pgUUID(t.MerchantID) }},
	{"excluded", writeNew | writeFile | writeSync | writeSyncUpdate, func(t *Transaction) any { return t.Excluded }, func(t *Transaction) any { return t.Excluded }},
	{"excluded_reason", writeNew | writeFile | writeSync | writeSyncUpdate, func(t *Transaction) any { return t.ExcludedReason }, func(t *Transaction) any { return t.ExcludedReason }},
	{"rule_id", writeNew | writeFile | writeSync, func(t *Transaction) any { return t.RuleID }, func(t *Transaction) any { return pgUUID(t.RuleID) }},
	{"provider_connection_id", writeSync | writeSyncUpdate, func(t *Transaction) any { return t.ProviderConnectionID }, func(t *Transaction) any { return pgUUID(t.ProviderConnectionID) }},
	{"content_key", writeSync | writeSyncUpdate, func(t *Transaction) any { return t.ContentKey }, func(t *Transaction) any { return t.ContentKey }},
	{"provider_meta", writeSync | writeSyncUpdate, func(t *Transaction) any { return t.ProviderMeta }, func(t *Transaction) any { return t.ProviderMeta }},
	{"fingerprint", writeNew | writeFile | writeSync, func(t *Transaction) any { return fingerprintOf(t) }, func(t *Transaction) any { return fingerprintOf(t) }},
	{"import_id", writeFile, func(t *Transaction) any { return t.ImportID }, func(t *Transaction) any { return pgUUID(t.ImportID) }},
	{"locked_fields", writeNone, nil, nil},
	{"deleted_at", writeNone, nil, nil},
	{"split_parent_id", writeNone, nil, nil},
	{"split_needs_review", writeNone, nil, nil},
	{"cleared", writeNone, nil, nil},           // a person's tick (see SetCleared)
	{"reconciliation_id", writeNone, nil, nil}, // set by FinishReconciliation
	{"created_at", writeNew | writeFile | writeSync, func(t *Transaction) any { return t.CreatedAt }, func(t *Transaction) any { return t.CreatedAt }},
	{"updated_at", writeNew | writeFile | writeSync | writeSyncUpdate, func(t *Transaction) any { return t.UpdatedAt }, func(t *Transaction) any { return t.UpdatedAt }},
}

// txWrite is the columns one write sets, in transactionColumns order,
// with their value functions.
type txWrite struct {
	names []string
	arg   []func(*Transaction) any
	pg    []func(*Transaction) any
}

func columnsOf(set writeSet) txWrite {
	var w txWrite
	for _, c := range transactionColumns {
		if c.writes&set != 0 {
			w.names = append(w.names, c.name)
			w.arg = append(w.arg, c.arg)
			w.pg = append(w.pg, c.pg)
		}
	}
	return w
}

// index is the position of column name in w, from 0; -1 when w lacks it.
func (w txWrite) index(name string) int {
	for i, n := range w.names {
		if n == name {
			return i
		}
	}
	return -1
}

// args appends t's values, as bun formats them, to dst.
func (w txWrite) args(dst []any, t *Transaction) []any {
	for _, f := range w.arg {
		dst = append(dst, f(t))
	}
	return dst
}

// pgValues appends t's values, as pgx takes them, to dst.
func (w txWrite) pgValues(dst []any, t *Transaction) []any {
	for _, f := range w.pg {
		dst = append(dst, f(t))
	}
	return dst
}

// The writes, each computed once with its statements.
var (
	newWrite        = columnsOf(writeNew)
	fileWrite       = columnsOf(writeFile)
	syncWrite       = columnsOf(writeSync)
	syncUpdateWrite = columnsOf(writeSyncUpdate)

	// ingestColumns are what the pipeline writes of a new row.
	ingestColumns = newWrite.names
	// fileColumns are what a file import writes of a new row.
	fileColumns = fileWrite.names
	// importColumns are written by a SimpleFIN import; an update keeps
	// the rest (category, merchant, tags, locks) as they are. The category
	// and the merchant (and the rule that set them) are the rules' on a
	// new row (see importRules), never updated.
	importColumns = syncWrite.names

	insertTransactionSQL = buildInsertTransactionSQL()
	createOneSQL         = buildCreateOneSQL()
	stageSQL             = buildStageSQL()
	upsertStageSQL       = buildUpsertStageSQL()
)

// buildInsertTransactionSQL is insertTransactionSQL (see writeNew) from
// ingestColumns: bun placeholders for the row, then the account's id and
// family.
func buildInsertTransactionSQL() string {
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(newWrite.names)), ", ")
	return `
INSERT INTO transactions (` + strings.Join(newWrite.names, ", ") + `)
SELECT ` + marks + `
FROM accounts WHERE id = ? AND family_id = ? AND status = 'active'
ON CONFLICT (account_id, source, external_id) WHERE external_id IS NOT NULL DO NOTHING`
}

// buildCreateOneSQL is createOneSQL (see createOne) from ingestColumns:
// $n is the n-th column, its value given once, and the checks name the
// account, family, category and merchant by their columns' numbers. The
// four parameters after the columns are the fingerprint span and the
// amount of the arrival check (NULL: not asked) and whether the bills
// were matched already. The checks are an uncorrelated CTE, run once;
// the last SELECT gives one row whether or not the insert did, so that
// the caller learns what held it.
func buildCreateOneSQL() string {
	n := len(newWrite.names)
	marks := make([]string, n)
	for i := range marks {
		marks[i] = "$" + strconv.Itoa(i+1)
	}
	p := func(name string) string { return "$" + strconv.Itoa(newWrite.index(name)+1) }
	from, to := "$"+strconv.Itoa(n+1), "$"+strconv.Itoa(n+2)
	amount, billsMatched := "$"+strconv.Itoa(n+3), "$"+strconv.Itoa(n+4)
	return `
WITH held AS (
  SELECT ` + from + `::text IS NOT NULL AND (EXISTS (
           SELECT 1 FROM transactions WHERE family_id = ` + p("family_id") + ` AND account_id = ` + p("account_id") + `
             AND ` + pgArrivalAmount + ` = ` + amount + `::text
             AND fingerprint >= ` + from + ` AND fingerprint < ` + to + ` AND ` + arrivalCandidates + `
             AND deleted_at IS NULL AND NOT pending AND split_parent_id IS NULL
             AND (source IS NULL OR source <> ` + p("source") + `))
         OR EXISTS (
           SELECT 1 FROM provider_transaction_aliases WHERE account_id = ` + p("account_id") + `
             AND source = ` + p("source") + ` AND external_id = ` + p("external_id") + `
             AND family_id = ` + p("family_id") + `)) AS arrivals,
         NOT ` + billsMatched + `::boolean AND EXISTS (
           SELECT 1 FROM recurring_transactions WHERE family_id = ` + p("family_id") + ` AND status = '` + RecurringActive + `') AS bills),
ins AS (
  INSERT INTO transactions (` + strings.Join(newWrite.names, ", ") + `)
  SELECT ` + strings.Join(marks, ", ") + `
  FROM accounts, held WHERE id = ` + p("account_id") + ` AND family_id = ` + p("family_id") + ` AND status = 'active'
    AND NOT held.arrivals AND NOT held.bills
    AND (` + p("category_id") + `::uuid IS NULL OR EXISTS (SELECT 1 FROM categories WHERE id = ` + p("category_id") + ` AND family_id = ` + p("family_id") + `))
    AND (` + p("merchant_id") + `::uuid IS NULL OR EXISTS (SELECT 1 FROM merchants WHERE id = ` + p("merchant_id") + ` AND family_id = ` + p("family_id") + `))
  ON CONFLICT (account_id, source, external_id) WHERE external_id IS NOT NULL DO NOTHING
  RETURNING account_id, category_id, merchant_id)
SELECT held.arrivals, held.bills, a.name, COALESCE(a.account_type, ''), a.subtype, a.currency, a.status,
       a.currency <> f.currency, c.name, c.color, c.icon, c.classification, c.parent_id, m.name
FROM held LEFT JOIN (ins JOIN accounts a ON a.id = ins.account_id JOIN families f ON f.id = a.family_id
  LEFT JOIN categories c ON c.id = ins.category_id
  LEFT JOIN merchants m ON m.id = ins.merchant_id) ON TRUE`
}

// buildStageSQL is stageSQL: the COPY target of a SimpleFIN import on
// PostgreSQL, importColumns with the table's own types.
func buildStageSQL() string {
	return `CREATE TEMP TABLE import_stage ON COMMIT DROP AS SELECT ` + strings.Join(syncWrite.names, ", ") +
		` FROM transactions WITH NO DATA`
}

// buildUpsertStageSQL is upsertStageSQL: every staged row in one
// statement, new ids inserted, known ids taking the provider-owned values
// (syncUpdateWrite) the importer computed (locked fields already kept).
func buildUpsertStageSQL() string {
	cols := strings.Join(syncWrite.names, ", ")
	return `
INSERT INTO transactions (` + cols + `)
SELECT ` + cols + ` FROM import_stage
ON CONFLICT (id) DO UPDATE SET ` + strings.Join(excludedSets(), ", ")
}

// excludedSets are the SET expressions of an import's update: each
// provider-owned column takes the value the import brought.
func excludedSets() []string {
	sets := make([]string, len(syncUpdateWrite.names))
	for i, c := range syncUpdateWrite.names {
		sets[i] = c + " = EXCLUDED." + c
	}
	return sets
}

// syncUpdateSets is excludedSets, computed once, for the SQLite upsert.
var syncUpdateSets = excludedSets()

// pgDate is a date as COPY and the prepared statements take it; a date
// that does not parse goes as it is, and the write fails on it.
func pgDate(d civil.Date) any {
	day, err := time.Parse(time.DateOnly, string(d))
	if err != nil {
		return string(d)
	}
	return day
}
