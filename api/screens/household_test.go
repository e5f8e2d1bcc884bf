package screens_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

func TestAccountScreens(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := t.Context()

	r := b.Get("/accounts")
	if r.Status != 200 || !strings.Contains(string(r.Body), "Checking") {
		t.Fatalf("accounts: %d", r.Status)
	}

	// A bad form keeps what was typed and says what is wrong beside it.
	b.Get("/accounts/new")
	r = b.Post("/accounts", url.Values{"name": {"Visa"}, "account_type": {"credit_card"}, "currency": {"US"}, "opening_balance": {"12,34.567891"}})
	body := string(r.Body)
	if r.Status != 422 || !strings.Contains(body, `value="Visa"`) || !strings.Contains(body, "three-letter ISO code") ||
		!strings.Contains(body, "positive amount") {
		t.Fatalf("bad account form: %d %s", r.Status, body)
	}

	r = b.Post("/accounts", url.Values{"name": {"Visa"}, "account_type": {"credit_card"}, "currency": {"USD"}, "opening_balance": {"250.00"}})
	if r.Status != 303 {
		t.Fatalf("create account: %d %s", r.Status, r.Body)
	}
	loc := r.Header.Get("Location")
	r = b.Get(loc)
	if r.Status != 200 || !strings.Contains(string(r.Body), "$250.00 owed") {
		t.Fatalf("card page: %d %s", r.Status, r.Body)
	}
	id := strings.TrimPrefix(loc, "/accounts/")

	// A stale edit form is refused and says so.
	r = b.Post(loc, url.Values{"name": {"Visa Gold"}, "account_type": {"credit_card"}, "currency": {"USD"}, "updated": {"2000-01-01T00:00:00Z"}})
	if r.Status != 409 || !strings.Contains(string(r.Body), "changed by someone else") {
		t.Fatalf("stale edit: %d", r.Status)
	}
	edit := b.Get(loc + "/edit")
	updated := regexp.MustCompile(`name="updated" value="([^"]+)"`).FindSubmatch(edit.Body)
	if updated == nil {
		t.Fatalf("edit form has no version: %s", edit.Body)
	}
	r = b.Post(loc, url.Values{"name": {"Visa Gold"}, "account_type": {"credit_card"}, "currency": {"USD"},
		"opening_balance": {"300"}, "updated": {string(updated[1])}})
	if r.Status != 303 {
		t.Fatalf("edit: %d %s", r.Status, r.Body)
	}
	if r := b.Get(loc); !strings.Contains(string(r.Body), "$300.00 owed") {
		t.Fatalf("after edit: %s", r.Body)
	}

	// Another family's account is a 404 on every route.
	other := e.Beta.Account.ID.String()
	for _, p := range []string{"/accounts/" + other, "/accounts/" + other + "/edit", "/accounts/" + other + "/delete"} {
		if r := b.Get(p); r.Status != 404 {
			t.Errorf("GET %s of another family: %d", p, r.Status)
		}
	}
	for _, p := range []string{"/accounts/" + other, "/accounts/" + other + "/archive", "/accounts/" + other + "/delete"} {
		if r := b.Post(p, url.Values{"name": {"x"}}); r.Status != 404 {
			t.Errorf("POST %s of another family: %d", p, r.Status)
		}
	}
	if _, err := e.Store.Account(ctx, e.Beta.Family.ID, e.Beta.Account.ID); err != nil {
		t.Fatalf("the other family's account: %v", err)
	}

	// Delete says what goes with it, then does it.
	if r := b.Get(loc + "/delete"); !strings.Contains(string(r.Body), "0 transactions") {
		t.Fatalf("delete confirmation: %s", r.Body)
	}
	if r := b.Post(loc+"/delete", nil); r.Status != 303 {
		t.Fatalf("delete: %d", r.Status)
	}
	if _, err := e.Store.Account(ctx, e.Alpha.Family.ID, uuidOf(t, id)); err != models.ErrNotFound {
		t.Fatalf("deleted account: %v", err)
	}
}

func TestTransactionScreens(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := t.Context()
	acct := e.Alpha.Account.ID.String()

	b.Get("/transactions/new")
	// Missing and malformed fields: every problem beside its field, nothing written.
	r := b.Post("/transactions", url.Values{"account_id": {acct}, "date": {"2026-13-01"}, "type": {"expense"}, "amount": {"-5"}, "name": {"Groceries"}})
	body := string(r.Body)
	if r.Status != 422 || !strings.Contains(body, "must be a date") || !strings.Contains(body, "positive amount") || !strings.Contains(body, `value="Groceries"`) {
		t.Fatalf("bad transaction: %d %s", r.Status, body)
	}
	// Another family's account in the form is refused like a missing one.
	r = b.Post("/transactions", url.Values{"account_id": {e.Beta.Account.ID.String()}, "date": {"2026-01-05"}, "type": {"expense"}, "amount": {"5"}, "name": {"x"}})
	if r.Status != 422 || !strings.Contains(string(r.Body), "Choose an account") {
		t.Fatalf("other family's account: %d", r.Status)
	}
	if _, n, _ := e.Store.Transactions(ctx, e.Alpha.Family.ID, models.TransactionFilter{}, models.Page{Number: 1, Size: 1}); n != 0 {
		t.Fatalf("%d transactions written by refused forms", n)
	}

	for _, tx := range []url.Values{
		{"account_id": {acct}, "date": {"2026-01-05"}, "type": {"expense"}, "amount": {"42.50"}, "name": {"Groceries"}},
		{"account_id": {acct}, "date": {"2026-01-06"}, "type": {"income"}, "amount": {"1000"}, "name": {"Salary"}},
	} {
		if r := b.Post("/transactions", tx); r.Status != 303 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	a, err := e.Store.Account(ctx, e.Alpha.Family.ID, e.Alpha.Account.ID)
	if err != nil || a.Balance != money.Amount(957_5000) {
		t.Fatalf("balance after two transactions: %v %v", a.Balance, err)
	}
	// The register runs the balance: after the groceries on the 5th, -42.50;
	// after the salary on the 6th, 957.50.
	reg := string(b.Get("/accounts/" + acct).Body)
	if !strings.Contains(reg, "-$42.50") || !strings.Contains(reg, "$957.50") || !strings.Contains(reg, "<svg") {
		t.Fatalf("register: %s", reg)
	}
	r = b.Get("/transactions?q=salary")
	if !strings.Contains(string(r.Body), `<span class="in">+$1,000.00</span>`) || strings.Contains(string(r.Body), "Groceries") {
		t.Fatalf("search: %s", r.Body)
	}
	if r := b.Get("/transactions?from=nope&min=-3"); r.Status != 200 || !strings.Contains(string(r.Body), "Use a date") {
		t.Fatalf("bad filters: %d", r.Status)
	}

	rows, _, _ := e.Store.Transactions(ctx, e.Alpha.Family.ID, models.TransactionFilter{Search: "Groceries"}, models.Page{Number: 1, Size: 1})
	g := rows[0]
	path := "/transactions/" + g.ID.String()
	edit := b.Get(path + "/edit")
	updated := regexp.MustCompile(`name="updated" value="([^"]+)"`).FindSubmatch(edit.Body)
	if edit.Status != 200 || updated == nil {
		t.Fatalf("edit form: %d", edit.Status)
	}
	form := url.Values{"account_id": {acct}, "date": {"2026-01-05"}, "type": {"expense"}, "amount": {"40"}, "name": {"Groceries"}, "updated": {string(updated[1])}}
	if r := b.Post(path, form); r.Status != 303 {
		t.Fatalf("edit: %d %s", r.Status, r.Body)
	}
	// The same form again is stale: the row changed since it was drawn.
	if r := b.Post(path, form); r.Status != 409 {
		t.Fatalf("stale edit: %d", r.Status)
	}

	beta := &models.Transaction{FamilyID: e.Beta.Family.ID, AccountID: e.Beta.Account.ID, Date: "2026-01-01", Amount: 10_0000, Currency: "USD", Name: "theirs"}
	if _, _, err := e.Store.CreateTransaction(ctx, beta, nil); err != nil {
		t.Fatal(err)
	}
	if r := b.Get("/transactions/" + beta.ID.String() + "/edit"); r.Status != 404 {
		t.Errorf("another family's transaction: %d", r.Status)
	}
	if r := b.Post("/transactions/"+beta.ID.String()+"/delete", nil); r.Status != 404 {
		t.Errorf("delete another family's transaction: %d", r.Status)
	}
	if r := b.Post(path+"/delete", nil); r.Status != 303 {
		t.Fatalf("delete: %d", r.Status)
	}
	if r := b.Post(path, form); r.Status != 404 {
		t.Fatalf("edit of a deleted transaction: %d", r.Status)
	}
}

func uuidOf(t *testing.T, s string) uuid.UUID {
	t.Helper()
	id, err := uuid.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestLabelScreens(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := t.Context()
	fam := e.Alpha.Family.ID

	b.Get("/categories")
	for _, name := range []string{"Groceries", "Food"} {
		if r := b.Post("/categories", url.Values{"name": {name}, "classification": {"expense"}, "color": {"#112233"}}); r.Status != 303 {
			t.Fatalf("add %s: %d %s", name, r.Status, r.Body)
		}
	}
	r := b.Post("/categories", url.Values{"name": {"Food"}, "classification": {"expense"}, "color": {"#112233"}})
	if r.Status != 422 || !strings.Contains(string(r.Body), "already exists") {
		t.Fatalf("duplicate name: %d", r.Status)
	}
	if r := b.Post("/categories", url.Values{"name": {""}, "classification": {"sideways"}, "color": {"red"}}); r.Status != 422 ||
		!strings.Contains(string(r.Body), "can&#39;t be blank") || !strings.Contains(string(r.Body), "#1a2b3c") {
		t.Fatalf("bad category: %d %s", r.Status, r.Body)
	}
	cats, _, _ := e.Store.Categories(ctx, fam, models.Page{Number: 1, Size: 10})
	byName := map[string]models.Category{}
	for _, c := range cats {
		byName[c.Name] = c
	}
	groceries, food := byName["Groceries"], byName["Food"]

	var ids []string
	for i, name := range []string{"Market", "Bakery", "Rent"} {
		tx := &models.Transaction{FamilyID: fam, AccountID: e.Alpha.Account.ID, Date: civil.Date("2026-01-0" + string(rune('1'+i))),
			Amount: 10_0000, Currency: "USD", Name: name}
		if _, _, err := e.Store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tx.ID.String())
	}
	// Bulk: two selected rows get Groceries, and a foreign id is ignored.
	r = b.Post("/transactions/bulk", url.Values{"ids": {ids[0], ids[1], e.Beta.Account.ID.String()}, "category_id": {groceries.ID.String()}, "return_to": {"/transactions"}})
	if r.Status != 303 {
		t.Fatalf("bulk: %d %s", r.Status, r.Body)
	}
	_, n, _ := e.Store.Transactions(ctx, fam, models.TransactionFilter{CategoryIDs: []uuid.UUID{groceries.ID}}, models.Page{Number: 1, Size: 1})
	if n != 2 {
		t.Fatalf("%d transactions in Groceries after bulk", n)
	}

	if r := b.Get("/categories/" + groceries.ID.String() + "/delete"); !strings.Contains(string(r.Body), "2 transactions use this category") ||
		!strings.Contains(string(r.Body), "become uncategorized") {
		t.Fatalf("delete confirmation: %s", r.Body)
	}
	if r := b.Post("/categories/"+groceries.ID.String()+"/merge", url.Values{"into_id": {food.ID.String()}}); r.Status != 303 {
		t.Fatalf("merge: %d %s", r.Status, r.Body)
	}
	_, n, _ = e.Store.Transactions(ctx, fam, models.TransactionFilter{CategoryIDs: []uuid.UUID{food.ID}}, models.Page{Number: 1, Size: 1})
	if n != 2 {
		t.Fatalf("%d transactions in Food after merge", n)
	}
	if r := b.Get("/categories/" + groceries.ID.String() + "/edit"); r.Status != 404 {
		t.Fatalf("merged category still there: %d", r.Status)
	}

	// Another family's tag: 404 everywhere.
	theirs := &models.Tag{FamilyID: e.Beta.Family.ID, Name: "theirs", Color: "#000000"}
	if err := e.Store.CreateTag(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/tags/" + theirs.ID.String() + "/edit", "/tags/" + theirs.ID.String() + "/delete"} {
		if r := b.Get(p); r.Status != 404 {
			t.Errorf("GET %s: %d", p, r.Status)
		}
	}
	if r := b.Post("/tags/"+theirs.ID.String()+"/delete", nil); r.Status != 404 {
		t.Errorf("delete another family's tag: %d", r.Status)
	}
	if r := b.Post("/merchants", url.Values{"name": {"Corner shop"}}); r.Status != 303 {
		t.Fatalf("add merchant: %d", r.Status)
	}
	if r := b.Get("/merchants"); !strings.Contains(string(r.Body), "Corner shop") {
		t.Fatal("merchant not listed")
	}
}

func TestBudgetScreen(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := t.Context()
	fam := e.Alpha.Family.ID
	food := &models.Category{FamilyID: fam, Name: "Food", Color: "#112233", Classification: "expense"}
	if err := e.Store.CreateCategory(ctx, food); err != nil {
		t.Fatal(err)
	}
	month := time.Now().UTC().Format("2006-01")
	tx := &models.Transaction{FamilyID: fam, AccountID: e.Alpha.Account.ID, Date: civil.DateOf(time.Now()), Amount: 30_0000,
		Currency: "USD", Name: "Market", CategoryID: &food.ID}
	if _, _, err := e.Store.CreateTransaction(ctx, tx, nil); err != nil {
		t.Fatal(err)
	}
	r := b.Get("/budgets")
	line := regexp.MustCompile(`name="(amount_[0-9a-f-]{36})"`).FindSubmatch(r.Body)
	if r.Status != 200 || line == nil {
		t.Fatalf("budget page: %d %s", r.Status, r.Body)
	}
	field := string(line[1])
	rollover := "rollover_" + strings.TrimPrefix(field, "amount_")
	bad := b.Post("/budgets?month="+month, url.Values{"budgeted_spending": {"lots"}, field: {"120"}})
	if bad.Status != 422 || !strings.Contains(string(bad.Body), `value="lots"`) || !strings.Contains(string(bad.Body), `value="120"`) {
		t.Fatalf("bad budget form: %d %s", bad.Status, bad.Body)
	}
	if r := b.Post("/budgets?month="+month, url.Values{"budgeted_spending": {"500"}, field: {"120"}, rollover: {"1"}}); r.Status != 303 {
		t.Fatalf("save budget: %d %s", r.Status, r.Body)
	}
	r = b.Get("/budgets?month=" + month)
	if !strings.Contains(string(r.Body), "$90.00") || !strings.Contains(string(r.Body), "$470.00") || !strings.Contains(string(r.Body), "checked") {
		t.Fatalf("budget after saving: %s", r.Body)
	}
	if r := b.Get("/budgets?month=nope"); r.Status != 404 {
		t.Fatalf("bad month: %d", r.Status)
	}
	// Copy last month: there is none before this one, which it says.
	prev := time.Now().UTC().AddDate(0, 1, 0).Format("2006-01")
	if r := b.Post("/budgets?month="+prev, url.Values{"copy": {"1"}}); r.Status != 303 {
		t.Fatalf("copy: %d %s", r.Status, r.Body)
	}
	if r := b.Get("/budgets?month=" + prev); !strings.Contains(string(r.Body), `value="120.00"`) {
		t.Fatalf("copied budget: %s", r.Body)
	}
}

func TestReportScreens(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := t.Context()
	fam := e.Alpha.Family.ID
	salary := &models.Category{FamilyID: fam, Name: "=Salary", Color: "#112233", Classification: "income"}
	if err := e.Store.CreateCategory(ctx, salary); err != nil {
		t.Fatal(err)
	}
	for _, tx := range []*models.Transaction{
		{Date: "2026-01-05", Amount: -2000_0000, Name: "Pay", CategoryID: &salary.ID},
		{Date: "2026-01-07", Amount: 150_0000, Name: "Market"},
		{Date: "2026-02-03", Amount: 50_0000, Name: "Market"},
	} {
		tx.FamilyID, tx.AccountID, tx.Currency = fam, e.Alpha.Account.ID, "USD"
		if _, _, err := e.Store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
	}
	r := b.Get("/reports?from=2026-01-01&to=2026-02-28")
	body := string(r.Body)
	if r.Status != 200 || !strings.Contains(body, "$2,000.00") || !strings.Contains(body, "$1,850.00") || !strings.Contains(body, "<svg") {
		t.Fatalf("reports: %d %s", r.Status, body)
	}
	if r := b.Get("/reports?from=yesterday&to=2026-02-30"); r.Status != 200 || !strings.Contains(string(r.Body), "Use a date") {
		t.Fatalf("bad period: %d", r.Status)
	}
	csv := b.Get("/reports/income_statement.csv?from=2026-01-01&to=2026-02-28")
	if csv.Status != 200 || !strings.Contains(string(csv.Body), "income,'=Salary,,USD,2000.00,0.00,2000.00") {
		t.Fatalf("income statement CSV: %d %s", csv.Status, csv.Body)
	}
	flow := b.Get("/reports/cash_flow.csv?from=2026-01-01&to=2026-02-28")
	if !strings.Contains(string(flow.Body), "2026-01,USD,2000.00,150.00,1850.00") {
		t.Fatalf("cash flow CSV: %s", flow.Body)
	}
	if r := b.Get("/reports/nothing.csv"); r.Status != 404 {
		t.Fatalf("unknown report: %d", r.Status)
	}
}

func TestMembersAndInvitations(t *testing.T) {
	e := apitest.NewEnv(t)
	admin := apitest.SignedInBrowser(t, e)
	ctx := t.Context()

	admin.Get("/settings/members")
	r := admin.Post("/settings/members/invitations", url.Values{"email": {"spouse@example.com"}, "role": {"member"}})
	link := regexp.MustCompile(`id="invitation-link">http://example.com(/invitations/[A-Za-z0-9_-]+)<`).FindSubmatch(r.Body)
	if r.Status != 201 || link == nil {
		t.Fatalf("invite: %d %s", r.Status, r.Body)
	}
	path := string(link[1])
	if r := admin.Post("/settings/members/invitations", url.Values{"email": {"not an address"}, "role": {"member"}}); r.Status != 422 ||
		!strings.Contains(string(r.Body), "valid email") {
		t.Fatalf("bad invitation: %d", r.Status)
	}

	guest := e.Browser(t)
	if r := guest.Get(path); r.Status != 200 || !strings.Contains(string(r.Body), "spouse@example.com") {
		t.Fatalf("invitation page: %d %s", r.Status, r.Body)
	}
	if r := guest.Post(path, url.Values{"password": {"short"}, "password_confirmation": {"short"}}); r.Status != 422 {
		t.Fatalf("short password: %d", r.Status)
	}
	r = guest.Post(path, url.Values{"password": {"a long enough password"}, "password_confirmation": {"a long enough password"}})
	if r.Status != 303 || r.Header.Get("Location") != "/" {
		t.Fatalf("accept: %d %s", r.Status, r.Body)
	}
	if r := guest.Get("/accounts"); r.Status != 200 || !strings.Contains(string(r.Body), "Checking") {
		t.Fatalf("the new member sees the family's accounts: %d", r.Status)
	}
	users, _, _ := e.Store.Users(ctx, models.UserFilter{FamilyID: &e.Alpha.Family.ID, Query: "spouse"}, models.Page{Number: 1, Size: 5})
	if len(users) != 1 || users[0].Role != models.RoleMember {
		t.Fatalf("joined user: %+v", users)
	}
	// Used twice: refused.
	if r := e.Browser(t).Get(path); r.Status != 410 || !strings.Contains(string(r.Body), "already been used") {
		t.Fatalf("used link: %d", r.Status)
	}
	// A member sees the list but may not invite.
	if r := guest.Get("/settings/members"); r.Status != 200 || strings.Contains(string(r.Body), "Invite someone") {
		t.Fatalf("member's view: %d", r.Status)
	}
	if r := guest.Post("/settings/members/invitations", url.Values{"email": {"x@example.com"}, "role": {"member"}}); r.Status != 403 {
		t.Fatalf("member invites: %d", r.Status)
	}

	// An address that belongs to another family, and a revoked link.
	r = admin.Post("/settings/members/invitations", url.Values{"email": {e.Beta.User.Email}, "role": {"member"}})
	taken := regexp.MustCompile(`(/invitations/[A-Za-z0-9_-]+)<`).FindSubmatch(r.Body)
	g2 := e.Browser(t)
	g2.Get(string(taken[1]))
	if r := g2.Post(string(taken[1]), url.Values{"password": {"a long enough password"}, "password_confirmation": {"a long enough password"}}); r.Status != 409 {
		t.Fatalf("email of another family: %d", r.Status)
	}
	r = admin.Post("/settings/members/invitations", url.Values{"email": {"cousin@example.com"}, "role": {"member"}})
	revoked := regexp.MustCompile(`(/invitations/[A-Za-z0-9_-]+)<`).FindSubmatch(r.Body)
	invs, _ := e.Store.Invitations(ctx, e.Alpha.Family.ID)
	for _, inv := range invs {
		if inv.Email == "cousin@example.com" {
			if r := admin.Post("/settings/members/invitations/"+inv.ID.String()+"/revoke", nil); r.Status != 303 {
				t.Fatalf("revoke: %d", r.Status)
			}
		}
	}
	if r := e.Browser(t).Get(string(revoked[1])); r.Status != 410 {
		t.Fatalf("revoked link: %d", r.Status)
	}
	if r := e.Browser(t).Get("/invitations/nonsense"); r.Status != 404 {
		t.Fatalf("unknown link: %d", r.Status)
	}
}

// TestSignupClosed: with AUTH_SIGNUP_ENABLED off, no new family can be
// made and the login page does not offer it; invitations still work.
func TestSignupClosed(t *testing.T) {
	e := apitest.NewEnv(t, func(o *api.Options) { o.Web.SignupEnabled = false })
	b := e.Browser(t)
	if r := b.Get("/sessions/new"); strings.Contains(string(r.Body), "/registrations/new") {
		t.Fatal("the login page offers sign-up")
	}
	if r := b.Get("/registrations/new"); r.Status != 403 || !strings.Contains(string(r.Body), "Sign-up is closed") {
		t.Fatalf("sign-up page: %d", r.Status)
	}
	r := b.Post("/registrations", url.Values{"family": {"X"}, "currency": {"USD"}, "email": {"x@example.com"}, "password": {"long enough password"}})
	if r.Status != 403 {
		t.Fatalf("registration: %d", r.Status)
	}
	if fams, _ := e.Store.Families(t.Context()); len(fams) != 2 {
		t.Fatalf("%d families", len(fams))
	}
}
