package e2e_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"coffer/api/apitest"
	"coffer/jobs/assistant"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// One month's figures agree on every surface that shows them: the
// dashboard, the budget, the JSON income statement, the report's CSV and
// the assistant's (and MCP's) tool. A card payment paired as a transfer
// counts on none of them, on either database.
func TestFiguresAgree(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := context.Background()
	fam := e.Alpha.Family.ID
	today := civil.DateOf(time.Now())
	first := string(today[:8]) + "01"
	card := &models.Account{FamilyID: fam, Name: "Card", AccountType: "credit_card", Currency: "USD"}
	food := &models.Category{FamilyID: fam, Name: "Food", Color: "#112233", Icon: "utensils", Classification: "expense"}
	for _, err := range []error{e.Store.CreateAccount(ctx, card), e.Store.CreateCategory(ctx, food)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	add := func(a *models.Account, amount money.Amount, name string, cat *models.Category) *models.Transaction {
		row := &models.Transaction{FamilyID: fam, AccountID: a.ID, Date: civil.Date(first), Amount: amount, Currency: "USD", Name: name}
		if cat != nil {
			row.CategoryID = &cat.ID
		}
		if _, _, err := e.Store.CreateTransaction(ctx, row, nil); err != nil {
			t.Fatal(err)
		}
		return row
	}
	add(e.Alpha.Account, -3_000_0000, "Salary", nil)
	add(card, 92_4000, "Corner market", food)
	add(e.Alpha.Account, 10_0000, "Parking", nil)
	out := add(e.Alpha.Account, 50_0000, "Card payment", nil)
	in := add(card, -50_0000, "Payment thank you", nil)
	if _, err := e.Store.PairTransfer(ctx, fam, out.ID, in.ID); err != nil {
		t.Fatal(err)
	}
	const income, spending = "$3,000.00", "$102.40"

	st := e.Do("GET", "/api/v1/income_statement?start_date="+first+"&end_date="+string(today), e.Alpha.ReadKey, nil).WantJSON(t, 200)
	if st["income"] != income || st["spending"] != spending {
		t.Errorf("JSON income statement: %v %v", st["income"], st["spending"])
	}
	csv := string(b.Get("/reports/income_statement.csv?from=" + first + "&to=" + string(today)).Body)
	for _, want := range []string{"total_income,Total income,,USD,3000.00,3000.00\n", "total_spending,Total spending,,USD,102.40,102.40\n"} {
		if !strings.Contains(csv, want) {
			t.Errorf("CSV lacks %q:\n%s", want, csv)
		}
	}
	home := string(b.Get("/").Body)
	if !strings.Contains(home, `<td class="num in">`+income+`</td>`) || !strings.Contains(home, `<td class="num">`+spending+`</td>`) {
		t.Errorf("dashboard month:\n%s", home)
	}
	if budget := string(b.Get("/budgets").Body); !strings.Contains(budget, `<h2>Spent</h2><p class="figure">`+spending+`</p>`) {
		t.Errorf("budget:\n%s", budget)
	}
	raw, err := assistant.Call(ctx, e.Store, assistant.Caller{FamilyID: fam, UserID: e.Alpha.User.ID, Role: models.RoleAdmin},
		"get_income_statement", `{"start_date": "`+first+`", "end_date": "`+string(today)+`"}`)
	var tool struct {
		Income, Expense struct{ Total string }
	}
	if err != nil || json.Unmarshal(raw, &tool) != nil || tool.Income.Total != income || tool.Expense.Total != spending {
		t.Errorf("the assistant's income statement: %s %v", raw, err)
	}
}
