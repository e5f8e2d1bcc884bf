package models_test

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
)

// queryLog records every statement the store sends.
type queryLog struct {
	mu    sync.Mutex
	stmts []string
}

func (l *queryLog) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (l *queryLog) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	l.mu.Lock()
	l.stmts = append(l.stmts, e.Query)
	l.mu.Unlock()
}

// tableRef finds the tables a statement reads or writes.
var tableRef = regexp.MustCompile(`(?i)\b(?:FROM|JOIN|UPDATE|INTO)\s+"?([a-z_]+)"?`)

// unscopedStatements are statements on tenant tables known to run without
// family_id, by a substring that identifies each, with the reason.
var unscopedStatements = map[string]string{}

// TestQueriesNameFamily runs the main read paths of the store for one
// family (and the writes that build it) and fails on any statement that
// touches a tenant table without naming family_id: on a database
// distributed by family, such a statement would go to every node, and on
// this one it is a query that could cross families.
func TestQueriesNameFamily(t *testing.T) {
	ctx := context.Background()
	base := modelstest.NewStore(t)
	schema := schemaTables(t, base.DB())
	log := &queryLog{}
	s := models.NewStore(base.DB().WithQueryHook(log))
	s.Secrets = base.Secrets
	b := newExportBook(t, s, "Tenant")
	fam, user := b.f.Family.ID, b.f.User.ID
	page := models.Page{Number: 1, Size: 50}
	period := models.Period{From: "2026-01-01", To: "2026-03-31"}
	run := func(name string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	var err error
	_, err = s.Family(ctx, fam)
	run("Family", err)
	_, err = s.FamilyCurrencies(ctx, fam)
	run("FamilyCurrencies", err)
	_, err = s.User(ctx, fam, user)
	run("User", err)
	_, err = s.APIKeys(ctx, fam, user)
	run("APIKeys", err)
	_, err = s.Invitations(ctx, fam)
	run("Invitations", err)
	_, _, err = s.Accounts(ctx, fam, page)
	run("Accounts", err)
	_, err = s.Account(ctx, fam, b.f.Account.ID)
	run("Account", err)
	_, _, err = s.Transactions(ctx, fam, models.TransactionFilter{WithSplitParents: true}, page)
	run("Transactions", err)
	_, _, err = s.Transactions(ctx, fam, models.TransactionFilter{Search: "costco", TagIDs: []uuid.UUID{b.tag.ID},
		CategoryIDs: []uuid.UUID{b.food.ID}, Uncategorized: true, Kinds: []string{"expense", "transfer"}}, page)
	run("Transactions (search)", err)
	_, err = s.TransactionTotals(ctx, fam, models.TransactionFilter{Search: "costco"})
	run("TransactionTotals", err)
	_, err = s.Transaction(ctx, fam, b.plain.ID)
	run("Transaction", err)
	_, _, err = s.AccountRegister(ctx, fam, b.f.Account.ID, page)
	run("AccountRegister", err)
	_, _, err = s.Transfers(ctx, fam, page)
	run("Transfers", err)
	_, err = s.IncomeStatement(ctx, fam, period)
	run("IncomeStatement", err)
	_, err = s.CategoryTotals(ctx, fam, period)
	run("CategoryTotals", err)
	_, err = s.BalanceSheet(ctx, fam, false)
	run("BalanceSheet", err)
	_, err = s.NetWorthSeries(ctx, fam, period, models.Month)
	run("NetWorthSeries", err)
	_, err = s.AccountBalanceSeries(ctx, fam, b.f.Account.ID, period, models.Week)
	run("AccountBalanceSeries", err)
	_, err = s.AccountTotals(ctx, fam, period, nil)
	run("AccountTotals", err)
	_, _, err = s.Budgets(ctx, fam, models.BudgetFilter{}, page)
	run("Budgets", err)
	_, err = s.BudgetForMonth(ctx, fam, civil.Date("2026-01-15"))
	run("BudgetForMonth", err)
	_, _, err = s.BudgetLines(ctx, fam, models.BudgetLineFilter{}, page)
	run("BudgetLines", err)
	_, _, err = s.Categories(ctx, fam, page)
	run("Categories", err)
	_, err = s.Category(ctx, fam, b.food.ID)
	run("Category", err)
	_, err = s.Merchants(ctx, fam)
	run("Merchants", err)
	_, err = s.Tags(ctx, fam)
	run("Tags", err)
	_, _, err = s.ListRules(ctx, fam, models.RuleFilter{}, page)
	run("ListRules", err)
	_, err = s.Rule(ctx, fam, b.rule.ID)
	run("Rule", err)
	_, err = s.ActiveRules(ctx, fam)
	run("ActiveRules", err)
	_, _, err = s.RuleRuns(ctx, fam, models.RuleRunFilter{}, page)
	run("RuleRuns", err)
	chats, _, err := s.Chats(ctx, fam, user, page)
	run("Chats", err)
	for _, c := range chats {
		_, err = s.Chat(ctx, fam, user, c.ID)
		run("Chat", err)
		_, _, err = s.Messages(ctx, fam, user, c.ID, page)
		run("Messages", err)
		_, err = s.ChatProposals(ctx, fam, user, c.ID)
		run("ChatProposals", err)
	}
	_, _, err = s.Valuations(ctx, fam, models.ValuationFilter{}, page)
	run("Valuations", err)
	_, err = s.AccountValuations(ctx, fam, b.savings.ID)
	run("AccountValuations", err)
	_, _, err = s.Reconciliations(ctx, fam, b.f.Account.ID, page)
	run("Reconciliations", err)
	_, _, err = s.ExchangeRates(ctx, fam, models.RateFilter{}, page)
	run("ExchangeRates", err)
	_, _, err = s.FamilyExports(ctx, fam, page)
	run("FamilyExports", err)
	_, err = s.Webhooks(ctx, fam)
	run("Webhooks", err)
	_, err = s.TransactionFeed(ctx, fam, models.FeedPosition{}, 50)
	run("TransactionFeed", err)
	_, err = s.TransactionDeletions(ctx, fam, time.Time{})
	run("TransactionDeletions", err)
	_, _, err = s.Imports(ctx, fam, models.ImportFilter{}, page)
	run("Imports", err)
	_, err = s.ImportMappings(ctx, fam)
	run("ImportMappings", err)
	_, _, err = s.Connections(ctx, fam, page)
	run("Connections", err)
	_, _, err = s.Syncs(ctx, fam, models.SyncFilter{}, page)
	run("Syncs", err)
	_, err = s.Restores(ctx, fam, 10)
	run("Restores", err)
	_, err = s.FamilyResetCounts(ctx, fam)
	run("FamilyResetCounts", err)

	log.mu.Lock()
	stmts := log.stmts
	log.mu.Unlock()
	bad := map[string]bool{}
	checked := 0
	for _, q := range stmts {
		for _, m := range tableRef.FindAllStringSubmatch(q, -1) {
			table := strings.ToLower(m[1])
			if _, ok := instanceTables[table]; ok || schema[table] == nil {
				continue
			}
			if _, ok := userTables[table]; ok {
				continue
			}
			checked++
			if strings.Contains(q, "family_id") || known(q) {
				continue
			}
			bad[table+": "+q] = true
		}
	}
	var lines []string
	for l := range bad {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	for _, l := range lines {
		t.Errorf("statement without family_id on %s", l)
	}
	t.Logf("%d statements, %d references to tenant tables", len(stmts), checked)
}

func known(q string) bool {
	for sub := range unscopedStatements {
		if strings.Contains(q, sub) {
			return true
		}
	}
	return false
}
