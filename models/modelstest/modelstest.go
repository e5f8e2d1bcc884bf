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
	var db *bun.DB
	var err error
	if Embedded() {
		db, err = models.OpenSQLite(ctx, filepath.Join(t.TempDir(), "coffer.db"))
		if err != nil {
			t.Fatalf("modelstest: %v", err)
		}
		t.Cleanup(func() { db.Close() })
	} else {
		db = newPostgres(t)
	}
	if _, err := migrations.Up(ctx, db); err != nil {
		t.Fatalf("modelstest: migrate: %v", err)
	}
	return db
}

func newPostgres(t testing.TB) *bun.DB {
	t.Helper()
	db, err := models.OpenPostgres(context.Background(), PostgresURL(t), 20, 5*time.Second)
	if err != nil {
		t.Fatalf("modelstest: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// PostgresURL creates an empty PostgreSQL database that is dropped when
// the test ends, and returns its URL, for tests that start the service's
// own processes.
func PostgresURL(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	admin := env("COFFER_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("modelstest: PostgreSQL is unreachable at %s (start it, or set COFFER_TEST_DATABASE_URL): %v", admin, err)
	}
	defer conn.Close(ctx)
	name := "coffer_test_" + randomHex(6)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("modelstest: create database: %v", err)
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("modelstest: %v", err)
	}
	u.Path = "/" + name
	// Registered first, so it runs after the callers' cleanups close
	// their connections.
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), admin)
		if err != nil {
			t.Errorf("modelstest: drop database: %v", err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("modelstest: drop database: %v", err)
		}
	})
	return u.String()
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
