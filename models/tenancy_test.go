package models_test

import (
	"context"
	"slices"
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

// schemaTables lists the tables of the migrated schema with, for each, its
// column names.
func schemaTables(t *testing.T, db *bun.DB) map[string]map[string]bool {
	t.Helper()
	ctx := context.Background()
	var rows []struct {
		Table  string `bun:"table_name"`
		Column string `bun:"column_name"`
	}
	// Tables only: a view (transaction_sums_fresh) stores nothing.
	q := `SELECT c.table_name, c.column_name FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'`
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
		switch has := tables[name]["family_id"]; {
		case !has && !instance:
			t.Errorf("table %s has no family_id column: add one, or list it in instanceTables with a reason", name)
		case has && instance:
			t.Errorf("table %s has family_id but is listed in instanceTables", name)
		}
	}
	for name := range instanceTables {
		if tables[name] == nil {
			t.Errorf("%s is listed without family_id but is not in the schema", name)
		}
	}
	t.Logf("%d tables: %d instance-wide", len(tables), len(instanceTables))
}

// tableKey is a unique index (primary keys included) or a foreign key of
// the schema.
type tableKey struct {
	Table     string `bun:"tbl"`
	Name      string `bun:"name"`
	Def       string `bun:"def"`
	Refs      string `bun:"refs"`       // a foreign key's referenced table
	HasFamily bool   `bun:"has_family"` // family_id is one of its columns
}

// tableKeys reads the unique indexes and foreign keys of the schema from
// PostgreSQL's catalogue.
func tableKeys(t *testing.T, db *bun.DB) []tableKey {
	t.Helper()
	var keys []tableKey
	err := db.NewRaw(`
SELECT t.relname AS tbl, i.relname AS name, pg_get_indexdef(x.indexrelid) AS def, '' AS refs,
  EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid
    AND a.attnum = ANY (x.indkey) AND a.attname = 'family_id') AS has_family
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_class t ON t.oid = x.indrelid
WHERE x.indisunique AND t.relnamespace = current_schema()::regnamespace
UNION ALL
SELECT t.relname, c.conname, pg_get_constraintdef(c.oid), r.relname,
  EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid
    AND a.attnum = ANY (c.conkey) AND a.attname = 'family_id')
FROM pg_constraint c
JOIN pg_class t ON t.oid = c.conrelid
JOIN pg_class r ON r.oid = c.confrelid
WHERE c.contype = 'f' AND t.relnamespace = current_schema()::regnamespace
ORDER BY 1, 2`).Scan(context.Background(), &keys)
	if err != nil {
		t.Fatalf("list keys: %v", err)
	}
	return keys
}

// keysWithoutFamily are the primary keys, unique indexes and foreign keys
// of tenant tables that do not include family_id today: a table distributed
// by family (Citus) needs family_id in each of them, so each would change,
// e.g. a primary key (id) becomes (family_id, id) and a foreign key
// (account_id) → accounts (id) becomes (family_id, account_id) →
// accounts (family_id, id). Foreign keys to instance tables are left out:
// those would be reference tables, which any table may point to.
var keysWithoutFamily = map[string][]string{
	"accounts":                     {"accounts_pkey"},
	"api_keys":                     {"api_keys_key_hash_key", "api_keys_pkey", "api_keys_user_id_fkey"},
	"budget_categories":            {"budget_categories_budget_category_key", "budget_categories_budget_id_fkey", "budget_categories_category_id_fkey", "budget_categories_pkey"},
	"budgets":                      {"budgets_pkey"},
	"categories":                   {"categories_parent_id_fkey", "categories_pkey"},
	"chat_proposals":               {"chat_proposals_chat_id_fkey", "chat_proposals_message_id_fkey", "chat_proposals_pkey"},
	"chats":                        {"chats_pkey", "chats_user_id_fkey"},
	"exchange_rates":               {"exchange_rates_fetched_key", "exchange_rates_pkey"},
	"family_export_chunks":         {"family_export_chunks_export_id_fkey", "family_export_chunks_pkey"},
	"family_exports":               {"family_exports_pkey"},
	"import_mappings":              {"import_mappings_pkey"},
	"import_rows":                  {"import_rows_import_id_fkey", "import_rows_import_position_key", "import_rows_pkey"},
	"imports":                      {"imports_account_id_fkey", "imports_pkey"},
	"invitations":                  {"invitations_accepted_user_id_fkey", "invitations_inviter_id_fkey", "invitations_pkey", "invitations_token_hash_key"},
	"merchants":                    {"merchants_pkey"},
	"messages":                     {"messages_chat_id_fkey", "messages_pkey", "messages_reply_to_fkey", "messages_reply_to_idx"},
	"notification_outbox":          {"notification_outbox_pkey", "notification_outbox_user_id_fkey"},
	"notification_preferences":     {"notification_preferences_user_id_fkey"},
	"oauth_codes":                  {"oauth_codes_pkey", "oauth_codes_user_id_fkey"},
	"oauth_pkce":                   {"oauth_pkce_pkey", "oauth_pkce_user_id_fkey"},
	"oauth_tokens":                 {"oauth_tokens_pkey", "oauth_tokens_user_id_fkey"},
	"provider_accounts":            {"provider_accounts_account_id_fkey", "provider_accounts_account_key", "provider_accounts_connection_id_fkey", "provider_accounts_created_account_id_fkey", "provider_accounts_pkey", "provider_accounts_remote_key"},
	"provider_connections":         {"provider_connections_pkey"},
	"provider_transaction_aliases": {"provider_transaction_aliases_account_id_fkey", "provider_transaction_aliases_pkey", "provider_transaction_aliases_transaction_id_fkey"},
	"recurring_occurrences":        {"recurring_occurrences_pkey", "recurring_occurrences_recurring_transaction_id_fkey", "recurring_occurrences_transaction_id_fkey"},
	"calendar_feeds":               {"calendar_feeds_pkey", "calendar_feeds_token_hash_key", "calendar_feeds_user_id_fkey"},
	"recurring_transactions":       {"recurring_transactions_account_id_fkey", "recurring_transactions_merchant_id_fkey", "recurring_transactions_pkey"},
	"reconciliations":              {"reconciliations_account_id_fkey", "reconciliations_in_progress_key", "reconciliations_pkey", "reconciliations_user_id_fkey"},
	"rejected_transfers":           {"rejected_transfers_inflow_transaction_id_fkey", "rejected_transfers_outflow_transaction_id_fkey", "rejected_transfers_pkey"},
	"restores":                     {"restores_pkey"},
	"rule_actions":                 {"rule_actions_pkey", "rule_actions_rule_id_fkey"},
	"rule_conditions":              {"rule_conditions_parent_id_fkey", "rule_conditions_pkey", "rule_conditions_rule_id_fkey"},
	"rule_runs":                    {"rule_runs_pkey", "rule_runs_rule_id_fkey"},
	"rules":                        {"rules_pkey"},
	"sessions":                     {"sessions_pkey", "sessions_token_hash_key", "sessions_user_id_fkey"},
	"sso_identities":               {"sso_identities_pkey", "sso_identities_provider_subject_key", "sso_identities_user_id_fkey", "sso_identities_user_provider_key"},
	"sync_payloads":                {"sync_payloads_pkey", "sync_payloads_sync_id_fkey"},
	"syncs":                        {"syncs_active_key", "syncs_child_key", "syncs_connection_id_fkey", "syncs_parent_id_fkey", "syncs_pkey", "syncs_provider_account_id_fkey", "syncs_scheduled_key"},
	"tags":                         {"tags_pkey"},
	"transaction_tags":             {"transaction_tags_pkey", "transaction_tags_tag_id_fkey", "transaction_tags_transaction_id_fkey"},
	"transactions":                 {"transactions_account_id_fkey", "transactions_category_id_fkey", "transactions_external_key", "transactions_import_id_fkey", "transactions_merchant_id_fkey", "transactions_pkey", "transactions_reconciliation_id_fkey", "transactions_rule_id_fkey", "transactions_split_parent_id_fkey"},
	"transfers":                    {"transfers_inflow_key", "transfers_inflow_transaction_id_fkey", "transfers_outflow_key", "transfers_outflow_transaction_id_fkey", "transfers_pkey"},
	"user_passkeys":                {"user_passkeys_credential_key", "user_passkeys_pkey", "user_passkeys_user_id_fkey"},
	"user_recovery_codes":          {"user_recovery_codes_pkey", "user_recovery_codes_user_hash_key", "user_recovery_codes_user_id_fkey"},
	"user_totps":                   {"user_totps_pkey", "user_totps_user_id_fkey"},
	"users":                        {"users_email_key", "users_pkey"},
	"valuations":                   {"valuations_account_date_key", "valuations_account_id_fkey", "valuations_opening_key", "valuations_pkey"},
	"webhook_deliveries":           {"webhook_deliveries_endpoint_id_fkey", "webhook_deliveries_event_key", "webhook_deliveries_pkey"},
	"webhook_endpoints":            {"webhook_endpoints_pkey"},
}

// TestKeysWithoutFamily lists from PostgreSQL's catalogue the keys of
// tenant tables without family_id, and fails when one is not in
// keysWithoutFamily (a new key: include family_id) or when a listed one no
// longer lacks it (shorten the list, and the README).
func TestKeysWithoutFamily(t *testing.T) {
	if modelstest.Embedded() {
		t.Skip("reads PostgreSQL's catalogue; distribution is a PostgreSQL matter")
	}
	db := modelstest.NewDB(t)
	known := map[string]bool{}
	for table, names := range keysWithoutFamily {
		for _, n := range names {
			known[table+"."+n] = true
		}
	}
	var tables, ready []string
	seen := map[string]bool{}
	for _, k := range tableKeys(t, db) {
		_, inst := instanceTables[k.Table]
		_, refInst := instanceTables[k.Refs]
		if k.HasFamily || inst || refInst {
			continue
		}
		seen[k.Table] = true
		if !known[k.Table+"."+k.Name] {
			t.Errorf("%s: key %s does not include family_id: %s", k.Table, k.Name, k.Def)
		}
		delete(known, k.Table+"."+k.Name)
	}
	for k := range known {
		t.Errorf("keysWithoutFamily lists %s, which now includes family_id or is gone: update the list and the README", k)
	}
	for name := range schemaTables(t, db) {
		if _, inst := instanceTables[name]; inst {
			continue
		}
		tables = append(tables, name)
		if !seen[name] {
			ready = append(ready, name)
		}
	}
	sort.Strings(ready)
	t.Logf("%d tenant tables; every key includes family_id in %d: %v", len(tables), len(ready), ready)

	var nullable []string
	err := db.NewRaw(`SELECT c.table_name FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND c.column_name = 'family_id' AND c.is_nullable = 'YES'
		  AND t.table_type = 'BASE TABLE'
		ORDER BY 1`).Scan(context.Background(), &nullable)
	if err != nil {
		t.Fatal(err)
	}
	// A distribution column may not be NULL: exchange_rates keeps the
	// instance's fetched rates beside the families' own, and would split
	// in two (a reference table of fetched rates, a distributed one of
	// manual rates).
	if want := []string{"exchange_rates"}; !slices.Equal(nullable, want) {
		t.Errorf("tables with a nullable family_id: %v, want %v", nullable, want)
	}
}
