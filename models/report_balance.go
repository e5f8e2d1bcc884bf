package models

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// BalanceSheet is what the family owns and owes now, from the accounts'
// derived balances (the same figure the account API shows).
type BalanceSheet struct {
	Currency    string // the family's; totals count only accounts in it
	Assets      Amount
	Liabilities Amount // positive: what is owed
	Groups      []AccountGroup
	// Unconverted counts accounts in another currency: they are listed in
	// their group but left out of every total, as there are no exchange rates.
	Unconverted int
}

// NetWorth is assets less liabilities.
func (b *BalanceSheet) NetWorth() Amount { return b.Assets - b.Liabilities }

// AccountGroup is the accounts of one type, assets before liabilities,
// types in the order of AccountTypes (untyped accounts last among assets).
type AccountGroup struct {
	Classification string // asset or liability
	AccountType    string // "" for untyped accounts
	Total          Amount // of the accounts in the family's currency
	Accounts       []Account
}

// BalanceSheet returns the family's active accounts (and disabled ones
// when includeDisabled) grouped by classification and type, by name in
// each group, with the totals. Accounts pending deletion never count.
func (s *Store) BalanceSheet(ctx context.Context, familyID uuid.UUID, includeDisabled bool) (*BalanceSheet, error) {
	statuses := []string{AccountActive}
	if includeDisabled {
		statuses = append(statuses, AccountDisabled)
	}
	var rows []struct {
		Account
		FamilyCurrency string `bun:"family_currency,scanonly"`
	}
	err := s.db.NewSelect().Model(&rows).ModelTableExpr("accounts AS a").
		ColumnExpr("a.*").ColumnExpr("f.currency AS family_currency").
		Join("JOIN families AS f ON f.id = a.family_id").
		Where("a.family_id = ?", familyID).
		Where("a.status IN (?)", bun.List(statuses)).
		OrderExpr("lower(a.name), a.id").
		Scan(ctx)
	if err != nil {
		return nil, dbErr("balance sheet", err)
	}
	bs := &BalanceSheet{}
	if len(rows) == 0 {
		f, err := s.Family(ctx, familyID)
		if err != nil {
			return nil, err
		}
		bs.Currency = f.Currency
		return bs, nil
	}
	bs.Currency = rows[0].FamilyCurrency
	groups := map[string]*AccountGroup{}
	for _, r := range rows {
		a := r.Account
		g := groups[a.AccountType]
		if g == nil {
			g = &AccountGroup{Classification: a.Classification(), AccountType: a.AccountType}
			groups[a.AccountType] = g
		}
		g.Accounts = append(g.Accounts, a)
		if !strings.EqualFold(a.Currency, bs.Currency) {
			bs.Unconverted++
			continue
		}
		g.Total += a.Balance
		if Liability(a.AccountType) {
			bs.Liabilities += a.Balance
		} else {
			bs.Assets += a.Balance
		}
	}
	for _, t := range append(slices.Clone(AccountTypes), "") {
		if g := groups[t]; g != nil {
			bs.Groups = append(bs.Groups, *g)
		}
	}
	slices.SortStableFunc(bs.Groups, func(x, y AccountGroup) int {
		return strings.Compare(x.Classification, y.Classification) // asset < liability
	})
	return bs, nil
}

// SeriesPoint is a value at the end of a day.
type SeriesPoint struct {
	Date  Date
	Value Amount
}

// seriesSQL sums the moves of the accounts in acc (family ?0; only
// account ?4 when it is not NULL) up to ?2: everything before ?1 in one
// row with no bucket, the rest by bucket (?3, of m.date), with a running
// total that starts from the accounts' opening balances. One pass over the
// transactions, whatever the range. Each acc row has base (its opening
// value) and flow (what one stored unit of amount does to the value: an
// expense lowers an asset, raises a debt).
//
// The scan only adds: moves sums each account's rows per currency and day
// (the days before ?1 fold into one day, NULL), and the join with acc and
// the bucket are worked out once per such day instead of once per row.
// A NULL day has a NULL bucket, as the bucket of NULL is NULL.
const seriesSQL = `,
moves AS (
    SELECT t.account_id, t.currency, CASE WHEN t.date < ?1 THEN NULL ELSE t.date END AS date, SUM(t.amount) AS amount
    FROM transactions t
    WHERE t.family_id = ?0 AND (?4 IS NULL OR t.account_id = ?4)
      AND t.date <= ?2 AND t.deleted_at IS NULL AND NOT t.excluded
    GROUP BY t.account_id, t.currency, CASE WHEN t.date < ?1 THEN NULL ELSE t.date END
),
sums AS (
    SELECT ?3 AS bucket, SUM(acc.flow * m.amount) AS amount
    FROM moves m
    JOIN acc ON acc.id = m.account_id AND acc.currency = m.currency
    GROUP BY 1
    UNION ALL
    SELECT NULL, 0
)
SELECT bucket, (SELECT count(*) FROM acc) AS accounts,
       CAST((SELECT COALESCE(SUM(base), 0) FROM acc) + SUM(SUM(amount)) OVER (ORDER BY CASE WHEN bucket IS NULL THEN 0 ELSE 1 END, bucket) AS bigint) AS value
FROM sums
GROUP BY bucket
ORDER BY CASE WHEN bucket IS NULL THEN 0 ELSE 1 END, bucket`

// netWorthSQL: every active account in the family's currency; a debt's
// opening balance counts against the family, and every stored amount
// lowers net worth (spending from an asset, or borrowing more on a debt).
const netWorthSQL = `WITH acc AS (
    SELECT a.id, a.currency, CASE WHEN ` + liabilitySQL + ` THEN -a.opening_balance ELSE a.opening_balance END AS base, -1 AS flow
    FROM accounts a JOIN families f ON f.id = a.family_id
    WHERE a.family_id = ?0 AND a.status = 'active' AND a.currency = f.currency
)` + seriesSQL

// accountSeriesSQL: one account (?4), in its own currency and sign, as its
// balance is shown: what is owed, for a debt.
const accountSeriesSQL = `WITH acc AS (
    SELECT a.id, a.currency, a.opening_balance AS base, CASE WHEN ` + liabilitySQL + ` THEN 1 ELSE -1 END AS flow
    FROM accounts a
    WHERE a.family_id = ?0 AND a.id = ?4
)` + seriesSQL

// NetWorthSeries returns the family's net worth at the end of each day,
// week or month of a period (the last point at its end), from the
// opening balances and every transaction up to then.
func (s *Store) NetWorthSeries(ctx context.Context, familyID uuid.UUID, p Period, i Interval) ([]SeriesPoint, error) {
	points, _, err := s.series(ctx, netWorthSQL, familyID, nil, p, i)
	return points, err
}

// AccountBalanceSeries returns one account's balance at the end of each
// day, week or month of a period, as its balance is shown.
func (s *Store) AccountBalanceSeries(ctx context.Context, familyID, accountID uuid.UUID, p Period, i Interval) ([]SeriesPoint, error) {
	points, accounts, err := s.series(ctx, accountSeriesSQL, familyID, &accountID, p, i)
	if err == nil && accounts == 0 {
		return nil, ErrNotFound
	}
	return points, err
}

func (s *Store) series(ctx context.Context, query string, familyID uuid.UUID, accountID *uuid.UUID, p Period, i Interval) ([]SeriesPoint, int, error) {
	if err := p.check(); err != nil {
		return nil, 0, err
	}
	if !ValidInterval(i) {
		return nil, 0, Invalid("Interval must be day, week or month")
	}
	var rows []struct {
		Bucket   *Date  `bun:"bucket"`
		Accounts int    `bun:"accounts"`
		Value    Amount `bun:"value"`
	}
	err := s.db.NewRaw(query, familyID, p.From, p.To, s.bucketOf(i, "m.date"), accountID).Scan(ctx, &rows)
	if err != nil {
		return nil, 0, dbErr("series", err)
	}
	// The first row is the value before the period; each later one the
	// value at the end of a bucket with moves. Buckets without moves keep
	// the value before them.
	value, next, points := rows[0].Value, 1, []SeriesPoint{}
	end := p.To.Time()
	for b := i.start(p.From.Time()); !b.After(end); b = i.next(b) {
		if next < len(rows) && *rows[next].Bucket == DateOf(b) {
			value = rows[next].Value
			next++
		}
		day := i.next(b).AddDate(0, 0, -1)
		if day.After(end) {
			day = end
		}
		points = append(points, SeriesPoint{Date: DateOf(day), Value: value})
	}
	return points, rows[0].Accounts, nil
}
