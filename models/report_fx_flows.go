package models

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"coffer/models/civil"
	"coffer/models/money"
)

// fxFlowsSQL sums family ?0's counted rows in currencies other than its
// own (?11) from ?1 to ?2 by ?3 (the month of t.date, or one day for the
// whole period), category and direction, each row converted in SQL at
// its day's rate (the rates ?10: report_fx_sql.go); slow counts the rows
// left to Go. The rows in other currencies are read as the two ranges
// of currency codes either side of the family's, so that an index
// leading with (family_id, currency, date) reads them alone: the income
// statement adds them to the family's own sums, which it reads apart.
const fxFlowsSQL = `WITH ` + fxRatesSQL + `,
foreign_rows AS (` + fxForeignRowsSQL + `)
SELECT ?3 AS date, t.category_id, t.amount < 0 AS income,
       CAST(COALESCE(SUM(` + fxValueSQL + `), 0) AS bigint) AS amount,
       COUNT(CASE WHEN ` + fxFastSQL + ` THEN 1 END) AS n,
       COUNT(CASE WHEN ` + fxFastSQL + ` THEN NULL ELSE 1 END) AS slow
FROM foreign_rows t` + fxJoinSQL + `
WHERE t.account_id IN (SELECT a.id FROM accounts a WHERE a.family_id = ?0 AND a.status = 'active')` + notTransferSQL + `
GROUP BY 1, t.category_id, t.amount < 0`

// fxForeignRowsSQL is family ?0's live rows that are not excluded, in
// currencies other than ?11, from ?1 to ?2: the two ranges of currency
// codes either side of the family's, each a range of
// transactions_currency_idx.
const fxForeignRowsSQL = `
    SELECT t.id, t.account_id, t.currency, t.date, t.category_id, t.amount FROM transactions t
    WHERE t.family_id = ?0 AND t.currency < ?11 AND t.date >= ?1 AND t.date <= ?2 AND t.deleted_at IS NULL AND NOT t.excluded
    UNION ALL
    SELECT t.id, t.account_id, t.currency, t.date, t.category_id, t.amount FROM transactions t
    WHERE t.family_id = ?0 AND t.currency > ?11 AND t.date >= ?1 AND t.date <= ?2 AND t.deleted_at IS NULL AND NOT t.excluded`

// fxFlowRow is a result row of fxFlowsSQL.
type fxFlowRow struct {
	Date       civil.Date    `bun:"date"`
	CategoryID uuid.NullUUID `bun:"category_id"`
	Income     bool          `bun:"income"`
	Amount     int64         `bun:"amount"`
	N          int           `bun:"n"`
	Slow       int           `bun:"slow"`
}

// convertedFlows returns the counted rows of a period in currencies
// other than the family's (cur), converted at their days' rates and
// summed by month when byMonth (else all on p.From), category and
// direction: in SQL, and in Go for the rows SQL cannot convert exactly,
// which Go converts or leaves out (no rate on or before their day), as
// before. addFlows adds them to the family's own cells.
func (s *Store) convertedFlows(ctx context.Context, familyID uuid.UUID, cur string, p Period, byMonth bool) ([]flowRow, error) {
	var month any = bun.SafeQuery("?", p.From)
	if byMonth {
		month = s.bucketOf(Month, "t.date")
	}
	var flows []flowRow
	err := s.withRates(ctx, familyID, cur, p, func(tx *Store, rates schema.QueryWithArgs) error {
		var rows []fxFlowRow
		if err := tx.db.NewRaw(fxFlowsSQL, fxArgs(rates, cur, familyID, p.From, p.To, month)...).Scan(ctx, &rows); err != nil {
			return dbErr("foreign flows", err)
		}
		slow := false
		for _, r := range rows {
			slow = slow || r.Slow > 0
			if r.N == 0 {
				continue
			}
			f := flowRow{Date: r.Date, Income: r.Income, Amount: money.Amount(r.Amount), N: r.N}
			if r.CategoryID.Valid {
				id := r.CategoryID.UUID
				f.CategoryID = &id
			}
			flows = append(flows, f)
		}
		if !slow {
			return nil
		}
		groups, err := scanFlows(tx.db.QueryContext(ctx, slowRowsSQL, fxArgs(rates, cur, familyID, p.From, p.To, tx.amountsOf())...))
		if err != nil {
			return err
		}
		more, _, err := tx.convertFlows(ctx, familyID, groups)
		flows = append(flows, more...)
		return err
	})
	return flows, err
}
