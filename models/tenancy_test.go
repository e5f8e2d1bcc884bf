package models_test

import (
	"context"
	"sort"
	"testing"

	"github.com/uptrace/bun"

	"coffer/models/modelstest"
)

// instanceTables are the tables without a family_id column, each with the
// reason it belongs to the instance rather than to one household. Every
// other table is a tenant table and must carry family_id, so that a hosted
// coffer can distribute it by family (see README, "Past one database").
var instanceTables = map[string]string{
	"families":              "the tenants themselves: the distribution key is their id",
	"bun_migrations":        "the migration runner's record of the schema",
	"bun_migration_locks":   "the migration runner's lock",
	"exchange_rate_fetches": "what the rates service answered per currency pair, shared by every family",
	"oauth_clients":         "apps registered with the instance's OAuth server, offered to every family",
	"sso_providers":         "identity providers of the instance, listed on the sign-in page before any family is known",
	"sso_audit_logs":        "the instance's audit log, read by super admins only, across families",
	"audit_archives":        "index of the archive files of the instance's audit log",
}

// userTables belong to a user of one family but carry user_id only: they
// are found by a cookie's token hash or an identity provider's subject,
// before the family is known. They are the schema's known gap: to be
// distributed by family they need family_id (filled from users) and a
// lookup key that names the family.
var userTables = map[string]string{
	"sessions":       "browser sessions, found by the cookie's token hash",
	"sso_identities": "links of users to identity providers, found by (provider, subject) at sign-in",
}

// schemaTables lists the tables of the migrated schema with, for each, its
// column names.
func schemaTables(t *testing.T, db *bun.DB) map[string]map[string]bool {
	t.Helper()
	ctx := context.Background()
	var rows []struct {
		Table  string `bun:"table_name"`
		Column string `bun:"column_name"`
	}
	q := `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema()`
	if db.Dialect().Name().String() != "pg" {
		q = `SELECT m.name AS table_name, p.name AS column_name
			FROM sqlite_master m JOIN pragma_table_info(m.name) p
			WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`
	}
	if err := db.NewRaw(q).Scan(ctx, &rows); err != nil {
		t.Fatalf("list tables: %v", err)
	}
	out := map[string]map[string]bool{}
	for _, r := range rows {
		if out[r.Table] == nil {
			out[r.Table] = map[string]bool{}
		}
		out[r.Table][r.Column] = true
	}
	return out
}

// TestTenantTablesHaveFamilyID fails when a table of the schema has no
// family_id column and is not listed in instanceTables with a reason.
func TestTenantTablesHaveFamilyID(t *testing.T) {
	tables := schemaTables(t, modelstest.NewDB(t))
	var names []string
	for name := range tables {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		_, instance := instanceTables[name]
		if _, ok := userTables[name]; ok {
			instance = true
		}
		switch has := tables[name]["family_id"]; {
		case !has && !instance:
			t.Errorf("table %s has no family_id column: add one, or list it in instanceTables with a reason", name)
		case has && instance:
			t.Errorf("table %s has family_id but is listed in instanceTables", name)
		}
	}
	for _, listed := range []map[string]string{instanceTables, userTables} {
		for name := range listed {
			if tables[name] == nil {
				t.Errorf("%s is listed without family_id but is not in the schema", name)
			}
		}
	}
	t.Logf("%d tables: %d instance-wide, %d per user without family_id", len(tables), len(instanceTables), len(userTables))
}
