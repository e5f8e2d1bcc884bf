package screens_test

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
)

// countsFixture gives the alpha family, this month: a parent category
// Car with a subcategory Fuel, a category Dining out that sorts between
// the two, $40 of fuel, $25 of dining, $15 with no category, €30 in a
// euro account and $99 marked excluded.
type countsFixture struct {
	car, fuel, dining *models.Category
	uncategorized     *models.Transaction
	month             string
}

func newCountsFixture(t *testing.T, e *apitest.Env) countsFixture {
	t.Helper()
	ctx, fam := t.Context(), e.Alpha.Family.ID
	f := countsFixture{month: time.Now().UTC().Format("2006-01")}
	f.car = &models.Category{FamilyID: fam, Name: "Car", Color: "#112233", Classification: "expense"}
	f.dining = &models.Category{FamilyID: fam, Name: "Dining out", Color: "#112233", Classification: "expense"}
	for _, c := range []*models.Category{f.car, f.dining} {
		if err := e.Store.CreateCategory(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	f.fuel = &models.Category{FamilyID: fam, Name: "Fuel", Color: "#112233", Classification: "expense", ParentID: &f.car.ID}
	if err := e.Store.CreateCategory(ctx, f.fuel); err != nil {
		t.Fatal(err)
	}
	euro := &models.Account{FamilyID: fam, Name: "Sparkonto", AccountType: "depository", Currency: "EUR"}
	if err := e.Store.CreateAccount(ctx, euro); err != nil {
		t.Fatal(err)
	}
	today := civil.DateOf(time.Now())
	f.uncategorized = &models.Transaction{Amount: 15_0000, Name: "Corner shop"}
	for _, tx := range []*models.Transaction{
		{Amount: 40_0000, Name: "Gas station", CategoryID: &f.fuel.ID},
		{Amount: 25_0000, Name: "Bistro", CategoryID: &f.dining.ID},
		f.uncategorized,
		{Amount: 99_0000, Name: "Reimbursed later", Excluded: true},
		{Amount: 30_0000, Name: "Bäckerei", AccountID: euro.ID, Currency: "EUR"},
	} {
		tx.FamilyID, tx.Date = fam, today
		if tx.AccountID == [16]byte{} {
			tx.AccountID, tx.Currency = e.Alpha.Account.ID, "USD"
		}
		if _, _, err := e.Store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// The budget shows what no category holds, never calls a month with
// nothing budgeted overspent, keeps a subcategory under its parent, and
// says what its figures leave out.
func TestBudgetScreenSaysWhatItCounts(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	f := newCountsFixture(t, e)

	r := b.Get("/budgets?month=" + f.month)
	body := string(r.Body)
	if r.Status != 200 {
		t.Fatalf("budget: %d %s", r.Status, body)
	}
	if strings.Contains(body, "overspent</p>") || strings.Contains(body, " over</td>") || strings.Contains(body, `class="num owed"`) {
		t.Errorf("a month with nothing budgeted says overspent: %s", body)
	}
	row := regexp.MustCompile(`(?s)<tr id="budget-uncategorized">.*?</tr>`).FindString(body)
	if !strings.Contains(row, "Uncategorized") || !strings.Contains(row, "$15.00") || !strings.Contains(row, "category_id=none") {
		t.Errorf("no uncategorized line with its $15.00: %q", row)
	}
	car, fuel, dining := strings.Index(body, ">Car<"), strings.Index(body, "↳ Fuel"), strings.Index(body, ">Dining out<")
	if car < 0 || fuel < 0 || dining < 0 || !(car < fuel && fuel < dining) {
		t.Errorf("Fuel is not under Car (Car %d, Fuel %d, Dining out %d)", car, fuel, dining)
	}
	if !strings.Contains(body, "1 transaction in EUR") || !strings.Contains(body, "1 transaction you marked as excluded") {
		t.Errorf("the budget does not say what it leaves out: %s", body)
	}
	// With a total set, overspending is said again.
	if r := b.Post("/budgets?month="+f.month, url.Values{"budgeted_spending": {"50"}}); r.Status != 303 {
		t.Fatalf("save: %d %s", r.Status, r.Body)
	}
	if r := b.Get("/budgets?month=" + f.month); !strings.Contains(string(r.Body), "overspent</p>") || !strings.Contains(string(r.Body), "-$30.00") {
		t.Errorf("$80 spent of $50 is not overspent: %s", r.Body)
	}
}

// The first job after an import, "what is not filed yet", has a filter on
// the screen and in the API.
func TestUncategorizedFilter(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	f := newCountsFixture(t, e)

	r := b.Get("/transactions?category_id=none")
	body := string(r.Body)
	if r.Status != 200 || !strings.Contains(body, "Corner shop") || strings.Contains(body, "Bistro") || strings.Contains(body, "Gas station") {
		t.Fatalf("uncategorized screen filter: %d %s", r.Status, body)
	}
	if !strings.Contains(body, `<option value="none" selected>Uncategorized</option>`) {
		t.Errorf("the filter does not show its choice")
	}

	list := func(q string) []string {
		t.Helper()
		r := e.Do("GET", "/api/v1/transactions?"+q, e.Alpha.Key, nil)
		if r.Status != 200 {
			t.Fatalf("GET %s: %d %s", q, r.Status, r.Body)
		}
		var out struct {
			Transactions []struct{ Name string } `json:"transactions"`
		}
		if err := json.Unmarshal(r.Body, &out); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tx := range out.Transactions {
			names = append(names, tx.Name)
		}
		return names
	}
	if got := strings.Join(list("category_id=none"), ","); !strings.Contains(got, "Corner shop") || strings.Contains(got, "Bistro") {
		t.Errorf("category_id=none: %s", got)
	}
	if got := strings.Join(list("category_id=none&category_ids[]="+f.dining.ID.String()), ","); !strings.Contains(got, "Corner shop") ||
		!strings.Contains(got, "Bistro") || strings.Contains(got, "Gas station") {
		t.Errorf("none with a category: %s", got)
	}
	if r := e.Do("GET", "/api/v1/transactions?category_id=nothing", e.Alpha.Key, nil); r.Status != 400 {
		t.Errorf("a bad category_id: %d", r.Status)
	}
}

// Deleting a transaction asks first; the question names what goes.
func TestDeleteTransactionAsksFirst(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	f := newCountsFixture(t, e)
	id := f.uncategorized.ID.String()

	edit := b.Get("/transactions/" + id + "/edit")
	if strings.Contains(string(edit.Body), `action="/transactions/`+id+`/delete"`) {
		t.Fatalf("the edit form still deletes in one click")
	}
	if !strings.Contains(string(edit.Body), `href="/transactions/`+id+`/delete`) {
		t.Fatalf("no way to delete from the edit form: %s", edit.Body)
	}
	ask := b.Get("/transactions/" + id + "/delete")
	if ask.Status != 200 || !strings.Contains(string(ask.Body), "Delete this transaction?") || !strings.Contains(string(ask.Body), "Corner shop") ||
		!strings.Contains(string(ask.Body), "$15.00") {
		t.Fatalf("confirmation: %d %s", ask.Status, ask.Body)
	}
	if _, err := e.Store.Transaction(t.Context(), e.Alpha.Family.ID, f.uncategorized.ID); err != nil {
		t.Fatalf("asking deleted it: %v", err)
	}
	if r := b.Post("/transactions/"+id+"/delete", url.Values{}); r.Status != 303 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if _, err := e.Store.Transaction(t.Context(), e.Alpha.Family.ID, f.uncategorized.ID); err == nil {
		t.Fatal("still there after confirming")
	}
	other := e.Beta.Account.ID.String() // not a transaction of this family
	if r := b.Get("/transactions/" + other + "/delete"); r.Status != 404 {
		t.Errorf("another id: %d", r.Status)
	}
}

// The income statement adds up: subcategories under a parent subtotal,
// totals of income, spending and net, on screen and in its CSV, and it
// says what it leaves out.
func TestIncomeStatementTotals(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	f := newCountsFixture(t, e)
	ctx := t.Context()
	salary := &models.Category{FamilyID: e.Alpha.Family.ID, Name: "Salary", Color: "#112233", Classification: "income"}
	if err := e.Store.CreateCategory(ctx, salary); err != nil {
		t.Fatal(err)
	}
	carWash := &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: e.Alpha.Account.ID, Currency: "USD",
		Date: civil.DateOf(time.Now()), Amount: 10_0000, Name: "Car wash", CategoryID: &f.car.ID}
	pay := &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: e.Alpha.Account.ID, Currency: "USD",
		Date: civil.DateOf(time.Now()), Amount: -1000_0000, Name: "Pay", CategoryID: &salary.ID}
	for _, tx := range []*models.Transaction{carWash, pay} {
		if _, _, err := e.Store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
	}
	first := f.month + "-01"
	today := string(civil.DateOf(time.Now()))
	r := b.Get("/reports?from=" + first + "&to=" + today)
	body := string(r.Body)
	if r.Status != 200 {
		t.Fatalf("reports: %d", r.Status)
	}
	for _, want := range []string{"Total income", "Total spending", "Net (income less spending)", "$90.00", "$910.00",
		"Car (not in a subcategory)", "1 transaction in EUR"} {
		if !strings.Contains(body, want) {
			t.Errorf("income statement lacks %q", want)
		}
	}
	csv := string(b.Get("/reports/income_statement.csv?from=" + first + "&to=" + today).Body)
	for _, want := range []string{
		"kind,category,parent,currency," + f.month + ",total",
		"spending_subtotal,Car,,USD,50.00,50.00",
		"spending,Fuel,Car,USD,40.00,40.00",
		"spending,Car (not in a subcategory),Car,USD,10.00,10.00",
		"spending,Uncategorized,,USD,15.00,15.00",
		"total_income,Total income,,USD,1000.00,1000.00",
		"total_spending,Total spending,,USD,90.00,90.00",
		"net,Net (income less spending),,USD,910.00,910.00",
	} {
		if !strings.Contains(csv, want+"\n") {
			t.Errorf("CSV lacks %q:\n%s", want, csv)
		}
	}
}

// Amounts are read as the family writes them: "12,50" is twelve and a
// half in a euro family and refused (not 1,250) in a dollar family.
func TestAmountsAsTyped(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := t.Context()
	acct := e.Alpha.Account.ID.String()
	add := func(amount, name string) apitest.Response {
		t.Helper()
		return b.Post("/transactions", url.Values{"account_id": {acct}, "date": {"2026-01-05"}, "type": {"expense"},
			"amount": {amount}, "name": {name}})
	}
	stored := func(name string) *models.Transaction {
		t.Helper()
		txs, _, err := e.Store.Transactions(ctx, e.Alpha.Family.ID, models.TransactionFilter{Search: name}, models.Page{Number: 1, Size: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(txs) != 1 {
			return nil
		}
		return txs[0]
	}

	r := add("12,50", "Ambiguous")
	if r.Status != 422 || !strings.Contains(string(r.Body), "twelve and a half is 12.50") || !strings.Contains(string(r.Body), `value="12,50"`) {
		t.Fatalf("12,50 in a dollar family: %d %s", r.Status, r.Body)
	}
	if stored("Ambiguous") != nil {
		t.Fatal("a refused amount was saved")
	}
	if r := add("1,234.56", "Grouped"); r.Status != 303 {
		t.Fatalf("1,234.56: %d %s", r.Status, r.Body)
	}
	if tx := stored("Grouped"); tx == nil || tx.Amount != 1234_5600 {
		t.Fatalf("1,234.56 stored as %+v", tx)
	}

	if _, err := e.Store.DB().NewUpdate().Table("families").Set("currency = 'EUR'").Where("id = ?", e.Alpha.Family.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if r := add("12,50", "Kaffee"); r.Status != 303 {
		t.Fatalf("12,50 in a euro family: %d %s", r.Status, r.Body)
	}
	tx := stored("Kaffee")
	if tx == nil || tx.Amount != 12_5000 {
		t.Fatalf("12,50 stored as %+v", tx)
	}
	if r := add("12.50", "Punkt"); r.Status != 422 || !strings.Contains(string(r.Body), "twelve and a half is 12,50") {
		t.Fatalf("12.50 in a euro family: %d", r.Status)
	}
	edit := b.Get("/transactions/" + tx.ID.String() + "/edit")
	if !strings.Contains(string(edit.Body), `value="12,50"`) {
		t.Fatalf("the edit form does not show 12,50: %s", edit.Body)
	}
}
