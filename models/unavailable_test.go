package models_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/sqliteshim"

	"coffer/models"
)

// unreachableStores returns a store on a PostgreSQL port nobody listens on
// and one on an SQLite file that cannot be created. Both open without
// connecting, as a pool does before its first query.
func unreachableStores(t *testing.T) map[string]*models.Store {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg, err := pgx.ParseConfig("postgres://postgres@" + addr + "/coffer?sslmode=disable&connect_timeout=5")
	if err != nil {
		t.Fatal(err)
	}
	pg := bun.NewDB(stdlib.OpenDB(*cfg), pgdialect.New())
	t.Cleanup(func() { pg.Close() })
	path := filepath.Join(t.TempDir(), "no such directory", "coffer.db")
	sqldb, err := sql.Open(sqliteshim.ShimName, "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	lite := bun.NewDB(sqldb, sqlitedialect.New())
	t.Cleanup(func() { lite.Close() })
	return map[string]*models.Store{"postgres": models.NewStore(pg), "sqlite": models.NewStore(lite)}
}

func TestUnavailable(t *testing.T) {
	ctx := context.Background()
	for name, s := range unreachableStores(t) {
		for _, tt := range []struct {
			call string
			run  func() error
		}{
			{"ping", func() error { return s.Ping(ctx) }},
			{"read", func() error { _, err := s.UserByEmail(ctx, "a@example.com"); return err }},
			{"write", func() error { return s.CreateAuditLog(ctx, &models.AuditLog{EventType: models.EventLogin}) }},
			{"transaction", func() error { return s.ResetPassword(ctx, uuid.New(), "hash", uuid.Nil) }},
			{"create or replay", func() error {
				_, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: uuid.New(), AccountID: uuid.New()}, nil)
				return err
			}},
		} {
			t.Run(name+"/"+tt.call, func(t *testing.T) {
				if err := tt.run(); !errors.Is(err, models.ErrUnavailable) {
					t.Fatalf("err = %v, want ErrUnavailable", err)
				}
			})
		}
	}
}
