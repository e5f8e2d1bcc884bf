package models

import (
	"context"

	"github.com/google/uuid"
)

// RegisterRow is one line of an account's register: a transaction and the
// account's balance just after it.
type RegisterRow struct {
	Transaction `bun:",extend"`
	Balance     Amount `bun:"balance_after,scanonly"`
}

// runningBalanceSQL gives every live transaction of account ?1 (family ?0)
// the account's balance just after it, in register order (date, then
// entry, then id). Only what RecalculateBalance counts moves it: rows in
// the account's currency that are not excluded. Future rows are included,
// so the register shows what the balance will become.
const runningBalanceSQL = `
SELECT t.id,
       CAST(acc.opening_balance + acc.flow * SUM(CASE WHEN t.currency = acc.currency AND NOT t.excluded THEN t.amount ELSE 0 END)
            OVER (ORDER BY t.date, t.created_at, t.id ROWS UNBOUNDED PRECEDING) AS bigint) AS balance_after
FROM transactions t
JOIN (SELECT a.id, a.currency, a.opening_balance, CASE WHEN ` + liabilitySQL + ` THEN 1 ELSE -1 END AS flow
      FROM accounts a WHERE a.family_id = ?0 AND a.id = ?1) acc ON acc.id = t.account_id
WHERE t.family_id = ?0 AND t.account_id = ?1 AND t.deleted_at IS NULL`

// AccountRegister lists a page of one account's transactions, newest
// first, each with the balance after it, and the account's number of
// transactions. The balance is a window over the account's history,
// computed by the database.
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
		With("running", s.db.NewRaw(runningBalanceSQL, familyID, accountID)).
		ColumnExpr("t.*").ColumnExpr("running.balance_after").
		Join("JOIN running ON running.id = t.id").
		OrderExpr("t.date DESC, t.created_at DESC, t.id DESC").
		Limit(int64(p.Size)).Offset(int64(offset)).
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
