package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"coffer/api/apitest"
	"coffer/jobs/assistant"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// figures is one month's totals as every surface shows them, by name:
// "statement income", "budget Food", "assistant expense Food", ...
type figures map[string]string

// readFigures reads the month's figures from the JSON income statement
// (totals and by category), the budget screen (spent, and spent by
// category), the cash flow (its CSV's line of the month), the balance
// sheet (net worth), the dashboard (the month's income and spending), and the
// assistant's (and MCP's: the same tools) income statement and
// transaction search totals.
func readFigures(t *testing.T, e *apitest.Env, b *apitest.Browser, first, last string) figures {
	t.Helper()
	ctx := context.Background()
	f := figures{}
	st := e.Do("GET", "/api/v1/income_statement?start_date="+first+"&end_date="+last, e.Alpha.ReadKey, nil).WantJSON(t, 200)
	f["statement income"], f["statement spending"] = fmt.Sprint(st["income"]), fmt.Sprint(st["spending"])
	for _, c := range st["categories"].([]any) {
		m := c.(map[string]any)
		name := "none"
		if cat, ok := m["category"].(map[string]any); ok {
			name = cat["name"].(string)
		}
		f["statement "+m["classification"].(string)+" "+name] = fmt.Sprint(m["total"])
	}
	budget := string(b.Get("/budgets").Body)
	if m := regexp.MustCompile(`<h2>Spent</h2><p class="figure">([^<]+)</p>`).FindStringSubmatch(budget); m != nil {
		f["budget spent"] = m[1]
	}
	for _, m := range regexp.MustCompile(`(?s)<label for="amount_[^"]+">([^<]+)</label>.*?<td data-label="Spent">([^<]+)<`).FindAllStringSubmatch(budget, -1) {
		f["budget "+m[1]] = m[2]
	}
	flow := strings.Split(strings.TrimSpace(string(b.Get("/reports/cash_flow.csv?from="+first+"&to="+last).Body)), "\n")
	f["cash flow"] = flow[len(flow)-1] // the month's line: income, spending, net
	// The balance as the worker's recalculation leaves it (the queue's
	// debounce is another test's business).
	if err := e.Store.RecalculateBalance(ctx, e.Alpha.Family.ID, e.Alpha.Account.ID); err != nil {
		t.Fatal(err)
	}
	sheet := e.Do("GET", "/api/v1/balance_sheet", e.Alpha.ReadKey, nil).WantJSON(t, 200)
	f["balance sheet net worth"] = fmt.Sprint(sheet["net_worth"].(map[string]any)["amount"])
	home := string(b.Get("/").Body)
	// The note of what the figures leave out: a split parent is not
	// "marked as excluded", its parts are counted instead.
	f["dashboard left out"] = regexp.MustCompile(`Not counted in these figures:[^<]*`).FindString(home)
	for _, m := range regexp.MustCompile(`<tr><th scope="row">([^<]+)</th><td class="num[^"]*">([^<]+)</td></tr>`).FindAllStringSubmatch(home, -1) {
		f["dashboard "+m[1]] = m[2]
	}
	caller := assistant.Caller{FamilyID: e.Alpha.Family.ID, UserID: e.Alpha.User.ID, Role: models.RoleAdmin}
	raw, err := assistant.Call(ctx, e.Store, caller, "get_income_statement", `{"start_date": "`+first+`", "end_date": "`+last+`"}`)
	var tool struct {
		Income, Expense struct {
			Total      string
			ByCategory []struct{ Name, Total string } `json:"by_category"`
		}
	}
	if err != nil || json.Unmarshal(raw, &tool) != nil {
		t.Fatalf("the assistant's income statement: %s %v", raw, err)
	}
	f["assistant income"], f["assistant expense"] = tool.Income.Total, tool.Expense.Total
	for _, c := range tool.Expense.ByCategory {
		f["assistant expense "+c.Name] = c.Total
	}
	raw, err = assistant.Call(ctx, e.Store, caller, "get_transactions", `{"start_date": "`+first+`", "end_date": "`+last+`", "page_size": 100}`)
	var list struct {
		Income       string `json:"total_income"`
		Expenses     string `json:"total_expenses"`
		Transactions []struct {
			Amount string
		}
	}
	if err != nil || json.Unmarshal(raw, &list) != nil {
		t.Fatalf("the assistant's transactions: %s %v", raw, err)
	}
	f["assistant list income"], f["assistant list expenses"] = list.Income, list.Expenses
	return f
}

// TestFiguresAgreeAfterSplit: splitting a transaction into parts that keep
// its category leaves every figure (the budget, the JSON income statement,
// the cash flow, the balance sheet, the dashboard, the assistant's and
// MCP's tools) as it was; moving a part
// to another category moves exactly that amount between the two; an
// excluded part leaves exactly its amount out; removing the split brings
// back the figures of before. On either database.
func TestFiguresAgreeAfterSplit(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := context.Background()
	fam := e.Alpha.Family.ID
	today := civil.DateOf(time.Now())
	first := string(today[:8]) + "01"
	food := &models.Category{FamilyID: fam, Name: "Food", Color: "#112233", Icon: "utensils", Classification: "expense"}
	home := &models.Category{FamilyID: fam, Name: "Household", Color: "#223344", Icon: "home", Classification: "expense"}
	for _, c := range []*models.Category{food, home} {
		if err := e.Store.CreateCategory(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	add := func(amount money.Amount, name string, cat *models.Category) *models.Transaction {
		row := &models.Transaction{FamilyID: fam, AccountID: e.Alpha.Account.ID, Date: civil.Date(first), Amount: amount, Currency: "USD", Name: name}
		if cat != nil {
			row.CategoryID = &cat.ID
		}
		if _, _, err := e.Store.CreateTransaction(ctx, row, nil); err != nil {
			t.Fatal(err)
		}
		return row
	}
	add(-3_000_0000, "Salary", nil)
	add(25_5000, "Bakery", food)
	add(14_0000, "Soap", home)
	warehouse := add(180_0000, "Warehouse store", food)
	before := readFigures(t, e, b, first, string(today))
	if before["cash flow"] != string(today[:7])+",USD,3000.00,219.50,2780.50" || before["balance sheet net worth"] != "2780.50" {
		t.Fatalf("cash flow and net worth before the split: %v", before)
	}
	if before["statement spending"] != "$219.50" || before["budget Food"] != "$205.50" || before["assistant expense Food"] != "$205.50" ||
		before["dashboard Spending"] != "$219.50" || before["budget spent"] != "$219.50" || before["assistant list expenses"] != "$219.50" {
		t.Fatalf("figures before the split: %v", before)
	}

	path := "/api/v1/transactions/" + warehouse.ID.String() + "/split"
	cases := []struct {
		name  string
		parts []map[string]any
		moved map[string]string // figures that change, to what; the rest stay
	}{
		{"parts keep the category", []map[string]any{
			{"name": "Groceries", "amount": "120.00", "category_id": food.ID.String()},
			{"name": "Also groceries", "amount": "60.00", "category_id": food.ID.String()},
		}, nil},
		{"a part moves to another category", []map[string]any{
			{"name": "Groceries", "amount": "120.00", "category_id": food.ID.String()},
			{"name": "Household goods", "amount": "60.00", "category_id": home.ID.String()},
		}, map[string]string{
			"statement expense Food": "$145.50", "statement expense Household": "$74.00",
			"budget Food": "$145.50", "budget Household": "$74.00",
			"assistant expense Food": "$145.50", "assistant expense Household": "$74.00",
		}},
		{"an excluded part", []map[string]any{
			{"name": "Groceries", "amount": "120.00", "category_id": food.ID.String()},
			{"name": "Returned", "amount": "60.00", "category_id": food.ID.String(), "excluded": true},
		}, map[string]string{
			"statement spending": "$159.50", "budget spent": "$159.50", "assistant expense": "$159.50", "assistant list expenses": "$159.50",
			"dashboard Spending": "$159.50", "dashboard Saved": "$2,840.50",
			"dashboard left out":     "Not counted in these figures: 1 transaction you marked as excluded.",
			"statement expense Food": "$145.50", "budget Food": "$145.50", "assistant expense Food": "$145.50",
			"cash flow": string(today[:7]) + ",USD,3000.00,159.50,2840.50",
			// An excluded row moves no balance, in coffer as a whole.
			"balance sheet net worth": "2840.50",
		}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method := "PATCH"
			if i == 0 {
				method = "POST"
			}
			status := map[string]int{"POST": 201, "PATCH": 200}[method]
			e.Do(method, path, e.Alpha.Key, map[string]any{"split": map[string]any{"splits": c.parts}}).WantJSON(t, status)
			after := readFigures(t, e, b, first, string(today))
			want := figures{}
			for k, v := range before {
				want[k] = v
			}
			for k, v := range c.moved {
				want[k] = v
			}
			if diff := diffFigures(want, after); diff != "" {
				t.Errorf("figures after the split:\n%s", diff)
			}
		})
	}
	e.Do("DELETE", path, e.Alpha.Key, nil).WantJSON(t, 200)
	if diff := diffFigures(before, readFigures(t, e, b, first, string(today))); diff != "" {
		t.Errorf("figures after the split was removed:\n%s", diff)
	}
}

// diffFigures names every figure that differs, "" when none does.
func diffFigures(want, got figures) string {
	var out []string
	for k, v := range want {
		if got[k] != v {
			out = append(out, fmt.Sprintf("%s: %q, want %q", k, got[k], v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("%s: %q, not there before", k, v))
		}
	}
	return strings.Join(out, "\n")
}
