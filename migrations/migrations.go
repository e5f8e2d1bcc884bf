// Package migrations holds the forward-only SQL schema and the runner that
// `coffer migrate` calls. It imports nothing of ours.
//
// One set of files serves both dialects: each file is a text/template that
// receives Dialect, so the few type names that differ between PostgreSQL and
// SQLite are written once, by name.
package migrations

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

//go:embed *.sql
var files embed.FS

// Dialect is the template data every migration file is rendered with.
type Dialect struct {
	Postgres bool   // true on PostgreSQL, false on SQLite
	UUID     string // column type of ids
	Time     string // column type of timestamps
	Date     string // column type of calendar dates
	JSON     string // column type of JSON documents
	Bool     string // column type of booleans
	Now      string // expression for the current time
}

func dialectFor(db *bun.DB) Dialect {
	if db.Dialect().Name().String() == "pg" {
		return Dialect{Postgres: true, UUID: "uuid", Time: "timestamptz", Date: "date", JSON: "jsonb", Bool: "boolean", Now: "now()"}
	}
	// SQLite: ids, dates and JSON are TEXT so that type affinity never turns
	// them into numbers; timestamps are TEXT in bun's sortable layout.
	return Dialect{UUID: "text", Time: "timestamp", Date: "text", JSON: "text", Bool: "boolean", Now: "CURRENT_TIMESTAMP"}
}

// Up applies every migration that has not run yet and returns their names.
// On PostgreSQL it holds an advisory lock so that two release steps started
// at once apply each file exactly once.
func Up(ctx context.Context, db *bun.DB) ([]string, error) {
	ms := migrate.NewMigrations()
	if err := ms.Discover(files); err != nil {
		return nil, fmt.Errorf("migrations: discover: %w", err)
	}
	m := migrate.NewMigrator(db, ms, migrate.WithTemplateData(dialectFor(db)), migrate.WithMarkAppliedOnSuccess(true))

	if db.Dialect().Name().String() == "pg" {
		conn, err := db.Conn(ctx)
		if err != nil {
			return nil, fmt.Errorf("migrations: lock: %w", err)
		}
		defer conn.Close()
		const key = 7_431_220_001 // any constant shared by every coffer process
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", key); err != nil {
			return nil, fmt.Errorf("migrations: lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", key) //nolint:errcheck // released with the session anyway
	}

	if err := m.Init(ctx); err != nil {
		return nil, fmt.Errorf("migrations: init: %w", err)
	}
	group, err := m.Migrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrations: migrate: %w", err)
	}
	var names []string
	for _, mg := range group.Migrations {
		names = append(names, mg.Name)
	}
	return names, nil
}

// Digest names this set of migrations: a hash of every file's name and
// text, which changes when any file is added or edited. Tests key a
// migrated template database by it.
func Digest() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("migrations: digest: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
