package assistant_test

import (
	"coffer/models/money"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"coffer/jobs/assistant"
	"coffer/models"
	"coffer/models/modelstest"
)

// TestToolTable: names are unique, every schema is an object schema, and
// the write tools are exactly the three the reference offers.
func TestToolTable(t *testing.T) {
	seen := map[string]bool{}
	var writes []string
	for _, tool := range assistant.Tools() {
		if seen[tool.Name] || tool.Description == "" || tool.Run == nil || tool.Schema["type"] != "object" {
			t.Errorf("tool %q: duplicate or incomplete", tool.Name)
		}
		seen[tool.Name] = true
		if _, err := json.Marshal(tool.Schema); err != nil {
			t.Errorf("tool %q: schema: %v", tool.Name, err)
		}
		if tool.Write {
			writes = append(writes, tool.Name)
		}
	}
	if got, _ := json.Marshal(writes); string(got) != `["update_transaction","create_category","create_tag"]` {
		t.Fatalf("write tools %s", got)
	}
	if n := len(assistant.Offered(assistant.Caller{})); n != 9 {
		t.Fatalf("a caller without writes is offered %d tools", n)
	}
}

// TestToolsReadTheLedger runs the read tools on a small ledger: money is
// exact as the API shows it, and another family's records stay out.
func TestToolsReadTheLedger(t *testing.T) {
	store := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "tools")
	other := modelstest.NewFamily(t, store, "tools-other")
	for _, tx := range []models.Transaction{
		{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: "2026-10-02", Amount: -25_000_000, Currency: "USD", Name: "Salary"},
		{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: "2026-10-05", Amount: 123_4500, Currency: "USD", Name: "Coffee beans"},
		{FamilyID: other.Family.ID, AccountID: other.Account.ID, Date: "2026-10-05", Amount: 99_0000, Currency: "USD", Name: "Secret"},
	} {
		if _, _, err := store.CreateTransaction(ctx, &tx, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, fam := range []*modelstest.FamilyFixture{f, other} {
		if err := store.RecalculateBalance(ctx, fam.Family.ID, fam.Account.ID); err != nil {
			t.Fatal(err)
		}
	}
	c := assistant.Caller{FamilyID: f.Family.ID, UserID: f.User.ID, Role: models.RoleAdmin}
	call := func(name, args string) map[string]any { return callTool(t, store, c, name, args) }
	acc := call("get_accounts", "")["accounts"].([]any)
	if len(acc) != 1 || acc[0].(map[string]any)["balance"] != "$2,376.55" {
		t.Fatalf("accounts %v", acc)
	}
	txs := call("get_transactions", `{"search": "coffee"}`)
	if row := txs["transactions"].([]any)[0].(map[string]any); txs["total_results"] != 1.0 || row["amount"] != "123.45" || row["formatted_amount"] != "$123.45" {
		t.Fatalf("transactions %v", txs)
	}
	if got := call("get_transactions", `{"types": ["income"], "accounts": ["checking"]}`); got["total_results"] != 1.0 {
		t.Fatalf("income %v", got)
	}
	if got := call("get_transactions", `{"amount": "123.45", "amount_operator": "equal"}`); got["total_results"] != 1.0 {
		t.Fatalf("by amount %v", got)
	}
	if got := call("get_transactions", `{"accounts": ["Nope"]}`); got["error"] != "not_found" {
		t.Fatalf("unknown account name %v", got)
	}
	is := call("get_income_statement", `{"start_date": "2026-10-01", "end_date": "2026-10-31"}`)
	if is["income"].(map[string]any)["total"] != "$2,500.00" || is["expense"].(map[string]any)["total"] != "$123.45" || is["net"] != "$2,376.55" {
		t.Fatalf("income statement %v", is)
	}
	if got := call("get_income_statement", `{"start_date": "2026-10-31", "end_date": "2026-10-01"}`); got["error"] != "validation_failed" {
		t.Fatalf("reversed period %v", got)
	}
	bs := call("get_balance_sheet", "{}")
	if bs["net_worth"] != "$2,376.55" || bs["assets"] != "$2,376.55" {
		t.Fatalf("balance sheet %v", bs)
	}
}

// An account in another currency: get_accounts and get_balance_sheet give
// its own balance and the household's figure at the latest rate, with the
// rate's day; without a rate it is marked not converted and left out.
func TestToolsConvertForeignAccounts(t *testing.T) {
	store := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "tools-fx")
	euro := &models.Account{FamilyID: f.Family.ID, Name: "Euro savings", AccountType: "depository", Currency: "EUR", OpeningBalance: 100_0000}
	yen := &models.Account{FamilyID: f.Family.ID, Name: "Yen", AccountType: "depository", Currency: "JPY", OpeningBalance: 5000_0000}
	for _, a := range []*models.Account{euro, yen} {
		if err := store.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := store.RecalculateBalance(ctx, f.Family.ID, a.ID); err != nil {
			t.Fatal(err)
		}
	}
	rate, err := money.ParseRate("1.25")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetRate(ctx, f.Family.ID, &models.ExchangeRate{FromCurrency: "EUR", ToCurrency: "USD", Date: "2026-01-02", Rate: rate}); err != nil {
		t.Fatal(err)
	}
	c := assistant.Caller{FamilyID: f.Family.ID, UserID: f.User.ID, Role: models.RoleAdmin}
	raw, err := assistant.Call(ctx, store, c, "get_accounts", "")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Accounts []map[string]any `json:"accounts"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	byName := map[string]map[string]any{}
	for _, a := range got.Accounts {
		byName[a["name"].(string)] = a
	}
	if e := byName["Euro savings"]; e["balance"] != "€100.00" || e["converted_balance"] != "$125.00" || e["rate_date"] != "2026-01-02" {
		t.Fatalf("euro account: %v", e)
	}
	if y := byName["Yen"]; y["not_converted"] != true || y["converted_balance"] != nil {
		t.Fatalf("yen account: %v", y)
	}
	raw, err = assistant.Call(ctx, store, c, "get_balance_sheet", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"converted_balance":"$125.00"`) || !strings.Contains(string(raw), `"accounts_in_other_currencies":1`) {
		t.Fatalf("balance sheet: %s", raw)
	}
}

// FuzzToolCall throws any tool name and arguments at the tool table: the
// answer is always a JSON result for the model (never a service error),
// and a caller without write permission never changes a thing.
func FuzzToolCall(f *testing.F) {
	store := modelstest.NewStore(f)
	fam := modelstest.NewFamily(f, store, "fuzz")
	ctx := context.Background()
	tx := &models.Transaction{FamilyID: fam.Family.ID, AccountID: fam.Account.ID, Date: "2026-10-02", Amount: 10_000, Currency: "USD", Name: "x"}
	if _, _, err := store.CreateTransaction(ctx, tx, nil); err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][2]string{
		{"get_accounts", ""}, {"get_transactions", `{"page": 2, "page_size": 1000}`},
		{"get_transactions", `{"start_date": "2026-02-30", "amount": "1e5", "amount_operator": "less"}`},
		{"get_transactions", `{"account_ids": ["` + fam.Account.ID.String() + `"], "tags": ["a"]}`},
		{"get_income_statement", `{"start_date": "0000-01-01", "end_date": "9999-12-31"}`},
		{"update_transaction", `{"id": "` + tx.ID.String() + `", "amount": -5}`}, {"create_tag", `{"name": "x"}`},
		{"get_categories", "[]"}, {"nope", "{"}, {"get_merchants", `{"a": {"b": [1, 2, null]}}`},
		{"get_transactions", `{"order": "asc", "sort_by": "amount", "types": ["transfer", "income"], "statuses": ["pending"], "categories": ["Uncategorized"]}`},
		{"get_income_statement", `{"start_date": "2026-01-01", "end_date": "2026-03-31", "group_by": "month", "compare_previous_period": true, "account_ids": ["` + fam.Account.ID.String() + `"]}`},
		{"get_income_statement", `{"start_date": "0001-01-01", "end_date": "0001-01-01", "compare_previous_period": true}`},
	} {
		f.Add(seed[0], seed[1])
	}
	c := assistant.Caller{FamilyID: fam.Family.ID, UserID: fam.User.ID, Role: models.RoleMember}
	f.Fuzz(func(t *testing.T, name, args string) {
		raw, err := assistant.Call(ctx, store, c, name, args)
		if err != nil {
			t.Fatalf("%s %q: service error %v", name, args, err)
		}
		if !json.Valid(raw) {
			t.Fatalf("%s %q: result is not JSON: %s", name, args, raw)
		}
		got, err := store.Transaction(ctx, fam.Family.ID, tx.ID)
		if err != nil || got.Name != "x" || got.Amount != 10_000 {
			t.Fatalf("%s %q changed the ledger: %v %v", name, args, got, err)
		}
		if tags, _ := store.Tags(ctx, fam.Family.ID); len(tags) != 0 {
			t.Fatalf("%s %q created a tag", name, args)
		}
	})
}

// paramsLedger is a month of a small household's money for the tools'
// parameters: categories with a subcategory, a merchant, a tag, a
// pending row, a refund, a transfer to a second account and a row of the
// month before; and a neighbour with a row of its own.
type paramsLedger struct {
	store   *models.Store
	caller  assistant.Caller
	savings *models.Account
	other   *modelstest.FamilyFixture
}

func newParamsLedger(t *testing.T) *paramsLedger {
	t.Helper()
	store := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "params")
	other := modelstest.NewFamily(t, store, "params-other")
	savings := &models.Account{FamilyID: f.Family.ID, Name: "Savings", AccountType: "depository", Currency: "USD"}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(store.CreateAccount(ctx, savings))
	food := &models.Category{FamilyID: f.Family.ID, Name: "Food", Classification: "expense"}
	must(store.CreateCategory(ctx, food))
	groceries := &models.Category{FamilyID: f.Family.ID, Name: "Groceries", Classification: "expense", ParentID: &food.ID}
	must(store.CreateCategory(ctx, groceries))
	salary := &models.Category{FamilyID: f.Family.ID, Name: "Salary", Classification: "income"}
	must(store.CreateCategory(ctx, salary))
	shop := &models.Merchant{FamilyID: f.Family.ID, Name: "Corner Shop"}
	must(store.CreateMerchant(ctx, shop))
	holiday := &models.Tag{FamilyID: f.Family.ID, Name: "Holiday"}
	must(store.CreateTag(ctx, holiday))
	for _, tx := range []struct {
		t    models.Transaction
		tags []uuid.UUID
	}{
		{t: models.Transaction{Date: "2026-10-01", Amount: -30_000_000, Name: "Salary", CategoryID: &salary.ID}},
		{t: models.Transaction{Date: "2026-10-03", Amount: 802_500, Name: "Groceries run", CategoryID: &groceries.ID, MerchantID: &shop.ID}},
		{t: models.Transaction{Date: "2026-10-05", Amount: 455_000, Name: "Dinner out", CategoryID: &food.ID}, tags: []uuid.UUID{holiday.ID}},
		{t: models.Transaction{Date: "2026-10-07", Amount: 41_234, Name: "Coffee", Pending: true}},
		{t: models.Transaction{Date: "2026-10-09", Amount: -100_000, Name: "Refund dinner", CategoryID: &food.ID}},
		{t: models.Transaction{Date: "2026-09-15", Amount: 12_000_000, Name: "September rent"}},
	} {
		tx.t.FamilyID, tx.t.AccountID, tx.t.Currency = f.Family.ID, f.Account.ID, "USD"
		_, _, err := store.CreateTransaction(ctx, &tx.t, tx.tags)
		must(err)
	}
	_, err := store.CreateTransfer(ctx, f.Family.ID, models.NewTransfer{FromAccountID: f.Account.ID, ToAccountID: savings.ID,
		Amount: 5_000_000, Date: "2026-10-10"})
	must(err)
	_, _, err = store.CreateTransaction(ctx, &models.Transaction{FamilyID: other.Family.ID, AccountID: other.Account.ID,
		Date: "2026-10-05", Amount: 455_000, Currency: "USD", Name: "Neighbour's dinner"}, nil)
	must(err)
	return &paramsLedger{store: store, savings: savings, other: other,
		caller: assistant.Caller{FamilyID: f.Family.ID, UserID: f.User.ID, Role: models.RoleMember}}
}

func (l *paramsLedger) call(t *testing.T, name, args string) map[string]any {
	t.Helper()
	raw, err := assistant.Call(context.Background(), l.store, l.caller, name, args)
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: %s", name, args, raw)
	}
	return out
}

// TestGetTransactionsParameters: every parameter of get_transactions, as
// the reference names and means it, against the real database.
func TestGetTransactionsParameters(t *testing.T) {
	l := newParamsLedger(t)
	for _, tc := range []struct {
		name, args string
		want       string // the rows' names in order; "" with total
		total      int
	}{
		{"no filter", `{}`, "", 8},
		{"page and page_size", `{"types": ["expense"], "page": 2, "page_size": 2}`, "Groceries run,September rent", 4},
		{"order asc", `{"types": ["expense"], "order": "asc"}`, "September rent,Groceries run,Dinner out,Coffee", 4},
		{"order desc", `{"types": ["expense"], "order": "desc"}`, "Coffee,Dinner out,Groceries run,September rent", 4},
		{"sort_by amount", `{"types": ["expense"], "sort_by": "amount"}`, "September rent,Groceries run,Dinner out,Coffee", 4},
		{"sort_by amount asc", `{"types": ["expense"], "sort_by": "amount", "order": "asc"}`, "Coffee,Dinner out,Groceries run,September rent", 4},
		{"sort_by date asc", `{"types": ["income"], "sort_by": "date", "order": "asc"}`, "Salary,Refund dinner", 2},
		{"search in merchant", `{"search": "corner"}`, "Groceries run", 1},
		{"search in name", `{"search": "DINNER"}`, "Refund dinner,Dinner out", 2},
		{"amount equal", `{"amount": "45.50", "amount_operator": "equal"}`, "Dinner out", 1},
		{"amount less", `{"amount": "20", "amount_operator": "less"}`, "Refund dinner,Coffee", 2},
		{"amount greater", `{"amount": "100", "amount_operator": "greater", "types": ["expense"]}`, "September rent", 1},
		{"amount four places", `{"amount": "4.1234", "amount_operator": "equal"}`, "Coffee", 1},
		{"start_date and end_date", `{"start_date": "2026-10-04", "end_date": "2026-10-07"}`, "Coffee,Dinner out", 2},
		{"start_date only", `{"start_date": "2026-10-09", "types": ["income", "expense"]}`, "Refund dinner", 1},
		{"types income", `{"types": ["income"]}`, "Refund dinner,Salary", 2},
		{"types transfer", `{"types": ["transfer"]}`, "", 2},
		{"types income and expense", `{"types": ["income", "expense"]}`, "", 6},
		{"types all three", `{"types": ["income", "expense", "transfer"]}`, "", 8},
		{"statuses pending", `{"statuses": ["pending"]}`, "Coffee", 1},
		{"statuses confirmed", `{"statuses": ["confirmed"]}`, "", 7},
		{"statuses both", `{"statuses": ["pending", "confirmed"]}`, "", 8},
		{"account_ids", fmt.Sprintf(`{"account_ids": [%q]}`, l.savings.ID), "Transfer from Checking", 1},
		{"accounts", `{"accounts": ["savings"]}`, "Transfer from Checking", 1},
		{"categories", `{"categories": ["Food"]}`, "Refund dinner,Dinner out", 2},
		{"categories Uncategorized", `{"categories": ["Uncategorized"], "types": ["expense"]}`, "Coffee,September rent", 2},
		{"categories and Uncategorized", `{"categories": ["Groceries", "uncategorized"], "types": ["expense"]}`, "Coffee,Groceries run,September rent", 3},
		{"merchants", `{"merchants": ["Corner Shop"]}`, "Groceries run", 1},
		{"tags", `{"tags": ["holiday"]}`, "Dinner out", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := l.call(t, "get_transactions", tc.args)
			if got["error"] != nil {
				t.Fatalf("refused: %v", got)
			}
			var names []string
			for _, r := range got["transactions"].([]any) {
				names = append(names, r.(map[string]any)["name"].(string))
			}
			if got["total_results"] != float64(tc.total) || tc.want != "" && strings.Join(names, ",") != tc.want {
				t.Fatalf("got %d %v, want %d %s", int(got["total_results"].(float64)), names, tc.total, tc.want)
			}
			for _, n := range names {
				if n == "Neighbour's dinner" {
					t.Fatal("another family's row")
				}
			}
		})
	}
	for _, tc := range []struct{ name, args, code string }{
		{"order", `{"order": "sideways"}`, "invalid_arguments"},
		{"sort_by", `{"sort_by": "name"}`, "invalid_arguments"},
		{"types", `{"types": ["gifts"]}`, "invalid_arguments"},
		{"statuses", `{"statuses": ["maybe"]}`, "invalid_arguments"},
		{"amount", `{"amount": "abc", "amount_operator": "equal"}`, "invalid_amount"},
		{"amount_operator", `{"amount": "1", "amount_operator": "about"}`, "invalid_arguments"},
		{"start_date", `{"start_date": "2026-02-30"}`, "invalid_date"},
		{"categories", `{"categories": ["Nope"]}`, "not_found"},
		{"merchants", `{"merchants": ["Nope"]}`, "not_found"},
		{"another family's account", fmt.Sprintf(`{"account_ids": [%q]}`, l.other.Account.ID), "not_found"},
		{"page of the wrong type", `{"page": "2"}`, "invalid_arguments"},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			if got := l.call(t, "get_transactions", tc.args); got["error"] != tc.code {
				t.Fatalf("got %v, want %s", got, tc.code)
			}
		})
	}

	// The rows and totals in the reference's shape, money exact.
	all := l.call(t, "get_transactions", `{"page_size": 100}`)
	if all["total_income"] != "$3,010.00" || all["total_expenses"] != "$1,329.87" || all["page_size"] != 100.0 || all["total_pages"] != 1.0 {
		t.Fatalf("totals %v %v, page %v of %v", all["total_income"], all["total_expenses"], all["page_size"], all["total_pages"])
	}
	rows := map[string]map[string]any{}
	for _, r := range all["transactions"].([]any) {
		rows[r.(map[string]any)["name"].(string)] = r.(map[string]any)
	}
	for name, want := range map[string]string{
		"Groceries run":          `amount=80.25 formatted_amount=$80.25 classification=expense refund=false category=Groceries merchant=Corner Shop is_transfer=false pending=false`,
		"Coffee":                 `amount=4.1234 formatted_amount=$4.12 classification=expense refund=false category=<nil> merchant=<nil> is_transfer=false pending=true`,
		"Refund dinner":          `amount=10.00 formatted_amount=$10.00 classification=income refund=true category=Food merchant=<nil> is_transfer=false pending=false`,
		"Transfer from Checking": `amount=500.00 formatted_amount=$500.00 classification=income refund=false category=<nil> merchant=<nil> is_transfer=true pending=false`,
	} {
		r := rows[name]
		var got []string
		for _, k := range []string{"amount", "formatted_amount", "classification", "refund", "category", "merchant", "is_transfer", "pending"} {
			got = append(got, fmt.Sprintf("%s=%v", k, r[k]))
		}
		if strings.Join(got, " ") != want || r["currency"] != "USD" || r["account"] == nil || r["date"] == nil {
			t.Errorf("%s: %v\nwant %s", name, strings.Join(got, " "), want)
		}
	}
	if tags := rows["Dinner out"]["tags"].([]any); len(tags) != 1 || tags[0] != "Holiday" {
		t.Errorf("tags %v", tags)
	}
}

// TestGetIncomeStatementParameters: get_income_statement's parameters as
// the reference's (start_date, end_date, account_ids, group_by,
// compare_previous_period), against the real database.
func TestGetIncomeStatementParameters(t *testing.T) {
	l := newParamsLedger(t)
	jsonOf := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	october := `"start_date": "2026-10-01", "end_date": "2026-10-31"`

	full := l.call(t, "get_income_statement", "{"+october+"}")
	if got := jsonOf(full["expense"]); got != `{"by_category":[`+
		`{"name":"Food","percentage_of_total":"96.8%","subcategory_totals":[{"name":"Groceries","percentage_of_total":"61.8%","total":"$80.25","transactions":1}],"total":"$125.75","transactions":2},`+
		`{"name":"Uncategorized","percentage_of_total":"3.2%","subcategory_totals":[],"total":"$4.12","transactions":1}],"total":"$129.87"}` {
		t.Errorf("expense %s", got)
	}
	if got := jsonOf(full["income"]); !strings.Contains(got, `"total":"$3,010.00"`) || !strings.Contains(got, `{"name":"Salary","percentage_of_total":"99.7%"`) {
		t.Errorf("income %s", got)
	}
	if full["net"] != "$2,880.13" || jsonOf(full["insights"]) != `{"net_income":"$2,880.13","savings_rate":"95.69%"}` ||
		jsonOf(full["period"]) != `{"end_date":"2026-10-31","start_date":"2026-10-01"}` || full["currency"] != "USD" {
		t.Errorf("net %v insights %v period %v", full["net"], full["insights"], full["period"])
	}
	if full["monthly_series"] != nil || full["previous_period"] != nil {
		t.Errorf("series or comparison not asked for: %v", full)
	}

	// account_ids: totals of those accounts only, without the breakdown.
	scoped := l.call(t, "get_income_statement", fmt.Sprintf(`{%s, "account_ids": [%q]}`, october, l.caller.FamilyID))
	if scoped["error"] != "unknown_account_ids" {
		t.Errorf("a family id as an account id: %v", scoped)
	}
	checking := l.call(t, "get_accounts", "")["accounts"].([]any)
	var checkingID string
	for _, a := range checking {
		if a.(map[string]any)["name"] == "Checking" {
			checkingID = a.(map[string]any)["id"].(string)
		}
	}
	scoped = l.call(t, "get_income_statement", fmt.Sprintf(`{%s, "account_ids": [%q]}`, october, checkingID))
	if jsonOf(scoped["expense"]) != `{"by_category":null,"total":"$129.87"}` || jsonOf(scoped["income"]) != `{"by_category":null,"total":"$3,010.00"}` ||
		scoped["breakdown_omitted_reason"] == nil || jsonOf(scoped["account_ids"]) != fmt.Sprintf(`[%q]`, checkingID) {
		t.Errorf("scoped to Checking %v", scoped)
	}
	scoped = l.call(t, "get_income_statement", fmt.Sprintf(`{%s, "account_ids": [%q]}`, october, l.savings.ID))
	if jsonOf(scoped["income"]) != `{"by_category":null,"total":"$0.00"}` || scoped["net"] != "$0.00" {
		t.Errorf("scoped to Savings (only a transfer) %v", scoped)
	}
	other := l.call(t, "get_income_statement", fmt.Sprintf(`{%s, "account_ids": [%q, "nope"]}`, october, l.other.Account.ID))
	if other["error"] != "unknown_account_ids" || jsonOf(other["unknown_ids"]) != fmt.Sprintf(`[%q,"nope"]`, l.other.Account.ID) {
		t.Errorf("another family's account %v", other)
	}

	// group_by month: calendar months cut to the period.
	series := l.call(t, "get_income_statement", `{"start_date": "2026-09-15", "end_date": "2026-10-31", "group_by": "month"}`)
	if got := jsonOf(series["monthly_series"]); got != `[`+
		`{"end_date":"2026-09-30","expenses":"$1,200.00","income":"$0.00","net":"-$1,200.00","start_date":"2026-09-15"},`+
		`{"end_date":"2026-10-31","expenses":"$129.87","income":"$3,010.00","net":"$2,880.13","start_date":"2026-10-01"}]` {
		t.Errorf("monthly series %s", got)
	}
	scopedSeries := l.call(t, "get_income_statement", fmt.Sprintf(`{"start_date": "2026-09-15", "end_date": "2026-10-31", "group_by": "month", "account_ids": [%q]}`, l.savings.ID))
	if got := jsonOf(scopedSeries["monthly_series"]); strings.Count(got, `"net":"$0.00"`) != 2 {
		t.Errorf("monthly series of Savings %s", got)
	}
	if got := l.call(t, "get_income_statement", `{"start_date": "2026-10-01", "end_date": "2026-10-31", "group_by": "none"}`); got["monthly_series"] != nil || got["error"] != nil {
		t.Errorf("group_by none %v", got)
	}

	// compare_previous_period: the 31 days before October.
	cmp := l.call(t, "get_income_statement", "{"+october+`, "compare_previous_period": true}`)
	if got := jsonOf(cmp["previous_period"]); got != `{"end_date":"2026-09-30","expenses":"$1,200.00",`+
		`"expenses_change":{"amount":"-$1,070.13","percent":-89.2},"income":"$0.00","income_change":{"amount":"$3,010.00","percent":null},`+
		`"net":"-$1,200.00","start_date":"2026-08-31"}` {
		t.Errorf("previous period %s", got)
	}

	for _, tc := range []struct{ name, args, code string }{
		{"group_by", `{` + october + `, "group_by": "week"}`, "invalid_arguments"},
		{"too many months", `{"start_date": "2020-01-01", "end_date": "2026-12-31", "group_by": "month"}`, "too_many_periods"},
		{"missing end_date", `{"start_date": "2026-10-01"}`, "invalid_date"},
		{"reversed", `{"start_date": "2026-10-31", "end_date": "2026-10-01"}`, "validation_failed"},
		{"compare of the wrong type", `{` + october + `, "compare_previous_period": "yes"}`, "invalid_arguments"},
		{"account_ids of the wrong type", `{` + october + `, "account_ids": "all"}`, "invalid_arguments"},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			if got := l.call(t, "get_income_statement", tc.args); got["error"] != tc.code {
				t.Fatalf("got %v, want %s", got, tc.code)
			}
		})
	}
}

// callTool calls the tool name with args as c and decodes its JSON result;
// a service error or a result that is not an object fails t.
func callTool(t *testing.T, store *models.Store, c assistant.Caller, name, args string) map[string]any {
	t.Helper()
	raw, err := assistant.Call(t.Context(), store, c, name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %s", name, raw)
	}
	return out
}
