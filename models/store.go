// Package models owns the database: bun structs, the one Store with a file
// per table, and the sentinel errors callers branch on. Every query on
// family data is scoped by family id. It imports nothing of ours.
package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"modernc.org/sqlite"

	"coffer/models/secret"
)

// Store runs every query of the service. Its zero value is not usable; build
// it with NewStore.
type Store struct {
	db  bun.IDB
	raw *bun.DB
	// Now is the clock; tests replace it.
	Now func() time.Time
	// Secrets seals the secrets stored at rest (access URLs, setup tokens).
	Secrets *secret.Sealer
	// Rules is the rules step of the ingestion pipeline (see
	// IngestTransactions): FamilyRules unless replaced; nil applies none.
	Rules RulesStep

	ruleSets       *ruleSetCache                                 // compiled rules by family, see FamilyRules
	authChanged    func(context.Context)                         // see OnAuthChange
	balanceChanged func(context.Context, uuid.UUID, []uuid.UUID) // see OnBalanceChange
	after          *afterCommit                                  // inside a transaction: the changes to report after the commit
}

// NewStore wraps an open database.
func NewStore(db *bun.DB) *Store {
	return &Store{db: db, raw: db, Now: func() time.Time { return time.Now().UTC() }, Rules: FamilyRules,
		ruleSets: &ruleSetCache{sets: map[uuid.UUID]cachedRuleSet{}}}
}

// DB returns the underlying handle, for migrations and health checks.
func (s *Store) DB() *bun.DB { return s.raw }

// Postgres reports whether the store runs on PostgreSQL (else SQLite).
func (s *Store) Postgres() bool { return s.raw.Dialect().Name().String() == "pg" }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	return unavailable("ping", s.raw.PingContext(ctx))
}

// RunInTx runs fn with a Store bound to one database transaction, committed
// when fn returns nil and rolled back otherwise. A failed begin or commit
// comes back from the driver unwrapped, so it is mapped here too.
func (s *Store) RunInTx(ctx context.Context, fn func(tx *Store) error) error {
	return s.announcing(ctx, func(after *afterCommit) error {
		return unavailable("transaction", s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			in := s.withDB(tx)
			in.after = after
			return fn(in)
		}))
	})
}

// queryHot reads rows into dest with a query written with $n
// placeholders, through database/sql: bun's own QueryContext would format
// the query and drop the arguments. On PostgreSQL it is a prepared
// statement, planned once per connection.
func (s *Store) queryHot(ctx context.Context, dest any, query string, args ...any) error {
	if s.Postgres() {
		args = append([]any{pgx.QueryExecModeCacheStatement}, args...)
	}
	run := s.raw.DB.QueryContext
	switch db := s.db.(type) {
	case bun.Tx:
		run = db.Tx.QueryContext
	case bun.Conn: // a report holding SQLite's rates table (withRates): no second connection
		run = db.Conn.QueryContext
	}
	rows, err := run(ctx, query, args...)
	if err != nil {
		return err
	}
	return s.raw.ScanRows(ctx, rows, dest)
}

// queryPgx runs a query of a hot path as a prepared statement on a pgx
// connection of the pool, outside any transaction, and hands each row to
// scan: pgx scans into typed fields directly, where database/sql and bun
// convert every value through reflection. PostgreSQL only.
func (s *Store) queryPgx(ctx context.Context, query string, args []any, scan func(pgx.Rows) error) error {
	conn, err := s.raw.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("models: %T is not pgx's driver", dc)
		}
		in := make([]any, 0, len(args)+1)
		in = append(in, pgx.QueryExecModeCacheStatement)
		for _, a := range args {
			// A uuid.UUID is a driver.Valuer giving text, which pgx
			// fails to encode in binary (building an error) before it
			// parses the text back; its 16 bytes encode directly.
			if id, ok := a.(uuid.UUID); ok {
				a = [16]byte(id)
			}
			in = append(in, a)
		}
		rows, err := c.Conn().Query(ctx, query, in...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// withDB is s on another handle (a transaction), with the same settings.
func (s *Store) withDB(db bun.IDB) *Store {
	c := *s
	c.db = db
	return &c
}

// now is the store clock at the precision both databases keep.
func (s *Store) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

// inTx reports whether s runs inside a database transaction (RunInTx's
// store), where a step cannot commit on its own.
func (s *Store) inTx() bool { return s.db != bun.IDB(s.raw) }

// NewID returns a new time-ordered id (UUIDv7), so that rows inserted
// together sort together and indexes stay compact.
func NewID() uuid.UUID { return uuid.Must(uuid.NewV7()) }

// dbErr turns driver errors into the sentinels callers branch on and wraps
// the rest with the action that failed.
func dbErr(action string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if lost(err) {
		return unavailable(action, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "23505" || pgErr.Code == "23503") {
		return fmt.Errorf("models: %s: %w (%s)", action, ErrConflict, pgErr.ConstraintName)
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		switch liteErr.Code() {
		case 2067, 1555, 787: // SQLITE_CONSTRAINT_UNIQUE, _PRIMARYKEY, _FOREIGNKEY
			return fmt.Errorf("models: %s: %w (%s)", action, ErrConflict, liteErr.Error())
		}
	}
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) || errors.Is(err, ErrUnavailable) {
		return err
	}
	var inv *InvalidError
	if errors.As(err, &inv) {
		return err
	}
	return fmt.Errorf("models: %s: %w", action, err)
}

// unavailable marks err with ErrUnavailable when the database could not be
// reached, and returns any other error as it is.
func unavailable(action string, err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) || !lost(err) {
		return err
	}
	return fmt.Errorf("models: %s: %w: %w", action, ErrUnavailable, err)
}

// lost reports whether err says the database could not be reached: a
// failed PostgreSQL connection, a network error or a dropped connection on
// an open one, or an SQLite file that cannot be opened.
func lost(err error) bool {
	var connErr *pgconn.ConnectError
	var netErr *net.OpError
	var liteErr *sqlite.Error
	return errors.As(err, &connErr) || errors.As(err, &netErr) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.As(err, &liteErr) && liteErr.Code()&0xff == 14 // SQLITE_CANTOPEN, any extended code
}

// Page selects one page of a list: Number from 1, Size rows.
type Page struct {
	Number int
	Size   int
	// CountUpTo, above 0, stops the count of the rows there (or just past
	// the page, if further): the total is then at most that (see AtLeast).
	// A screen's pager needs whether more pages follow, not the size of a
	// whole history: an exact count reads every row of a family (a
	// million rows: 200 ms), a page only its own.
	CountUpTo int
}

// Pages is how many pages of this size hold total rows; at least 1.
func (p Page) Pages(total int) int {
	return max((total+p.Size-1)/p.Size, 1)
}

// countLimit is where the count stops (0: it does not): CountUpTo, or one
// row past the page, so that a next page is always known.
func (p Page) countLimit() int64 {
	if p.CountUpTo <= 0 {
		return 0
	}
	return max(int64(p.CountUpTo), int64(p.Number)*int64(p.Size)+1)
}

// AtLeast reports whether total, as counted for p, stopped at p's limit:
// there are at least total rows, maybe more.
func (p Page) AtLeast(total int) bool {
	limit := p.countLimit()
	return limit > 0 && int64(total) >= limit
}

// scan counts every row q matches (up to p's limit), then reads the
// page's rows into q's model. The two run one after the other: bun's
// concurrent ScanAndCount races on queries with nested relations.
func (p Page) scan(ctx context.Context, q *bun.SelectQuery) (int, error) {
	count := q.Count
	if limit := p.countLimit(); limit > 0 {
		count = func(ctx context.Context) (int64, error) { return countUpTo(ctx, q, limit) }
	}
	return p.read(ctx, count, func(limit, offset int64) error { return q.Limit(limit).Offset(offset).Scan(ctx) })
}

// scanOrdered is scan for q in the order given apart, which its count
// leaves out: a count that stops at p's limit is then free to take the
// first rows it finds rather than sort every match to find the first in
// order (a search: PostgreSQL sorted all of them).
func (p Page) scanOrdered(ctx context.Context, q *bun.SelectQuery, order string) (int, error) {
	count := q.Count
	if limit := p.countLimit(); limit > 0 {
		count = func(ctx context.Context) (int64, error) { return countUpTo(ctx, q, limit) }
	}
	return p.read(ctx, count, func(limit, offset int64) error { return q.OrderExpr(order).Limit(limit).Offset(offset).Scan(ctx) })
}

// countUpTo counts q's rows, stopping at limit. It sets q's limit, which
// reading a page sets again.
func countUpTo(ctx context.Context, q *bun.SelectQuery, limit int64) (int64, error) {
	var n int64
	err := q.NewRaw("SELECT count(*) FROM (?) AS counted", q.Limit(limit)).Scan(ctx, &n)
	return n, err
}

// read counts the rows, then calls rows with the page's limit and offset
// to read the page. A page past the end is not read. A count past p's
// limit is taken down to it, so that every list paged with p reads alike.
func (p Page) read(ctx context.Context, count func(context.Context) (int64, error), rows func(limit, offset int64) error) (int, error) {
	n, err := count(ctx)
	if err != nil {
		return 0, err
	}
	if limit := p.countLimit(); limit > 0 {
		n = min(n, limit)
	}
	offset := int64(p.Number-1) * int64(p.Size)
	if n <= offset {
		return int(n), nil
	}
	return int(n), rows(int64(p.Size), offset)
}

// oneOf reads the row of T's table with this family and id.
func oneOf[T any](ctx context.Context, s *Store, familyID, id uuid.UUID, action string) (*T, error) {
	v := new(T)
	err := s.db.NewSelect().Model(v).
		Where("?TableAlias.family_id = ?", familyID).
		Where("?TableAlias.id = ?", id).
		Scan(ctx)
	return v, dbErr(action, err)
}

// updateOne writes the columns, and updated_at, of model to the row of
// its table with this family and id; the caller has set UpdatedAt.
func (s *Store) updateOne(ctx context.Context, model any, familyID, id uuid.UUID, action string, columns ...string) error {
	res, err := s.db.NewUpdate().Model(model).
		Column(append(columns[:len(columns):len(columns)], "updated_at")...).
		Where("?TableAlias.family_id = ?", familyID).
		Where("?TableAlias.id = ?", id).
		Exec(ctx)
	return affectedOne(res, err, action)
}

// deleteOne deletes the row of model's table with this family and id.
func (s *Store) deleteOne(ctx context.Context, model any, familyID, id uuid.UUID, action string) error {
	res, err := s.db.NewDelete().Model(model).
		Where("family_id = ?", familyID).
		Where("id = ?", id).
		Exec(ctx)
	return affectedOne(res, err, action)
}

// affectedOne maps "no row changed" to ErrNotFound.
func affectedOne(res sql.Result, err error, action string) error {
	if err != nil {
		return dbErr(action, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}
