package models

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/google/uuid"
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
	flows, _, err := s.foreignFlows(ctx, familyID, p, nil)
	return len(flows), err
}
