package models_test

import (
	"context"
	"errors"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/importfile"
	"coffer/models/modelstest"
)

func sureFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("importfile/testdata/sure/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// familyRows counts the rows of each table a restore writes that belong
// to the family.
func familyRows(t *testing.T, s *models.Store, familyID uuid.UUID) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"accounts", "valuations", "categories", "tags", "merchants", "transactions", "transaction_tags",
		"transfers", "budgets", "budget_categories", "rules", "rule_conditions", "rule_actions"} {
		n, err := s.DB().NewSelect().Table(table).Where("family_id = ?", familyID).Count(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out[table] = int(n)
	}
	return out
}

func TestRestoreSureFixture(t *testing.T) {
	s := modelstest.NewStore(t)
	alpha := modelstest.NewFamily(t, s, "alpha")
	beta := modelstest.NewFamily(t, s, "beta")
	ctx := context.Background()
	before, betaBefore := familyRows(t, s, alpha.Family.ID), familyRows(t, s, beta.Family.ID)

	sum, err := s.RestoreSure(ctx, alpha.Family.ID, sureFixture(t, "export.zip"))
	if err != nil {
		t.Fatal(err)
	}
	wantCreated := map[string]int{"accounts": 2, "categories": 3, "tags": 1, "merchants": 1, "transactions": 8, "taggings": 2,
		"transfers": 1, "valuations": 2, "budgets": 1, "budget_categories": 1, "rules": 1}
	for k, n := range wantCreated {
		if sum.Created[k] != n {
			t.Errorf("created %s = %d, want %d (%v)", k, sum.Created[k], n, sum.Created)
		}
	}
	if sum.Skipped["balances"] != 2 {
		t.Errorf("skipped = %v", sum.Skipped)
	}
	after := familyRows(t, s, alpha.Family.ID)
	grew := map[string]int{"accounts": 2, "valuations": 2, "categories": 3, "tags": 1, "merchants": 1, "transactions": 8,
		"transaction_tags": 2, "transfers": 1, "budgets": 1, "budget_categories": 1, "rules": 1, "rule_conditions": 1, "rule_actions": 1}
	for k, n := range grew {
		if after[k]-before[k] != n {
			t.Errorf("%s: %d new rows, want %d", k, after[k]-before[k], n)
		}
	}
	if got := familyRows(t, s, beta.Family.ID); !equalCounts(got, betaBefore) {
		t.Errorf("beta's rows changed: %v, were %v", got, betaBefore)
	}

	// The links, through the new ids.
	db := s.DB()
	var cats []models.Category
	must(t, db.NewSelect().Model(&cats).Where("family_id = ?", alpha.Family.ID).Scan(ctx))
	byName := map[string]models.Category{}
	for _, c := range cats {
		byName[c.Name] = c
	}
	food, groc := byName["Food & Drink"], byName["Groceries"]
	if groc.ParentID == nil || *groc.ParentID != food.ID || byName["Salary"].Classification != "income" || groc.Icon != "shopping-basket" {
		t.Errorf("categories: %+v", byName)
	}
	var accounts []models.Account
	must(t, db.NewSelect().Model(&accounts).Where("family_id = ?", alpha.Family.ID).Where("id <> ?", alpha.Account.ID).
		OrderExpr("name").Scan(ctx))
	if len(accounts) != 2 || accounts[0].Name != "Checking" || accounts[0].AccountType != "depository" ||
		accounts[1].AccountType != "credit_card" || accounts[0].InstitutionName == nil || accounts[0].OpeningBalance.String() != "1000.0000" {
		t.Fatalf("accounts: %+v", accounts)
	}
	checking, visa := accounts[0], accounts[1]
	var txs []models.Transaction
	must(t, db.NewSelect().Model(&txs).Where("family_id = ?", alpha.Family.ID).OrderExpr("date, amount").Scan(ctx))
	byTxName := map[string]models.Transaction{}
	for _, tx := range txs {
		byTxName[tx.Name] = tx
		if tx.AccountID != checking.ID && tx.AccountID != visa.ID {
			t.Errorf("%s is in account %s", tx.Name, tx.AccountID)
		}
	}
	market := byTxName["Corner Market #12"]
	var merchant models.Merchant
	must(t, db.NewSelect().Model(&merchant).Where("family_id = ?", alpha.Family.ID).Where("name = ?", "Corner Market").Scan(ctx))
	if market.CategoryID == nil || *market.CategoryID != groc.ID || market.MerchantID == nil || *market.MerchantID != merchant.ID ||
		market.Notes == nil || *market.Notes != "weekly shop" || market.Amount.String() != "120.5000" || market.AccountID != checking.ID {
		t.Errorf("market: %+v", market)
	}
	costco, parts := byTxName["Costco"], []models.Transaction{byTxName["Costco groceries"], byTxName["Costco snacks"]}
	if !costco.Excluded || costco.ExcludedReason == nil || *costco.ExcludedReason != models.ExcludedSplit {
		t.Errorf("split parent: %+v", costco)
	}
	for _, p := range parts {
		if p.SplitParentID == nil || *p.SplitParentID != costco.ID || p.Date != costco.Date {
			t.Errorf("part %s: %+v", p.Name, p)
		}
	}
	var tagged []models.TransactionTag
	must(t, db.NewSelect().Model(&tagged).Where("family_id = ?", alpha.Family.ID).Scan(ctx))
	got := []string{}
	for _, tt := range tagged {
		for _, tx := range txs {
			if tx.ID == tt.TransactionID {
				got = append(got, tx.Name)
			}
		}
	}
	sort.Strings(got)
	if strings.Join(got, "|") != "Corner Market #12|Costco snacks" {
		t.Errorf("tagged: %v", got)
	}
	var tr models.Transfer
	must(t, db.NewSelect().Model(&tr).Where("tr.family_id = ?", alpha.Family.ID).Scan(ctx))
	if tr.InflowTransactionID != byTxName["Payment from Checking"].ID || tr.OutflowTransactionID != byTxName["Payment to Visa"].ID {
		t.Errorf("transfer: %+v", tr)
	}
	var bc models.BudgetCategory
	must(t, db.NewSelect().Model(&bc).Where("family_id = ?", alpha.Family.ID).Scan(ctx))
	if bc.CategoryID != food.ID || bc.BudgetedSpending.String() != "400.0000" {
		t.Errorf("budget category: %+v", bc)
	}
	rules, _, err := s.ListRules(ctx, alpha.Family.ID, models.RuleFilter{}, models.Page{Number: 1, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 || *rules[0].Name != "Corner Market is groceries" || len(rules[0].Conditions) != 1 ||
		*rules[0].Conditions[0].Value != merchant.ID.String() || *rules[0].Actions[0].Value != groc.ID.String() {
		t.Errorf("rules: %+v", rules)
	}

	// The balance the file states, once derived here.
	must(t, s.RecalculateBalance(ctx, alpha.Family.ID, checking.ID))
	a, err := s.Account(ctx, alpha.Family.ID, checking.ID)
	must(t, err)
	if a.Balance.String() != "3589.5000" {
		t.Errorf("checking balance = %s, want 3589.5", a.Balance)
	}

	// Again: the same names and month are matched, the ledger doubles.
	sum, err = s.RestoreSure(ctx, alpha.Family.ID, sureFixture(t, "all.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Matched["categories"] != 3 || sum.Matched["tags"] != 1 || sum.Matched["budgets"] != 1 || sum.Created["accounts"] != 2 {
		t.Errorf("second restore: %+v", sum)
	}
}

func equalCounts(a, b map[string]int) bool {
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return len(a) == len(b)
}

// TestRestoreSureAllOrNothing: a file whose last record cannot be
// written (a valuation on a day the account is already valued) writes
// nothing, and says which line.
func TestRestoreSureAllOrNothing(t *testing.T) {
	s := modelstest.NewStore(t)
	alpha := modelstest.NewFamily(t, s, "alpha")
	ctx := context.Background()
	before := familyRows(t, s, alpha.Family.ID)
	nd := string(sureFixture(t, "all.ndjson"))
	twice := `{"type":"Valuation","data":{"id":"7b000000-0000-4000-8000-0000000000aa","account_id":"0a1f6c2e-2222-4a8b-9c01-000000000002","date":"2024-01-31","amount":"10.0","currency":"USD","name":"Valuation","kind":"reconciliation"}}`
	file := nd + "\n" + twice + "\n" + strings.Replace(twice, "aa\"", "ab\"", 1)
	_, err := s.RestoreSure(ctx, alpha.Family.ID, []byte(file))
	var se *importfile.SureError
	if !errors.As(err, &se) || se.Line != 23 || !strings.Contains(se.Reason, "valued twice") {
		t.Fatalf("err = %v", err)
	}
	if got := familyRows(t, s, alpha.Family.ID); !equalCounts(got, before) {
		t.Errorf("rows after a failed restore: %v, were %v", got, before)
	}
}
