package models

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/sqliteshim"
)

// OpenPostgres opens a pool on a PostgreSQL URL through pgx.
func OpenPostgres(ctx context.Context, dsn string, maxConns int, connectTimeout time.Duration) (*bun.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("models: parse DATABASE_URL: %w", err)
	}
	// Without a bound a connection to a server that has gone silent waits
	// for ever, and so does the request behind it; connect_timeout in the
	// URL wins.
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = connectTimeout
	}
	// bun renders arguments into the query text, so every query is new to
	// the server: preparing them would only add a round trip.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	sqldb := stdlib.OpenDB(*cfg)
	sqldb.SetMaxOpenConns(maxConns)
	sqldb.SetMaxIdleConns(maxConns)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	db := bun.NewDB(sqldb, pgdialect.New())
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("models: connect to PostgreSQL: %w", err)
	}
	return db, nil
}

// OpenSQLite opens (creating it if needed) the embedded database file. WAL
// mode and a busy timeout let a second coffer process (the CLI beside a
// running `coffer dev`) write to the same file; immediate transactions take
// the write lock up front so that two writers wait instead of deadlocking.
func OpenSQLite(ctx context.Context, path string) (*bun.DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("models: create data directory: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// 16 MiB of pages per connection instead of SQLite's 2 MiB: a family's
	// indexes at 100,000 transactions outgrow 2 MiB, and a bulk create of
	// 1,000 then reads them back from the file (BenchmarkScale/100k: bulk
	// create 331–419 → 178–263 ms, dashboard 62–113 → 55–67 ms, on a
	// shared machine). The cache fills only as pages are read.
	q.Add("_pragma", "cache_size(-16384)")
	q.Set("_txlock", "immediate")
	sqldb, err := sql.Open(sqliteshim.ShimName, "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("models: open SQLite: %w", err)
	}
	sqldb.SetMaxOpenConns(4)
	sqldb.SetMaxIdleConns(4)
	sqldb.SetConnMaxLifetime(0)
	db := bun.NewDB(sqldb, sqlitedialect.New())
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("models: open SQLite %s: %w", path, err)
	}
	return db, nil
}
