package rest_test

import (
	"context"
	"testing"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// seedReports gives alpha a card, a category and a few transactions, with
// balances recalculated as the balance job would.
func seedReports(t *testing.T, e *apitest.Env) (card *models.Account, food *models.Category) {
	t.Helper()
	ctx := context.Background()
	fam := e.Alpha.Family.ID
	card = &models.Account{FamilyID: fam, Name: "Card", AccountType: "credit_card", Currency: "USD"}
	food = &models.Category{FamilyID: fam, Name: "Food", Color: "#112233", Icon: "utensils", Classification: "expense"}
	for _, err := range []error{e.Store.CreateAccount(ctx, card), e.Store.CreateCategory(ctx, food)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, tx := range []struct {
		acct   *models.Account
		date   civil.Date
		amount money.Amount
		cat    *models.Category
	}{
		{e.Alpha.Account, "2024-01-05", -3_000_0000, nil}, // salary
		{card, "2024-01-10", 120_0000, food},
		{e.Alpha.Account, "2024-02-03", 80_5000, food},
	} {
		row := &models.Transaction{FamilyID: fam, AccountID: tx.acct.ID, Date: tx.date, Amount: tx.amount, Currency: "USD", Name: "t"}
		if tx.cat != nil {
			row.CategoryID = &tx.cat.ID
		}
		if _, _, err := e.Store.CreateTransaction(ctx, row, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []*models.Account{e.Alpha.Account, card} {
		if err := e.Store.RecalculateBalance(ctx, fam, a.ID); err != nil {
			t.Fatal(err)
		}
	}
	return card, food
}

func TestBalanceSheetAndBalances(t *testing.T) {
	e := apitest.NewEnv(t)
	card, _ := seedReports(t, e)

	r := e.Do("GET", "/api/v1/balance_sheet", e.Alpha.ReadKey, nil)
	bs := r.WantJSON(t, 200)
	nw := bs["net_worth"].(map[string]any)
	if bs["currency"] != "USD" || bs["include_disabled"] != false || nw["amount"] != "2799.50" || nw["amount_cents"] != 279950.0 ||
		nw["formatted"] != "$2,799.50" || bs["liabilities"].(map[string]any)["amount"] != "120.00" {
		t.Errorf("balance sheet %s", r.Body)
	}
	if r := e.Do("GET", "/api/v1/balance_sheet?include_disabled=TRUE", e.Alpha.Key, nil); r.Status != 200 || r.JSON(t)["include_disabled"] != true {
		t.Errorf("include_disabled: %d %s", r.Status, r.Body)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/balance_sheet?include_disabled=maybe", e.Alpha.Key, nil), 400, "bad_request")
	apitest.WantError(t, e.Do("GET", "/api/v1/balance_sheet", "", nil), 401, "unauthorized")
	if other := e.Do("GET", "/api/v1/balance_sheet", e.Beta.Key, nil).JSON(t); other["net_worth"].(map[string]any)["amount_cents"] != 0.0 {
		t.Errorf("another family sees alpha's money: %v", other)
	}

	r = e.Do("GET", "/api/v1/balances?per_page=2", e.Alpha.Key, nil)
	list := r.WantJSON(t, 200)
	items := list["balances"].([]any)
	if len(items) != 2 || list["pagination"].(map[string]any)["total_count"] != 3.0 {
		t.Fatalf("balances %s", r.Body)
	}
	first := items[0].(map[string]any)
	if first["date"] != "2024-02-03" || first["balance"] != "$2,919.50" || first["start_balance_cents"] != 300000.0 ||
		first["cash_outflows_cents"] != 8050.0 || first["flows_factor"] != 1.0 || first["account"].(map[string]any)["name"] != "Checking" {
		t.Errorf("first day %v", first)
	}
	again := e.Do("GET", "/api/v1/balances?per_page=2", e.Alpha.Key, nil).JSON(t)["balances"].([]any)[0].(map[string]any)
	if again["id"] != first["id"] {
		t.Errorf("a day's id changed: %v, %v", first["id"], again["id"])
	}
	r = e.Do("GET", "/api/v1/balances?account_id="+card.ID.String()+"&currency=usd&start_date=2024-01-01&end_date=2024-01-31", e.Alpha.Key, nil)
	if items := r.JSON(t)["balances"].([]any); len(items) != 1 || items[0].(map[string]any)["flows_factor"] != -1.0 ||
		items[0].(map[string]any)["end_balance"] != "$120.00" {
		t.Errorf("card: %s", r.Body)
	}
	if r := e.Do("GET", "/api/v1/balances?account_id="+card.ID.String(), e.Beta.Key, nil); len(r.JSON(t)["balances"].([]any)) != 0 {
		t.Errorf("another family's account: %s", r.Body)
	}
	for _, q := range []string{"account_id=nope", "currency=XXX", "start_date=2024-02-30", "start_date=2024-02-01&end_date=2024-01-01", "page=0"} {
		apitest.WantError(t, e.Do("GET", "/api/v1/balances?"+q, e.Alpha.Key, nil), 400, "bad_request")
	}
}

func TestIncomeStatement(t *testing.T) {
	e := apitest.NewEnv(t)
	_, food := seedReports(t, e)
	r := e.Do("GET", "/api/v1/income_statement?start_date=2024-01-01&end_date=2024-03-31", e.Alpha.ReadKey, nil)
	st := r.WantJSON(t, 200)
	if st["income_cents"] != 300000.0 || st["spending"] != "$200.50" || st["net_cents"] != 279950.0 || st["spending_count"] != 2.0 {
		t.Errorf("totals %s", r.Body)
	}
	months := st["months"].([]any)
	if len(months) != 3 || months[1].(map[string]any)["spending_cents"] != 8050.0 || months[2].(map[string]any)["net_cents"] != 0.0 {
		t.Errorf("months %v", months)
	}
	cats := st["categories"].([]any)
	if len(cats) != 2 {
		t.Fatalf("categories %v", cats)
	}
	spending, income := cats[0].(map[string]any), cats[1].(map[string]any)
	if income["classification"] != "income" || income["category"] != nil || spending["category"].(map[string]any)["id"] != food.ID.String() ||
		len(spending["months"].([]any)) != 2 || spending["total_cents"] != 20050.0 {
		t.Errorf("categories %v", cats)
	}
	if r := e.Do("GET", "/api/v1/income_statement?start_date=2024-02-10", e.Alpha.Key, nil).JSON(t); r["end_date"] != "2024-02-29" || r["spending_cents"] != 0.0 {
		t.Errorf("from a start date: %v", r)
	}
	if r := e.Do("GET", "/api/v1/income_statement", e.Alpha.Key, nil); r.Status != 200 {
		t.Errorf("this month: %d %s", r.Status, r.Body)
	}
	if r := e.Do("GET", "/api/v1/income_statement?start_date=2024-01-01&end_date=2024-12-31", e.Beta.Key, nil).JSON(t); r["income_cents"] != 0.0 ||
		len(r["categories"].([]any)) != 0 {
		t.Errorf("another family: %v", r)
	}
	for _, q := range []string{"start_date=2024-03-01&end_date=2024-01-01", "start_date=2000-01-01&end_date=2024-01-01", "end_date=soon"} {
		apitest.WantError(t, e.Do("GET", "/api/v1/income_statement?"+q, e.Alpha.Key, nil), 400, "bad_request")
	}
}

func TestBudgetsAPI(t *testing.T) {
	e := apitest.NewEnv(t)
	_, food := seedReports(t, e)
	ctx := context.Background()
	fam := e.Alpha.Family.ID
	jan, err := e.Store.EnsureBudget(ctx, fam, "2024-01-01")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.EnsureBudget(ctx, fam, "2024-02-01"); err != nil {
		t.Fatal(err)
	}
	spending := money.Amount(500_0000)
	jan.BudgetedSpending = &spending
	if err := e.Store.UpdateBudget(ctx, &jan.Budget); err != nil {
		t.Fatal(err)
	}
	lines, _, err := e.Store.BudgetLines(ctx, fam, models.BudgetLineFilter{BudgetID: &jan.ID}, models.Page{Number: 1, Size: 10})
	if err != nil || len(lines) != 1 {
		t.Fatalf("lines %v %v", lines, err)
	}
	if err := e.Store.UpdateBudgetCategory(ctx, fam, lines[0].ID, 200_0000, true); err != nil {
		t.Fatal(err)
	}

	r := e.Do("GET", "/api/v1/budgets", e.Alpha.ReadKey, nil)
	budgets := r.WantJSON(t, 200)["budgets"].([]any)
	if len(budgets) != 2 || budgets[0].(map[string]any)["start_date"] != "2024-02-01" || budgets[0].(map[string]any)["budgeted_spending"] != nil {
		t.Fatalf("budgets %s", r.Body)
	}
	path := "/api/v1/budgets/" + jan.ID.String()
	b := e.Do("GET", path, e.Alpha.Key, nil).JSON(t)
	if b["name"] != "January 2024" || b["initialized"] != true || b["budgeted_spending_cents"] != 50000.0 || b["actual_spending_cents"] != 12000.0 ||
		b["actual_income"] != "$3,000.00" || b["allocated_spending_cents"] != 20000.0 || b["available_to_spend_cents"] != 38000.0 ||
		b["available_to_allocate_cents"] != 30000.0 || b["current"] != false {
		t.Errorf("january %v", b)
	}
	apitest.WantError(t, e.Do("GET", path, e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("GET", "/api/v1/budgets/not-a-uuid", e.Alpha.Key, nil), 404, "not_found")
	if r := e.Do("GET", "/api/v1/budgets?start_date=2024-02-01", e.Alpha.Key, nil); len(r.JSON(t)["budgets"].([]any)) != 1 {
		t.Errorf("from february: %s", r.Body)
	}

	r = e.Do("GET", "/api/v1/budget_categories?category_id="+food.ID.String(), e.Alpha.Key, nil)
	items := r.JSON(t)["budget_categories"].([]any)
	if len(items) != 2 {
		t.Fatalf("budget categories %s", r.Body)
	}
	feb, janLine := items[0].(map[string]any), items[1].(map[string]any)
	if janLine["budgeted_spending_cents"] != 20000.0 || janLine["actual_spending_cents"] != 12000.0 || janLine["available_to_spend_cents"] != 8000.0 ||
		janLine["rollover_enabled"] != true || janLine["category"].(map[string]any)["lucide_icon"] != "utensils" {
		t.Errorf("january's food %v", janLine)
	}
	// February carries January's 80 in, and spent 80.50 of it.
	if feb["rolled_over_amount_cents"] != 8000.0 || feb["available_to_spend_cents"] != -50.0 || feb["actual_spending"] != "$80.50" {
		t.Errorf("february's food %v", feb)
	}
	one := "/api/v1/budget_categories/" + janLine["id"].(string)
	if r := e.Do("GET", one, e.Alpha.Key, nil); r.Status != 200 || r.JSON(t)["budget_id"] != jan.ID.String() {
		t.Errorf("show: %d %s", r.Status, r.Body)
	}
	apitest.WantError(t, e.Do("GET", one, e.Beta.Key, nil), 404, "not_found")
	if r := e.Do("GET", "/api/v1/budget_categories?budget_id="+jan.ID.String(), e.Beta.Key, nil); len(r.JSON(t)["budget_categories"].([]any)) != 0 {
		t.Errorf("another family's budget: %s", r.Body)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/budget_categories?budget_id=x", e.Alpha.Key, nil), 400, "bad_request")
}
