package models

import (
	"context"
	"time"

	"github.com/google/uuid"

	"coffer/models/civil"
	"coffer/models/money"
)

// BalanceFilter narrows BalanceHistory. Zero values do not filter.
type BalanceFilter struct {
	AccountID *uuid.UUID
	Currency  string     // an account currency, upper case
	StartDate civil.Date // inclusive
	EndDate   civil.Date // inclusive; never after today
}

// BalanceDay is an account's balance at the end of a day on which it
// moved, and what moved it. Days without a counted transaction or a
// valuation have no row: the balance is the one of the row before. A
// valuation's adjustment moves the day's balance without being an inflow
// or an outflow.
type BalanceDay struct {
	AccountID   uuid.UUID  `bun:"account_id"`
	AccountName string     `bun:"account_name"`
	AccountType string     `bun:"account_type"`
	Date        civil.Date `bun:"date"`
	Currency    string     `bun:"currency"`
	// FlowsFactor is 1 for an asset (money in raises the balance) and -1
	// for a liability (money in pays the debt down).
	FlowsFactor  int          `bun:"flows_factor"`
	StartBalance money.Amount `bun:"start_balance"`
	Inflows      money.Amount `bun:"inflows"`  // money into the account, positive
	Outflows     money.Amount `bun:"outflows"` // money out of it, positive
	EndBalance   money.Amount `bun:"end_balance"`
	// CreatedAt and UpdatedAt are those of the day's first and latest
	// written transaction: when the day's balance came to be, and last
	// changed.
	CreatedAt time.Time `bun:"created_at"`
	UpdatedAt time.Time `bun:"updated_at"`
}

// CashBalance is the part of the day's balance that is cash.
func (d BalanceDay) CashBalance() money.Amount { return cashPart(d.AccountType, d.EndBalance) }

// balanceAccountsSQL: the accounts of family ?0 a balance history shows,
// all or ?1 alone, in currency ?2 when it is not empty, each with its
// stored balance (anchor), the day that counts up to (?7) and flow (what
// one stored unit does to the balance). balanceAccountsCTE is the same
// without its WITH, for a query that needs WITH RECURSIVE.
const balanceAccountsSQL = `
WITH` + balanceAccountsCTE

const balanceAccountsCTE = ` acc AS (
    SELECT a.id, a.name, a.account_type, a.currency, ` + anchorSQL + ` AS anchor, ?7 AS asof,
           CASE WHEN ` + liabilitySQL + ` THEN 1 ELSE -1 END AS flow
    FROM accounts a
    WHERE a.family_id = ?0 AND a.status <> 'pending_deletion'
      AND (?1 IS NULL OR a.id = ?1) AND (?2 = '' OR a.currency = ?2)
)`

// balanceHistorySQL reads one page (LIMIT ?6 OFFSET ?5) of the accounts'
// days from ?3 to ?4, newest first. Each account's balance at the end of
// ?4 (edge) is its stored balance moved by what was counted between the
// day that counts up to and ?4; a day's end balance is that less what
// the newer days of the page moved. So the work grows with the page
// number, not with the history. Rows are counted as RecalculateBalance
// counts them: in the account's currency, not excluded, not deleted.
const balanceHistorySQL = balanceAccountsSQL + `,
edge AS (
    SELECT acc.id, acc.anchor + acc.flow * COALESCE(SUM(CASE WHEN t.date > acc.asof THEN t.amount ELSE -t.amount END), 0)
           + COALESCE((SELECT SUM(CASE WHEN v.date > acc.asof THEN v.adjustment ELSE -v.adjustment END)
                       FROM valuations v WHERE v.family_id = ?0 AND v.account_id = acc.id
                         AND v.date > CASE WHEN acc.asof < ?4 THEN acc.asof ELSE ?4 END
                         AND v.date <= CASE WHEN acc.asof < ?4 THEN ?4 ELSE acc.asof END), 0) AS balance
    FROM acc
    LEFT JOIN transactions t ON t.family_id = ?0 AND t.account_id = acc.id AND t.currency = acc.currency
        AND t.deleted_at IS NULL AND NOT t.excluded
        AND t.date > CASE WHEN acc.asof < ?4 THEN acc.asof ELSE ?4 END
        AND t.date <= CASE WHEN acc.asof < ?4 THEN ?4 ELSE acc.asof END
    GROUP BY acc.id, acc.anchor, acc.flow, acc.asof
),
bound AS (
    SELECT CASE WHEN b.t > b.v THEN b.t ELSE b.v END AS low FROM (SELECT
        COALESCE((SELECT DISTINCT t.date FROM transactions t
                  WHERE t.family_id = ?0 AND t.date >= ?3 AND t.date <= ?4 AND t.deleted_at IS NULL AND NOT t.excluded
                    AND EXISTS (SELECT 1 FROM acc WHERE acc.id = t.account_id AND acc.currency = t.currency)
                  ORDER BY t.date DESC LIMIT 1 OFFSET ?8 - 1), ?3) AS t,
        COALESCE((SELECT DISTINCT v.date FROM valuations v
                  WHERE v.family_id = ?0 AND v.date >= ?3 AND v.date <= ?4
                    AND EXISTS (SELECT 1 FROM acc WHERE acc.id = v.account_id)
                  ORDER BY v.date DESC LIMIT 1 OFFSET ?8 - 1), ?3) AS v) b
),
days AS (
    SELECT m.account_id, m.date, acc.name,
           SUM(m.inflows) AS inflows, SUM(m.outflows) AS outflows,
           SUM(m.amount) AS amount, MIN(m.created_at) AS created_at, MAX(m.updated_at) AS updated_at
    FROM (` + balanceMovesSQL + `) m
    JOIN acc ON acc.id = m.account_id
    GROUP BY m.date, m.account_id, acc.name
    ORDER BY m.date DESC, lower(acc.name), m.account_id
    LIMIT ?8
),
running AS (
    SELECT d.*, e.balance - acc.flow * COALESCE(SUM(d.amount) OVER (PARTITION BY d.account_id ORDER BY d.date DESC
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS end_balance
    FROM days d JOIN acc ON acc.id = d.account_id JOIN edge e ON e.id = d.account_id
)
SELECT r.account_id, acc.name AS account_name, COALESCE(acc.account_type, '') AS account_type, r.date,
       acc.currency, -acc.flow AS flows_factor,
       CAST(r.end_balance - acc.flow * r.amount AS bigint) AS start_balance,
       CAST(r.inflows AS bigint) AS inflows, CAST(r.outflows AS bigint) AS outflows,
       CAST(r.end_balance AS bigint) AS end_balance, r.created_at, r.updated_at
FROM running r JOIN acc ON acc.id = r.account_id
ORDER BY r.date DESC, lower(acc.name), r.account_id
LIMIT ?6 OFFSET ?5`

// balanceMovesSQL is what moved the accounts' balances from the page's
// lowest day (bound) to ?4: their counted transactions, and their
// valuations, each a move of its adjustment (as a transaction of
// flow·adjustment) and neither inflow nor outflow. A day with a valuation
// has a row even when it moved nothing.
//
// A page of ?8 rows newest first lies on or after the ?8th newest day with
// a counted transaction, and on or after the ?8th newest day with a
// valuation (each such day holds at least one row of the page's order), so
// bound is the later of the two, or ?3 where there are fewer days: the
// page reads the moves of those days alone, and its cost follows the page
// number, not the history.
const balanceMovesSQL = `
        SELECT t.account_id, t.date, CASE WHEN t.amount < 0 THEN -t.amount ELSE 0 END AS inflows,
               CASE WHEN t.amount > 0 THEN t.amount ELSE 0 END AS outflows, t.amount, t.created_at, t.updated_at
        FROM transactions t
        JOIN acc ON acc.id = t.account_id AND acc.currency = t.currency
        WHERE t.family_id = ?0 AND t.date >= (SELECT low FROM bound) AND t.date <= ?4
          AND t.deleted_at IS NULL AND NOT t.excluded
        UNION ALL
        SELECT v.account_id, v.date, 0, 0, acc.flow * v.adjustment, v.created_at, v.updated_at
        FROM valuations v
        JOIN acc ON acc.id = v.account_id
        WHERE v.family_id = ?0 AND v.date >= (SELECT low FROM bound) AND v.date <= ?4`

// balanceHistoryCountSQL counts the rows of balanceHistorySQL, the
// accounts' days from ?3 to ?4 on which a counted transaction or a
// valuation moved them. The days of transactions are found by a skip scan
// (the recursive days): from each account's first day in the range, one
// probe of transactions_account_balance_idx for the next day, so the work
// follows the number of account-days (a few thousand over years), not the
// number of rows, which a DISTINCT over the family's rows read every one
// of (100,000 rows, 6,576 account-days, EXPLAIN ANALYZE on PostgreSQL:
// 125-155 ms before, 55-66 ms; SQLite 26 -> 13-16 ms of processor time).
// The days of valuations, few, are read as they are.
const balanceHistoryCountSQL = `
WITH RECURSIVE` + balanceAccountsCTE + `,
days (account_id, currency, date) AS (
    SELECT acc.id, acc.currency, (SELECT min(t.date) FROM transactions t
                                  WHERE t.account_id = acc.id AND t.date >= ?3 AND t.date <= ?4 AND t.family_id = ?0
                                    AND t.currency = acc.currency AND t.deleted_at IS NULL AND NOT t.excluded)
    FROM acc
    UNION ALL
    SELECT d.account_id, d.currency, (SELECT min(t.date) FROM transactions t
                                      WHERE t.account_id = d.account_id AND t.date > d.date AND t.date <= ?4 AND t.family_id = ?0
                                        AND t.currency = d.currency AND t.deleted_at IS NULL AND NOT t.excluded)
    FROM days d
    WHERE d.date IS NOT NULL
)
SELECT (SELECT count(date) FROM days)
     + (SELECT count(*) FROM (
            SELECT DISTINCT v.account_id, v.date FROM valuations v
            JOIN acc ON acc.id = v.account_id
            WHERE v.family_id = ?0 AND v.date >= ?3 AND v.date <= ?4
              AND NOT EXISTS (SELECT 1 FROM transactions t
                              WHERE t.account_id = v.account_id AND t.date = v.date AND t.family_id = ?0
                                AND t.currency = acc.currency AND t.deleted_at IS NULL AND NOT t.excluded)
        ) d)`

// BalanceHistory lists a page of the family's daily account balances,
// newest day first, and how many there are: one row per account and day
// on which the account moved, up to today. Like the balance sheet, the
// balances rest on the accounts' stored balances, so a write shows in
// them once its balance job has run (within seconds).
func (s *Store) BalanceHistory(ctx context.Context, familyID uuid.UUID, f BalanceFilter, p Page) ([]BalanceDay, int, error) {
	start, end := civil.OpenRange(f.StartDate, f.EndDate)
	if today := civil.DateOf(s.now()); end > today {
		end = today
	}
	args := []any{familyID, f.AccountID, f.Currency, start, end}
	count := func(ctx context.Context) (int64, error) {
		var n int64
		err := s.db.NewRaw(balanceHistoryCountSQL, append(args, 0, 0, s.asofOf())...).Scan(ctx, &n)
		return n, err
	}
	days := []BalanceDay{}
	n, err := p.read(ctx, count, func(limit, offset int64) error {
		return s.db.NewRaw(balanceHistorySQL, append(args, offset, limit, s.asofOf(), offset+limit)...).Scan(ctx, &days)
	})
	return days, n, dbErr("balance history", err)
}
