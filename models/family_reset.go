package models

import (
	"context"

	"github.com/google/uuid"
)

// resetTables are the tables of a family's financial data, in the order a
// reset empties them: what points to a row goes before the row. The
// people stay (users, their keys, sessions, grants and invitations), with
// their chats with the assistant and their notification choices; the
// audit log stays too. (The outbox goes: its rows copy the data.) (A family's
// own exchange rates go; the instance's fetched ones have no family. Its
// exports go, as the reference's reset removes them: they hold the data.)
var resetTables = []string{
	"chat_proposals", "rule_runs", "rules", "import_mappings", "imports", "family_export_chunks", "family_exports",
	"recurring_occurrences", "recurring_transactions", "notification_outbox",
	"budgets", "provider_connections",
	"rejected_transfers", "transfers", "transaction_tags", "provider_transaction_aliases", "transactions",
	"valuations", "reconciliations", "accounts", "categories", "merchants", "tags", "exchange_rates",
}

// ResetCounts are the records of a family's financial data that a reset
// removes, by kind, as the reference's reset status lists them.
type ResetCounts struct {
	Accounts            int `json:"accounts"`
	Transactions        int `json:"transactions"`
	Categories          int `json:"categories"`
	Tags                int `json:"tags"`
	Merchants           int `json:"merchants"`
	Rules               int `json:"rules"`
	Imports             int `json:"imports"`
	Budgets             int `json:"budgets"`
	ProviderConnections int `json:"provider_connections"`
}

// Total is the number of records left.
func (c ResetCounts) Total() int {
	return c.Accounts + c.Transactions + c.Categories + c.Tags + c.Merchants + c.Rules + c.Imports + c.Budgets + c.ProviderConnections
}

// FamilyResetCounts counts what a reset of the family would remove.
func (s *Store) FamilyResetCounts(ctx context.Context, familyID uuid.UUID) (ResetCounts, error) {
	var c ResetCounts
	for _, t := range []struct {
		table string
		into  *int
	}{{"accounts", &c.Accounts}, {"transactions", &c.Transactions}, {"categories", &c.Categories}, {"tags", &c.Tags},
		{"merchants", &c.Merchants}, {"rules", &c.Rules}, {"imports", &c.Imports}, {"budgets", &c.Budgets},
		{"provider_connections", &c.ProviderConnections}} {
		n, err := s.db.NewSelect().Table(t.table).Where("family_id = ?", familyID).Count(ctx)
		if err != nil {
			return c, dbErr("count "+t.table, err)
		}
		*t.into = int(n)
	}
	return c, nil
}

// ResetFamily removes a family's financial data (see resetTables) in one
// database transaction, and keeps its people. Repeating it is harmless.
func (s *Store) ResetFamily(ctx context.Context, familyID uuid.UUID) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		for _, table := range resetTables {
			if _, err := tx.db.NewDelete().Table(table).Where("family_id = ?", familyID).Exec(ctx); err != nil {
				return dbErr("reset "+table, err)
			}
		}
		return tx.rulesChanged(ctx) // the rules, and what they named, are gone
	})
}
