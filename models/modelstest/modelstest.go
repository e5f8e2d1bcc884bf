// Package modelstest builds throwaway databases and fixtures for tests. It
// is imported by tests only.
//
// COFFER_TEST_STORAGE selects the storage mode: "server" (default) uses the
// PostgreSQL at COFFER_TEST_DATABASE_URL (default the local server) and the
// Redis at COFFER_TEST_REDIS_URL; "embedded" uses a SQLite file and an
// in-process Redis, as `coffer dev` does.
package modelstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"coffer/migrations"
	"coffer/models"
	"coffer/models/secret"
)

// Embedded reports whether tests run in the embedded storage mode.
func Embedded() bool { return os.Getenv("COFFER_TEST_STORAGE") == "embedded" }

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// NewStore returns a Store on a new, migrated database that is dropped when
// the test ends.
func NewStore(t testing.TB) *models.Store {
	t.Helper()
	db := NewDB(t)
	s := models.NewStore(db)
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	var err error
	if s.Secrets, err = secret.NewSealer(key); err != nil {
		t.Fatal(err)
	}
	return s
}

// NewDB returns a new, migrated database that is dropped when the test ends.
func NewDB(t testing.TB) *bun.DB {
	t.Helper()
	ctx := context.Background()
	if !Embedded() {
		db, err := models.OpenPostgres(ctx, newPostgres(t, true), 20, 5*time.Second)
		if err != nil {
			t.Fatalf("modelstest: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	path := filepath.Join(t.TempDir(), "coffer.db")
	if err := copyFile(sqliteTemplate(t), path); err != nil {
		t.Fatalf("modelstest: %v", err)
	}
	db, err := models.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatalf("modelstest: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sqliteTemplate returns the path of a SQLite file that holds every
// migration, for each test to copy: running the migrations cost 200-290 ms
// a test, a copy a few. As with PostgreSQL's template, its name carries the
// migrations' digest, a lock file makes concurrent test binaries build it
// once, and it is renamed into place only when complete.
func sqliteTemplate(t testing.TB) string {
	t.Helper()
	digest, err := migrations.Digest()
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(os.TempDir(), "coffer-test-template-")
	path := prefix + digest[:16] + ".db"
	if _, err := os.Stat(path); err == nil {
		return path
	}
	lock, err := os.OpenFile(prefix+"lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("modelstest: template lock: %v", err)
	}
	defer lock.Close() // releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("modelstest: template lock: %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		return path // built while this binary waited
	}
	if err := buildSQLiteTemplate(path); err != nil {
		t.Fatalf("modelstest: template: %v", err)
	}
	// Templates of other migration sets belong to older checkouts.
	old, _ := filepath.Glob(prefix + "*.db")
	for _, o := range old {
		if o != path {
			os.Remove(o)
		}
	}
	return path
}

// buildSQLiteTemplate migrates a database in a scratch directory and
// writes it to path with VACUUM INTO: one self-contained file, with no
// write-ahead log beside it to copy.
func buildSQLiteTemplate(path string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp(filepath.Dir(path), "coffer-test-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := models.OpenSQLite(ctx, filepath.Join(dir, "coffer.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := migrations.Up(ctx, db); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	tmp := filepath.Join(dir, "template.db")
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// PostgresURL creates an empty PostgreSQL database that is dropped when
// the test ends, and returns its URL, for tests that start the service's
// own processes (which migrate it themselves).
func PostgresURL(t testing.TB) string {
	t.Helper()
	return newPostgres(t, false)
}

func adminURL() string {
	return env("COFFER_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
}

func adminConn(t testing.TB) *pgx.Conn {
	t.Helper()
	admin := adminURL()
	conn, err := pgx.Connect(context.Background(), admin)
	if err != nil {
		t.Fatalf("modelstest: PostgreSQL is unreachable at %s (start it, or set COFFER_TEST_DATABASE_URL): %v", admin, err)
	}
	return conn
}

// newPostgres creates a database, migrated (a copy of the template) or
// empty, that is dropped when the test ends, and returns its URL.
//
// A test database need not survive a crash of the server, so its commits
// do not wait for the WAL to reach the disk: that wait is no part of what
// a test checks.
func newPostgres(t testing.TB, migrated bool) string {
	t.Helper()
	ctx := context.Background()
	conn := adminConn(t)
	defer conn.Close(ctx)
	name := "coffer_test_" + randomHex(6)
	create := "CREATE DATABASE " + name
	if migrated {
		create += " TEMPLATE " + migratedTemplate(t, conn)
	}
	if _, err := conn.Exec(ctx, create); err != nil {
		t.Fatalf("modelstest: create database: %v", err)
	}
	// Registered first, so it runs after the callers' cleanups close
	// their connections.
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), adminURL())
		if err != nil {
			t.Errorf("modelstest: drop database: %v", err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("modelstest: drop database: %v", err)
		}
	})
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+name+" SET synchronous_commit = off"); err != nil {
		t.Fatalf("modelstest: %v", err)
	}
	u, err := url.Parse(adminURL())
	if err != nil {
		t.Fatalf("modelstest: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// migratedTemplate returns the name of a database that holds every
// migration and nothing else, for CREATE DATABASE … TEMPLATE to copy,
// instead of running the migrations into each test's database (with
// newPostgres's unflushed commits, the models package's tests took 46 s
// instead of 144). The name carries the migrations' digest, so an edited
// or added migration builds a new template; an advisory lock on conn, the
// admin session newPostgres goes on to create the test's database with,
// makes the test binaries that start together build it once, and the
// template is renamed into place only when it is complete.
func migratedTemplate(t testing.TB, conn *pgx.Conn) string {
	t.Helper()
	ctx := context.Background()
	digest, err := migrations.Digest()
	if err != nil {
		t.Fatal(err)
	}
	name := "coffer_template_" + digest[:16]
	const key = 7_431_220_002 // coffer's test templates, on the admin database
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		t.Fatalf("modelstest: template lock: %v", err)
	}
	defer conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", key) //nolint:errcheck // released with the session anyway
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatalf("modelstest: template: %v", err)
	}
	if exists {
		return name
	}
	if err := buildTemplate(ctx, conn, name); err != nil {
		t.Fatalf("modelstest: template: %v", err)
	}
	return name
}

// buildTemplate migrates a new database and renames it to name. Templates
// of other migration sets are dropped: they belong to older checkouts.
func buildTemplate(ctx context.Context, conn *pgx.Conn, name string) error {
	build := name + "_build"
	// Left by a run that died while building.
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+build+" WITH (FORCE)"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+build); err != nil {
		return err
	}
	u, err := url.Parse(adminURL())
	if err != nil {
		return err
	}
	u.Path = "/" + build
	db, err := models.OpenPostgres(ctx, u.String(), 2, 5*time.Second)
	if err != nil {
		return err
	}
	_, err = migrations.Up(ctx, db)
	db.Close()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	// No one connects to a template: CREATE DATABASE refuses to copy a
	// database that has a session.
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+build+" RENAME TO "+name); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+name+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
		return err
	}
	rows, err := conn.Query(ctx, "SELECT datname FROM pg_database WHERE datname LIKE 'coffer\\_template\\_%' AND datname <> $1", name)
	if err != nil {
		return err
	}
	old, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, o := range old {
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+o+" WITH IS_TEMPLATE false"); err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+o+" WITH (FORCE)"); err != nil {
			return err
		}
	}
	return nil
}

// Redis returns connection options for a Redis the test may use: a fresh
// in-process one in the embedded mode, else database db of the local
// server, which the caller's package owns (each test package passes its own
// number so that packages running in parallel never share queues).
func Redis(t testing.TB, db int) asynq.RedisClientOpt {
	t.Helper()
	if Embedded() {
		mr := miniredis.RunT(t)
		return asynq.RedisClientOpt{Addr: mr.Addr()}
	}
	opt, err := asynq.ParseRedisURI(env("COFFER_TEST_REDIS_URL", "redis://127.0.0.1:6379"))
	if err != nil {
		t.Fatalf("modelstest: COFFER_TEST_REDIS_URL: %v", err)
	}
	o := opt.(asynq.RedisClientOpt)
	o.DB = db
	c := o.MakeRedisClient().(redis.UniversalClient)
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("modelstest: Redis is unreachable at %s (start it, or set COFFER_TEST_REDIS_URL): %v", o.Addr, err)
	}
	return o
}

// RedisClient is Redis(t, db) with a client on it, closed when the test
// ends.
func RedisClient(t testing.TB, db int) (asynq.RedisClientOpt, redis.UniversalClient) {
	t.Helper()
	o := Redis(t, db)
	c := o.MakeRedisClient().(redis.UniversalClient)
	t.Cleanup(func() { c.Close() })
	return o, c
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("modelstest: random: %v", err))
	}
	return hex.EncodeToString(b)
}

// ProcessCPU is this process's user and system time so far. A benchmark
// reports it per operation beside the wall time, which on a shared machine
// moves with everyone else's load; in the embedded mode it is the whole
// cost (SQLite runs in this process).
func ProcessCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
