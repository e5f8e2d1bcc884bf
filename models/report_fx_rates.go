package models

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"coffer/models/civil"
)

// dayRate is a row of the rates table the queries that convert in SQL
// join (see report_fx_sql.go): the rate of currency into the family's
// on day as num/den in lowest terms, and lim, the largest |amount| whose
// |amount| × num fits 64 bits.
type dayRate struct {
	currency string
	day      civil.Date
	num, den int64
	lim      int64
}

// dayRateRows lists the rates from family's other currencies (those of
// its accounts) into cur for every day of p that has one, as RateSeries
// answers (the latest earlier rate on a day without one). ok is false
// when the table would pass maxDayRates rows: the rows then go to Go.
func (s *Store) dayRateRows(ctx context.Context, familyID uuid.UUID, cur string, p Period) (rows []dayRate, ok bool, err error) {
	currencies, err := s.ForeignCurrencies(ctx, familyID)
	if err != nil || len(currencies) == 0 {
		return nil, err == nil, err
	}
	start, end := p.From.Time(), p.To.Time()
	for _, c := range currencies {
		rs, err := s.RateSeries(ctx, familyID, strings.ToUpper(c), strings.ToUpper(cur), p.From, p.To)
		if err != nil {
			return nil, false, err
		}
		for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
			day := civil.DateOf(d)
			quote, ok := rs.At(day)
			if !ok {
				continue
			}
			num, den, ok := quote.Rate.Ratio()
			if !ok {
				continue // Go converts these rows
			}
			if len(rows) == maxDayRates {
				return nil, false, nil
			}
			rows = append(rows, dayRate{currency: c, day: day, num: num, den: den, lim: math.MaxInt64 / num})
		}
	}
	return rows, true, nil
}

// fxTempTableSQL is SQLite's rates table: a temporary table of the
// connection, keyed by currency and day. SQLite joins a list of VALUES by
// scanning it for every row (no hash join, no automatic index on it:
// 100,000 rows against a year of rates took 1.6 s of processor time),
// where a lookup in this key costs the scan nothing measurable (EXPLAIN
// QUERY PLAN: SEARCH temp.fx_rates USING PRIMARY KEY). Each report fills
// it afresh on the connection it holds.
const fxTempTableSQL = `CREATE TEMP TABLE IF NOT EXISTS fx_rates (
    currency TEXT NOT NULL, day TEXT NOT NULL, num INTEGER NOT NULL, den INTEGER NOT NULL, lim INTEGER NOT NULL,
    PRIMARY KEY (currency, day)) WITHOUT ROWID`

// fxTempRatesSQL reads the temporary table as the rates of a WITH.
const fxTempRatesSQL = `SELECT currency, day, num, den, lim FROM temp.fx_rates`

// withRates runs fn with the rates table of family's other currencies
// into cur over p (see dayRateRows), as the query of a WITH, and a store
// on which fn's queries can read it. On PostgreSQL the table is a list
// of VALUES and the store is s. On SQLite it is a temporary table, so fn
// gets a store bound to the one connection that holds it (s itself
// inside a transaction). The rates are read before the connection is
// taken, so a report never holds two of the pool's connections at once.
func (s *Store) withRates(ctx context.Context, familyID uuid.UUID, cur string, p Period, fn func(tx *Store, rates schema.QueryWithArgs) error) error {
	rows, ok, err := s.dayRateRows(ctx, familyID, cur, p)
	if err != nil {
		return err
	}
	if !ok || len(rows) == 0 {
		return fn(s, s.noRates())
	}
	if s.Postgres() {
		return fn(s, valuesRates(rows))
	}
	tx := s
	switch s.db.(type) {
	case bun.Tx, bun.Conn: // one connection already
	default:
		conn, err := s.raw.Conn(ctx)
		if err != nil {
			return dbErr("rates table", err)
		}
		defer conn.Close()
		tx = s.withDB(conn)
	}
	if err := tx.fillTempRates(ctx, rows); err != nil {
		return err
	}
	return fn(tx, bun.SafeQuery(fxTempRatesSQL))
}

// fillTempRates puts rows in SQLite's temporary rates table, in place of
// what a report before left there.
func (s *Store) fillTempRates(ctx context.Context, rows []dayRate) error {
	if _, err := s.db.ExecContext(ctx, fxTempTableSQL); err != nil {
		return dbErr("rates table", err)
	}
	if _, err := s.db.ExecContext(ctx, "DELETE FROM temp.fx_rates"); err != nil {
		return dbErr("rates table", err)
	}
	const batch = 500
	for start := 0; start < len(rows); start += batch {
		var q strings.Builder
		args := make([]any, 0, 5*batch)
		q.WriteString("INSERT INTO temp.fx_rates (currency, day, num, den, lim) VALUES ")
		for i, r := range rows[start:min(start+batch, len(rows))] {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?, ?)")
			args = append(args, r.currency, r.day, r.num, r.den, r.lim)
		}
		if _, err := s.db.NewRaw(q.String(), args...).Exec(ctx); err != nil {
			return dbErr("rates table", err)
		}
	}
	return nil
}

// valuesRates is PostgreSQL's rates table: a list of VALUES, which it
// hashes once per query.
func valuesRates(rows []dayRate) schema.QueryWithArgs {
	var q strings.Builder
	args := make([]any, 0, 5*len(rows))
	for i, r := range rows {
		if i == 0 { // the first row types the columns, the currency as the column's (no cast per row)
			q.WriteString("VALUES (CAST(? AS bpchar), CAST(? AS date), CAST(? AS bigint), CAST(? AS bigint), CAST(? AS bigint))")
		} else {
			q.WriteString(", (?, ?, ?, ?, ?)")
		}
		args = append(args, r.currency, r.day, r.num, r.den, r.lim)
	}
	return bun.SafeQuery(q.String(), args...)
}

// noRates is a rates table of no rows.
func (s *Store) noRates() schema.QueryWithArgs {
	if s.Postgres() {
		return bun.SafeQuery(fmt.Sprintf(rateTableNone, "bpchar", "date"))
	}
	return bun.SafeQuery(fmt.Sprintf(rateTableNone, "text", "text"))
}
