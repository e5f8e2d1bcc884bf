package models

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/money"
)

// BalanceSheet is what the family owns and owes now, from the accounts'
// derived balances (the same figure the account API shows).
type BalanceSheet struct {
	Currency    string // the family's; totals count only accounts in it
	Assets      money.Amount
	Liabilities money.Amount // positive: what is owed
	Groups      []AccountGroup
	// Converted are the accounts in another currency, each counted at
	// its rate of today (or of the latest day before with one).
	Converted []Conversion
	// Unconverted counts accounts in another currency without any rate to
	// the family's: they are listed in their group but left out of every
	// total, never counted 1:1.
	Unconverted int
}

// Conversion is an account's balance counted in the family's currency.
type Conversion struct {
	AccountID uuid.UUID
	Name      string       // the account's
	Currency  string       // the account's
	Balance   money.Amount // in it
	Rate      RateQuote    // one unit of Currency in the family's
	Value     money.Amount // Balance × Rate, rounded once
}

// NetWorth is assets less liabilities.
func (b *BalanceSheet) NetWorth() money.Amount { return b.Assets - b.Liabilities }

// AccountGroup is the accounts of one type, assets before liabilities,
// types in the order of AccountTypes (untyped accounts last among assets).
type AccountGroup struct {
	Classification string       // asset or liability
	AccountType    string       // "" for untyped accounts
	Total          money.Amount // in the family's currency, of the accounts that count (see Converted)
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
	today := civil.DateOf(s.now())
	groups := map[string]*AccountGroup{}
	for _, r := range rows {
		a := r.Account
		g := groups[a.AccountType]
		if g == nil {
			g = &AccountGroup{Classification: a.Classification(), AccountType: a.AccountType}
			groups[a.AccountType] = g
		}
		g.Accounts = append(g.Accounts, a)
		value := a.Balance
		if !strings.EqualFold(a.Currency, bs.Currency) {
			// A balance converts at the rate of the day it is shown for.
			q, ok, err := s.Quote(ctx, familyID, strings.ToUpper(a.Currency), bs.Currency, today)
			if err != nil {
				return nil, err
			}
			if ok {
				value, err = money.Convert(a.Balance, q.Rate)
			}
			if !ok || err != nil { // no rate at all, or a figure past an Amount: left out, and said so
				bs.Unconverted++
				continue
			}
			bs.Converted = append(bs.Converted, Conversion{AccountID: a.ID, Name: a.Name, Currency: a.Currency, Balance: a.Balance, Rate: q, Value: value})
		}
		g.Total += value
		if Liability(a.AccountType) {
			bs.Liabilities += value
		} else {
			bs.Assets += value
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
	Date  civil.Date
	Value money.Amount
	// LeftOut counts the accounts in another currency that a net worth
	// point does not count: without a rate on or before its day, they
	// are never added 1:1.
	LeftOut int
}

// seriesSQL computes, for the accounts in acc (family ?0; accounts is the
// same filter on the rows, t.account_id, which lets one account's series
// read its own index), a value before
// period ?1..?2 and at the end of each bucket (?3) in it, from each
// account's stored balance (anchor, as of day asof: the balance the
// account shows, rewritten after every write) rather than from its whole
// history, so only the transactions from the period on are read:
//
//	value(D) = anchors + rebase + what moved from ?1 to D
//
// where a row between asof and the period moved the anchor already
// (rebase adds it) and a row from the period up to asof is in the anchor
// but not yet at the period's start (rebase takes it out). Each acc row
// has flow, what one stored unit of amount does to the value (an expense
// lowers an asset and raises a debt). ?5 is the day before ?1. The same
// rows are counted as RecalculateBalance counts them. A valuation moves
// the value on its day by its adjustment, as a transaction of
// vsign·adjustment would (vsign: what one stored unit does to the
// account's own balance), ?7 being its bucket. The rows are summed by day
// and account first (days): that reads the report index in its own order
// with nothing but a sum, and leaves the per-row arithmetic a few
// thousand day sums instead of every row (on SQLite, the bulk of the time).
//
// The days are read from the kept daily sums (seriesDaysSumsSQL), not
// from the rows.
func seriesSQL(accounts string) string {
	return seriesOver(fmt.Sprintf(seriesDaysSumsSQL, accounts))
}

// seriesRowsDaysSQL is the days of seriesSQL summed from the rows, as
// they were before the kept sums: what the tests compare them with.
const seriesRowsDaysSQL = `
    SELECT t.date, t.account_id, t.currency, SUM(t.amount) AS amount
    FROM transactions t
    WHERE t.family_id = ?0 AND t.deleted_at IS NULL AND NOT t.excluded
      AND %s
      AND t.date > (SELECT MIN(d) FROM (SELECT asof AS d FROM acc UNION ALL SELECT ?5) lo)
      AND t.date <= (SELECT MAX(d) FROM (SELECT asof AS d FROM acc UNION ALL SELECT ?2) hi)
    GROUP BY t.date, t.account_id, t.currency`

// seriesOver is seriesSQL over the given days.
func seriesOver(days string) string {
	return `,
days AS (` + days + `
),
sums AS (
    SELECT CASE WHEN t.date >= ?1 AND t.date <= ?2 THEN ?3 END AS bucket,
           SUM(CASE WHEN t.date >= ?1 AND t.date <= ?2 THEN acc.flow * t.amount ELSE 0 END) AS moved,
           SUM(CASE WHEN t.date > acc.asof AND t.date < ?1 THEN acc.flow * t.amount
                    WHEN t.date <= acc.asof AND t.date >= ?1 THEN -acc.flow * t.amount
                    ELSE 0 END) AS rebase
    FROM days t
    JOIN acc ON acc.id = t.account_id AND acc.currency = t.currency
    GROUP BY 1
    UNION ALL
    SELECT CASE WHEN v.date >= ?1 AND v.date <= ?2 THEN ?7 END,
           SUM(CASE WHEN v.date >= ?1 AND v.date <= ?2 THEN acc.flow * acc.vsign * v.adjustment ELSE 0 END),
           SUM(CASE WHEN v.date > acc.asof AND v.date < ?1 THEN acc.flow * acc.vsign * v.adjustment
                    WHEN v.date <= acc.asof AND v.date >= ?1 THEN -acc.flow * acc.vsign * v.adjustment
                    ELSE 0 END)
    FROM valuations v
    JOIN acc ON acc.id = v.account_id
    WHERE v.family_id = ?0 AND v.adjustment <> 0
      AND v.date > (SELECT MIN(d) FROM (SELECT asof AS d FROM acc UNION ALL SELECT ?5) lo)
      AND v.date <= (SELECT MAX(d) FROM (SELECT asof AS d FROM acc UNION ALL SELECT ?2) hi)
    GROUP BY 1
    UNION ALL
    SELECT NULL, 0, 0
)
SELECT bucket, (SELECT count(*) FROM acc) AS accounts,
       CAST((SELECT COALESCE(SUM(anchor), 0) FROM acc) + SUM(SUM(rebase)) OVER ()
            + SUM(SUM(moved)) OVER (ORDER BY CASE WHEN bucket IS NULL THEN 0 ELSE 1 END, bucket) AS bigint) AS value
FROM sums
GROUP BY bucket
ORDER BY CASE WHEN bucket IS NULL THEN 0 ELSE 1 END, bucket`
}

// anchorSQL is an account's stored balance, and asofSQL (?4) the day it
// counts up to: the opening balance before anything was counted.
const anchorSQL = `CASE WHEN a.balance_updated_at IS NULL THEN a.opening_balance ELSE a.balance END`

// netWorthSQL: every active account in the family's currency; a debt
// counts against the family, and every stored amount lowers net worth
// (spending from an asset, or borrowing more on a debt).
var netWorthSQL = `WITH acc AS (
    SELECT a.id, a.currency, CASE WHEN ` + liabilitySQL + ` THEN -(` + anchorSQL + `) ELSE ` + anchorSQL + ` END AS anchor,
           ?4 AS asof, -1 AS flow, CASE WHEN ` + liabilitySQL + ` THEN 1 ELSE -1 END AS vsign
    FROM accounts a JOIN families f ON f.id = a.family_id
    WHERE a.family_id = ?0 AND a.status = 'active' AND a.currency = f.currency
)` + seriesSQL("t.account_id IN (SELECT id FROM acc)")

// accountSeriesSQL: one account (?6), in its own currency and sign, as its
// balance is shown: what is owed, for a debt.
var accountSeriesSQL = `WITH acc AS (
    SELECT a.id, a.currency, ` + anchorSQL + ` AS anchor, ?4 AS asof,
           CASE WHEN ` + liabilitySQL + ` THEN 1 ELSE -1 END AS flow, CASE WHEN ` + liabilitySQL + ` THEN 1 ELSE -1 END AS vsign
    FROM accounts a
    WHERE a.family_id = ?0 AND a.id = ?6
)` + seriesSQL("t.account_id = ?6")

// asofOf is the SQL for the day (UTC, as RecalculateBalance dates it) an
// account's stored balance counts up to; before anything, for an account
// never counted.
func (s *Store) asofOf() bun.Safe {
	if s.Postgres() {
		return bun.Safe("COALESCE(CAST(timezone('UTC', a.balance_updated_at) AS date), DATE '1899-12-31')")
	}
	return bun.Safe("COALESCE(date(a.balance_updated_at), '1899-12-31')")
}

// NetWorthSeries returns the family's net worth at the end of each day,
// week or month of a period (the last point at its end), accounts in
// other currencies at the rate of each point's day (see addForeignWorth). Like the
// balance sheet it rests on the accounts' stored balances, so a write
// shows once its balance job has run (within seconds).
func (s *Store) NetWorthSeries(ctx context.Context, familyID uuid.UUID, p Period, i Interval) ([]SeriesPoint, error) {
	points, _, err := s.series(ctx, netWorthSQL, familyID, uuid.Nil, p, i)
	if err != nil {
		return nil, err
	}
	return points, s.addForeignWorth(ctx, familyID, p, i, points)
}

// addForeignWorth adds to each point of a net worth series the family's
// active accounts in other currencies, each account's balance of the
// point's day converted at that day's rate (or the latest day's before
// it); a point without a rate leaves the account out and counts it in
// LeftOut. One series query per account and one rate series per
// currency, never a query per day.
func (s *Store) addForeignWorth(ctx context.Context, familyID uuid.UUID, p Period, i Interval, points []SeriesPoint) error {
	var accounts []struct {
		ID             uuid.UUID `bun:"id"`
		Currency       string    `bun:"currency"`
		AccountType    string    `bun:"account_type"`
		FamilyCurrency string    `bun:"family_currency"`
	}
	err := s.db.NewSelect().Model((*Account)(nil)).
		ColumnExpr("a.id, a.currency, a.account_type, f.currency AS family_currency").
		Join("JOIN families AS f ON f.id = a.family_id").
		Where("a.family_id = ?", familyID).Where("a.status = 'active'").Where("a.currency <> f.currency").
		OrderExpr("a.id").Scan(ctx, &accounts)
	if err != nil {
		return dbErr("net worth series", err)
	}
	rates := map[string]*RateSeries{}
	for _, a := range accounts {
		cur := strings.ToUpper(a.Currency)
		rs := rates[cur]
		if rs == nil {
			if rs, err = s.RateSeries(ctx, familyID, cur, strings.ToUpper(a.FamilyCurrency), p.From, p.To); err != nil {
				return err
			}
			rates[cur] = rs
		}
		balances, _, err := s.series(ctx, accountSeriesSQL, familyID, a.ID, p, i)
		if err != nil {
			return err
		}
		for j := range points {
			q, ok := rs.At(balances[j].Date)
			var v money.Amount
			if ok {
				v, err = money.Convert(balances[j].Value, q.Rate)
			}
			if !ok || err != nil {
				points[j].LeftOut++
				continue
			}
			if Liability(a.AccountType) {
				v = -v // what is owed counts against the family
			}
			points[j].Value += v
		}
	}
	return nil
}

// AccountBalanceSeries returns one account's balance at the end of each
// day, week or month of a period, as its balance is shown.
func (s *Store) AccountBalanceSeries(ctx context.Context, familyID, accountID uuid.UUID, p Period, i Interval) ([]SeriesPoint, error) {
	points, accounts, err := s.series(ctx, accountSeriesSQL, familyID, accountID, p, i)
	if err == nil && accounts == 0 {
		return nil, ErrNotFound
	}
	return points, err
}

func (s *Store) series(ctx context.Context, query string, familyID, accountID uuid.UUID, p Period, i Interval) ([]SeriesPoint, int, error) {
	if err := p.check(); err != nil {
		return nil, 0, err
	}
	if !ValidInterval(i) {
		return nil, 0, Invalid("Interval must be day, week or month")
	}
	if err := s.maybeCompactSums(ctx, familyID); err != nil {
		return nil, 0, err
	}
	var rows []struct {
		Bucket   *civil.Date  `bun:"bucket"`
		Accounts int          `bun:"accounts"`
		Value    money.Amount `bun:"value"`
	}
	dayBefore := civil.DateOf(p.From.Time().AddDate(0, 0, -1))
	err := s.db.NewRaw(query, familyID, p.From, p.To, s.bucketOf(i, "t.date"), s.asofOf(), dayBefore, accountID, s.bucketOf(i, "v.date")).Scan(ctx, &rows)
	if err != nil {
		return nil, 0, dbErr("series", err)
	}
	// The first row is the value before the period; each later one the
	// value at the end of a bucket with moves. Buckets without moves keep
	// the value before them.
	value, next, points := rows[0].Value, 1, []SeriesPoint{}
	end := p.To.Time()
	for b := i.start(p.From.Time()); !b.After(end); b = i.next(b) {
		if next < len(rows) && *rows[next].Bucket == civil.DateOf(b) {
			value = rows[next].Value
			next++
		}
		day := i.next(b).AddDate(0, 0, -1)
		if day.After(end) {
			day = end
		}
		points = append(points, SeriesPoint{Date: civil.DateOf(day), Value: value})
	}
	return points, rows[0].Accounts, nil
}
