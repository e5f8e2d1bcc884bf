package models_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// TestArrivalCheckReadsItsDays: with many families in one database and
// in a dense account, the arrival check (does the account hold rows of a
// person, a file or a bank sync that an arriving row may be) reads the
// account's rows of the row's amount in its span of days, and not the
// account's whole history nor every row of those days. PostgreSQL costs
// an index on (account, family) as a third of a row when the database
// holds many families, and chose such an index over the fingerprint range
// (migration 20261210400000); the amount is read from the fingerprint
// through an expression index (migration 20261210500000), which a query
// uses only when it repeats the expression. On PostgreSQL both forms are
// checked: the create's prepared statement (a generic plan) and the
// matcher's query (a custom plan); on SQLite, the matcher's.
func TestArrivalCheckReadsItsDays(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := t.Context()
	families, rows := 60, 50
	if modelstest.Embedded() {
		families, rows = 1, 3000 // a file holds one family
	}
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
		// A dense account: ten rows a day, of ten amounts.
		txs := make([]models.Transaction, rows)
		for i := range txs {
			day := civil.DateOf(time.Date(2026, 1, 1+i/10, 0, 0, 0, 0, time.UTC))
			amount := money.Amount(100 * (i%10 + 1))
			fp := models.Fingerprint(day, amount, fmt.Sprint("Row ", i))
			txs[i] = models.Transaction{ID: models.NewID(), FamilyID: f.ID, AccountID: last.ID, Date: day, Amount: amount,
				Currency: "USD", Name: "Row", Fingerprint: &fp, CreatedAt: time.Now(), UpdatedAt: time.Now()}
		}
		if _, err := s.DB().NewInsert().Model(&txs).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DB().ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	amount := s.ArrivalAmount()
	if modelstest.Embedded() {
		var plan []string
		rows, err := s.DB().QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT t.id FROM transactions AS t
WHERE t.family_id = ? AND t.account_id = ? AND t.fingerprint >= ? AND t.fingerprint < ? AND `+amount+` IN ('300')
  AND `+models.ArrivalCandidates+` AND t.deleted_at IS NULL AND NOT t.pending AND t.split_parent_id IS NULL
  AND (t.source IS NULL OR t.source <> ?) ORDER BY t.id`, last.FamilyID, last.ID, "2026-01-20|", "2026-01-26|~", "api")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		for _, step := range plan {
			if strings.Contains(step, "transactions_arrival_amount_idx") && strings.Contains(step, "fingerprint<") {
				return
			}
		}
		t.Fatalf("transactions read without the amount and the fingerprint range: %q", plan)
	}

	conn, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	where := `family_id = $1 AND account_id = $2 AND ` + amount + ` = $6 AND fingerprint >= $3 AND fingerprint < $4
  AND ` + models.ArrivalCandidates + `
  AND deleted_at IS NULL AND NOT pending AND split_parent_id IS NULL AND (source IS NULL OR source <> $5)`
	args := []any{last.FamilyID, last.ID, "2026-01-02|", "2026-01-08|~", "api", "300"}
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
				if strings.Contains(cond, "split_part") && strings.Contains(cond, "fingerprint <") {
					return
				}
			}
			t.Errorf("transactions read without the amount and the fingerprint range; index conditions: %q", conds)
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
	if _, err := conn.ExecContext(ctx, "PREPARE arrival(uuid, uuid, text, text, text, text) AS "+query); err != nil {
		t.Fatal(err)
	}
	var out string
	if err := conn.QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) EXECUTE arrival(?, ?, ?, ?, ?, ?)", args...).Scan(&out); err != nil {
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
