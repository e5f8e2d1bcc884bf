package models_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"coffer/models"
	"coffer/models/modelstest"
)

// TestArrivalCheckReadsItsDays: with many families in one database, the
// arrival check (does the account hold rows of a person, a file or a bank
// sync in an arriving row's days) reads the account's rows by fingerprint,
// the span of days, and not the account's whole history. PostgreSQL costs
// an index on (account, family) as a third of a row when the database holds
// many families, and chose such an index over the fingerprint range
// (migration 20261210400000). Both forms are checked: the create's prepared
// statement (a generic plan) and the matcher's query (a custom plan).
func TestArrivalCheckReadsItsDays(t *testing.T) {
	if modelstest.Embedded() {
		t.Skip("PostgreSQL's planner")
	}
	s := modelstest.NewStore(t)
	ctx := t.Context()
	const families, rows = 60, 50
	var last *models.Account
	for range families {
		f := &models.Family{Name: "Family", Currency: "USD"}
		if err := s.CreateFamily(ctx, f); err != nil {
			t.Fatal(err)
		}
		last = &models.Account{FamilyID: f.ID, Name: "Checking", AccountType: "depository", Currency: "USD"}
		if err := s.CreateAccount(ctx, last); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB().ExecContext(ctx, `
INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name, fingerprint, created_at, updated_at)
SELECT gen_random_uuid(), ?, ?, DATE '2026-01-01' + g, g * 100, 'USD', 'Row ' || g,
       (DATE '2026-01-01' + g)::text || '|' || (g * 100) || '|Row ' || g, now(), now()
FROM generate_series(1, ?) AS g`, f.ID, last.ID, rows); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DB().ExecContext(ctx, "ANALYZE transactions"); err != nil {
		t.Fatal(err)
	}
	conn, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const where = `family_id = $1 AND account_id = $2 AND fingerprint >= $3 AND fingerprint < $4
  AND ` + models.ArrivalCandidates + `
  AND deleted_at IS NULL AND NOT pending AND split_parent_id IS NULL AND (source IS NULL OR source <> $5)`
	args := []any{last.FamilyID, last.ID, "2026-01-20|", "2026-01-26|~", "api"}
	for _, c := range []struct{ name, mode, query string }{
		{"create (generic plan)", "force_generic_plan", "SELECT EXISTS (SELECT 1 FROM transactions WHERE " + where + ")"},
		{"matcher (custom plan)", "force_custom_plan", "SELECT id FROM transactions WHERE " + where + " ORDER BY id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := conn.ExecContext(ctx, "SET plan_cache_mode = "+c.mode); err != nil {
				t.Fatal(err)
			}
			conds := transactionIndexConds(t, ctx, conn, c.query, args)
			for _, cond := range conds {
				if strings.Contains(cond, "fingerprint") {
					return
				}
			}
			t.Errorf("transactions read without the fingerprint range; index conditions: %q", conds)
		})
	}
}

// transactionIndexConds EXPLAINs query as a prepared statement and
// returns the condition of each read of an index of transactions in its
// plan.
func transactionIndexConds(t *testing.T, ctx context.Context, conn bun.Conn, query string, args []any) []string {
	t.Helper()
	if _, err := conn.ExecContext(ctx, "DEALLOCATE ALL"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "PREPARE arrival(uuid, uuid, text, text, text) AS "+query); err != nil {
		t.Fatal(err)
	}
	var out string
	if err := conn.QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) EXECUTE arrival(?, ?, ?, ?, ?)", args...).Scan(&out); err != nil {
		t.Fatal(err)
	}
	var plan []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || len(plan) != 1 {
		t.Fatalf("plan %s: %v", out, err)
	}
	var conds []string
	var walk func(n planNode)
	walk = func(n planNode) {
		if strings.HasPrefix(n.Index, "transactions_") {
			conds = append(conds, n.IndexCond)
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(plan[0].Plan)
	return conds
}

type planNode struct {
	Index     string     `json:"Index Name"`
	IndexCond string     `json:"Index Cond"`
	Plans     []planNode `json:"Plans"`
}
