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
	// A statement of coffer reads one family's index ranges and kept sums,
	// a few ms of work; a parallel worker is a process PostgreSQL starts
	// for the statement. On a busy server the year's report at 100,000
	// rows waited 60–90 ms in each of two Gathers for workers that did
	// 3 ms each (234 ms in all). A DATABASE_URL that sets it wins.
	if _, ok := cfg.RuntimeParams["max_parallel_workers_per_gather"]; !ok {
		cfg.RuntimeParams["max_parallel_workers_per_gather"] = "0"
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

// WarmPool opens up to n connections of db and leaves them idle in its
// pool. Left to itself the pool opens one per request waiting when a burst
// comes, each a new PostgreSQL backend started while those requests wait,
// under load past DB_CONNECT_TIMEOUT: make load's first second gave four
// creates a 503. A connection the
// pool cannot open is left for later: the process serves without it.
func WarmPool(ctx context.Context, db *bun.DB, n int) int {
	// Never more than the pool holds: the call past it would wait for
	// one of ours.
	if limit := db.DB.Stats().MaxOpenConnections; limit > 0 {
		n = min(n, limit)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conns := make([]*sql.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		// Each held connection makes the next call open another.
		c, err := db.DB.Conn(ctx)
		if err != nil {
			break
		}
		conns = append(conns, c)
	}
	return len(conns)
}

// SQLiteConns is the size of the embedded database's pool.
const SQLiteConns = 4

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
	sqldb.SetMaxOpenConns(SQLiteConns)
	sqldb.SetMaxIdleConns(SQLiteConns)
	sqldb.SetConnMaxLifetime(0)
	db := bun.NewDB(sqldb, sqlitedialect.New())
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("models: open SQLite %s: %w", path, err)
	}
	return db, nil
}
