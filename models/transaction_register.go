package models

import (
	"context"

	"github.com/google/uuid"

	"coffer/models/money"
)

// RegisterRow is one line of an account's register: a transaction and the
// account's balance just after it.
type RegisterRow struct {
	Transaction `bun:",extend"`
	Balance     money.Amount `bun:"balance_after,scanonly"`
}

// registerPageSQL gives the live transactions of one page of account ?1's
// register (family ?0; LIMIT ?3 OFFSET ?4 in newest-first order, ?2 being
// their sum) the account's balance just after each. Only what
// RecalculateBalance counts moves it: rows in the account's currency that
// are not excluded. Future rows are included, so the register shows what
// the balance will become. Rather than a running sum over the account's
// whole history, the balance after the newest row (top) is the stored
// balance plus what was counted after the day it counts up to (?5), and
// each older row's is that less what the rows above it moved: the work
// grows with the page number, not with the account's history.
const registerPageSQL = `
WITH acc AS (
    SELECT a.id, a.currency, ` + anchorSQL + ` AS anchor, ?5 AS asof, CASE WHEN ` + liabilitySQL + ` THEN 1 ELSE -1 END AS flow
    FROM accounts a WHERE a.family_id = ?0 AND a.id = ?1
),
top AS (
    SELECT acc.anchor + acc.flow * COALESCE((SELECT SUM(t.amount) FROM transactions t
        WHERE t.family_id = ?0 AND t.account_id = ?1 AND t.currency = acc.currency AND t.date > acc.asof
          AND t.deleted_at IS NULL AND NOT t.excluded), 0) AS balance
    FROM acc
),
newest AS (
    SELECT t.id, t.date, t.created_at, CASE WHEN t.currency = acc.currency AND NOT t.excluded THEN t.amount ELSE 0 END AS moved
    FROM transactions t JOIN acc ON acc.id = t.account_id
    WHERE t.family_id = ?0 AND t.account_id = ?1 AND t.deleted_at IS NULL
    ORDER BY t.date DESC, t.created_at DESC, t.id DESC
    LIMIT ?2
)
SELECT n.id, CAST((SELECT balance FROM top) - acc.flow * COALESCE(SUM(n.moved)
           OVER (ORDER BY n.date DESC, n.created_at DESC, n.id DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS bigint) AS balance_after
FROM newest n CROSS JOIN acc
ORDER BY n.date DESC, n.created_at DESC, n.id DESC
LIMIT ?3 OFFSET ?4`

// AccountRegister lists a page of one account's transactions, newest
// first, each with the balance after it, and the account's number of
// transactions, all computed by the database. Like the balance sheet, the
// balances rest on the account's stored balance, so a write shows in them
// once its balance job has run (within seconds).
func (s *Store) AccountRegister(ctx context.Context, familyID, accountID uuid.UUID, p Page) ([]RegisterRow, int, error) {
	if _, err := s.Account(ctx, familyID, accountID); err != nil {
		return nil, 0, err
	}
	n64, err := s.db.NewSelect().Model((*Transaction)(nil)).
		Where("t.family_id = ?", familyID).
		Where("t.account_id = ?", accountID).
		Where("t.deleted_at IS NULL").
		Count(ctx)
	if err != nil {
		return nil, 0, dbErr("count register", err)
	}
	n := int(n64)
	rows := []RegisterRow{}
	offset := (p.Number - 1) * p.Size
	if n <= offset {
		return rows, n, nil
	}
	err = s.transactionSelect(&rows, familyID).
		With("running", s.db.NewRaw(registerPageSQL, familyID, accountID, offset+p.Size, p.Size, offset, s.asofOf())).
		ColumnExpr("t.*").ColumnExpr("running.balance_after").
		Join("JOIN running ON running.id = t.id").
		OrderExpr("t.date DESC, t.created_at DESC, t.id DESC").
		Scan(ctx)
	if err != nil {
		return nil, 0, dbErr("list register", err)
	}
	txs := make([]*Transaction, len(rows))
	for i := range rows {
		txs[i] = &rows[i].Transaction
	}
	return rows, n, s.loadTransactionLinks(ctx, familyID, txs)
}
