package models

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
)

// copyFunc writes rows into a table with COPY, inside the transaction of
// bulkTx; it is nil on SQLite, which has no COPY.
type copyFunc func(ctx context.Context, table string, columns []string, rows [][]any) error

// bulkTx runs fn in one transaction. On PostgreSQL the transaction runs on
// a dedicated connection, so that COPY, which bun cannot send, goes through
// pgx on that same connection and inside the same transaction.
func (s *Store) bulkTx(ctx context.Context, fn func(tx *Store, copyRows copyFunc) error) error {
	if !s.Postgres() {
		return s.RunInTx(ctx, func(tx *Store) error { return fn(tx, nil) })
	}
	conn, err := s.raw.Conn(ctx)
	if err != nil {
		return dbErr("bulk connection", err)
	}
	defer conn.Close()
	copyRows := func(ctx context.Context, table string, columns []string, rows [][]any) error {
		return conn.Raw(func(dc any) error {
			c, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("models: COPY needs the pgx driver, not %T", dc)
			}
			_, err := c.Conn().CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows))
			return err
		})
	}
	return s.announcing(ctx, func(after *afterCommit) error {
		return conn.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			in := s.withDB(tx)
			in.after = after
			return fn(in, copyRows)
		})
	})
}
