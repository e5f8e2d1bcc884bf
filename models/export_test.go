package models

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/money"
)

// This file lends the external tests (package models_test) what they
// check of the package's inside.

// TransactionColumns is every column transactionColumns names, and for
// each write the columns it sets, by the write's name.
func TransactionColumns() (all []string, writes map[string][]string) {
	for _, c := range transactionColumns {
		all = append(all, c.name)
	}
	return all, map[string][]string{"new": newWrite.names, "file": fileWrite.names, "sync": syncWrite.names,
		"sync update": syncUpdateWrite.names}
}

// TransactionColumnText is the value of column name in t as text, for
// comparing what a write stored with what it was given.
func TransactionColumnText(t *Transaction, name string) string {
	for _, c := range transactionColumns {
		if c.name == name && c.arg != nil {
			v := reflect.ValueOf(c.arg(t))
			for v.Kind() == reflect.Pointer {
				if v.IsNil() {
					return "<nil>"
				}
				v = v.Elem()
			}
			if tm, ok := v.Interface().(time.Time); ok {
				return tm.UTC().Format(time.RFC3339Nano)
			}
			return fmt.Sprint(v.Interface())
		}
	}
	return "<not written>"
}

// InsertRows is insertRows in a bulk transaction of its own (by COPY on
// PostgreSQL): the write step of a file import, or of a large batch when
// importID is nil.
func (s *Store) InsertRows(ctx context.Context, familyID uuid.UUID, rows []*NewTransaction, importID *uuid.UUID) error {
	return s.bulkTx(ctx, func(tx *Store, copyRows copyFunc) error {
		return tx.insertRows(ctx, copyRows, familyID, rows, importID)
	})
}

// WriteImported is writeImported in a bulk transaction of its own: the
// write step of a SimpleFIN import, its staging table and upsert on
// PostgreSQL.
func (s *Store) WriteImported(ctx context.Context, ts []Transaction) error {
	return s.bulkTx(ctx, func(tx *Store, copyRows copyFunc) error {
		return tx.writeImported(ctx, copyRows, ts)
	})
}

// IncomeStatementSQL runs the income statement's SQL alone, without the
// rows in other currencies: the baseline BenchmarkFlowsFX measures
// beside the whole.
func (s *Store) IncomeStatementSQL(ctx context.Context, familyID uuid.UUID, p Period) error {
	var cells []StatementCell
	return s.db.NewRaw(incomeStatementSQL, familyID, p.From, p.To, s.bucketOf(Month, "d.date")).Scan(ctx, &cells)
}

// ForeignFlows reads and converts a period's rows in other currencies,
// and returns how many groups it converted.
func (s *Store) ForeignFlows(ctx context.Context, familyID uuid.UUID, p Period) (int, error) {
	fam, err := s.Family(ctx, familyID)
	if err != nil {
		return 0, err
	}
	flows, err := s.convertedFlows(ctx, familyID, fam.Currency, p, true)
	return len(flows), err
}

// IncomeStatementInGo is IncomeStatement as it was before the rows in
// other currencies were converted in SQL: the family's currency in SQL,
// every other row read back and converted in Go. The tests compare the
// two.
func (s *Store) IncomeStatementInGo(ctx context.Context, familyID uuid.UUID, p Period, byMonth bool) ([]StatementCell, error) {
	cells := []StatementCell{}
	if byMonth {
		if err := s.db.NewRaw(incomeStatementSQL, familyID, p.From, p.To, s.bucketOf(Month, "d.date")).Scan(ctx, &cells); err != nil {
			return nil, err
		}
	} else {
		var rows []CategoryTotal
		if err := s.db.NewRaw(categoryTotalsSQL, familyID, p.From, p.To).Scan(ctx, &rows); err != nil {
			return nil, err
		}
		for _, r := range rows {
			cells = append(cells, StatementCell{CategoryTotal: r})
		}
	}
	flows, _, err := s.foreignFlows(ctx, familyID, p, nil)
	if err != nil {
		return nil, err
	}
	return s.addFlows(ctx, familyID, cells, flows, byMonth)
}

// IncomeStatementNew is the statement both IncomeStatement (byMonth) and
// CategoryTotals read.
func (s *Store) IncomeStatementNew(ctx context.Context, familyID uuid.UUID, p Period, byMonth bool) ([]StatementCell, error) {
	return s.statement(ctx, familyID, p, byMonth)
}

// ConvertInSQL converts each amount at its rate as the reports do in SQL
// (fxValueSQL) and returns the answers, nil where SQL leaves the row to
// Go (|a| × num does not fit 64 bits, or the rate is no such fraction).
func (s *Store) ConvertInSQL(ctx context.Context, amounts []money.Amount, rates []money.Rate) ([]sql.NullInt64, error) {
	var q strings.Builder
	var args []any
	for i, a := range amounts {
		num, den, ok := rates[i].Ratio()
		lim := int64(-1)
		if ok {
			lim = math.MaxInt64 / num
		} else {
			num, den = 0, 1
		}
		if i == 0 {
			q.WriteString("VALUES (CAST(? AS bigint), CAST(? AS text), CAST(? AS bigint), CAST(? AS bigint), CAST(? AS bigint), CAST(? AS bigint))")
		} else {
			q.WriteString(", (?, ?, ?, ?, ?, ?)")
		}
		args = append(args, i, "EUR", int64(a), num, den, lim)
	}
	query := `WITH v(i, currency, amount, num, den, lim) AS (?10)
SELECT CAST(` + fxValueSQL + ` AS bigint) FROM v t JOIN v r ON r.i = t.i ORDER BY t.i`
	rows, err := s.db.QueryContext(ctx, query, fxArgs(bun.SafeQuery(q.String(), args...), "USD")...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sql.NullInt64
	for rows.Next() {
		var v sql.NullInt64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ArrivalCandidates is the condition that picks the rows an arrival may
// be matched against, as the arrival check and the matcher write it.
const ArrivalCandidates = arrivalCandidates

// ArrivalAmount is the expression of a row's amount at arrival, as the
// arrival check and the matcher write it in s's dialect.
func (s *Store) ArrivalAmount() string { return s.arrivalAmount() }
