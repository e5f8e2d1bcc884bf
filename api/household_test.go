package api_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/api"
	"coffer/models"
)

// signedInBrowser is a browser signed in as the alpha family's admin.
func signedInBrowser(t *testing.T, e *env) *browser {
	t.Helper()
	setPassword(t, e, e.alpha.User, "correct horse battery")
	b := e.browser(t)
	if r := b.login(e.alpha.User.Email, "correct horse battery"); r.status != 303 {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	return b
}

func TestAccountScreens(t *testing.T) {
	e := newEnv(t)
	b := signedInBrowser(t, e)
	ctx := t.Context()

	r := b.get("/accounts")
	if r.status != 200 || !strings.Contains(string(r.body), "Checking") {
		t.Fatalf("accounts: %d", r.status)
	}

	// A bad form keeps what was typed and says what is wrong beside it.
	b.get("/accounts/new")
	r = b.post("/accounts", url.Values{"name": {"Visa"}, "account_type": {"credit_card"}, "currency": {"US"}, "opening_balance": {"12,34.567891"}})
	body := string(r.body)
	if r.status != 422 || !strings.Contains(body, `value="Visa"`) || !strings.Contains(body, "three-letter ISO code") ||
		!strings.Contains(body, "positive amount") {
		t.Fatalf("bad account form: %d %s", r.status, body)
	}

	r = b.post("/accounts", url.Values{"name": {"Visa"}, "account_type": {"credit_card"}, "currency": {"USD"}, "opening_balance": {"250.00"}})
	if r.status != 303 {
		t.Fatalf("create account: %d %s", r.status, r.body)
	}
	loc := r.header.Get("Location")
	r = b.get(loc)
	if r.status != 200 || !strings.Contains(string(r.body), "$250.00 owed") {
		t.Fatalf("card page: %d %s", r.status, r.body)
	}
	id := strings.TrimPrefix(loc, "/accounts/")

	// A stale edit form is refused and says so.
	r = b.post(loc, url.Values{"name": {"Visa Gold"}, "account_type": {"credit_card"}, "currency": {"USD"}, "updated": {"2000-01-01T00:00:00Z"}})
	if r.status != 409 || !strings.Contains(string(r.body), "changed by someone else") {
		t.Fatalf("stale edit: %d", r.status)
	}
	edit := b.get(loc + "/edit")
	updated := regexp.MustCompile(`name="updated" value="([^"]+)"`).FindSubmatch(edit.body)
	if updated == nil {
		t.Fatalf("edit form has no version: %s", edit.body)
	}
	r = b.post(loc, url.Values{"name": {"Visa Gold"}, "account_type": {"credit_card"}, "currency": {"USD"},
		"opening_balance": {"300"}, "updated": {string(updated[1])}})
	if r.status != 303 {
		t.Fatalf("edit: %d %s", r.status, r.body)
	}
	if r := b.get(loc); !strings.Contains(string(r.body), "$300.00 owed") {
		t.Fatalf("after edit: %s", r.body)
	}

	// Another family's account is a 404 on every route.
	other := e.beta.Account.ID.String()
	for _, p := range []string{"/accounts/" + other, "/accounts/" + other + "/edit", "/accounts/" + other + "/delete"} {
		if r := b.get(p); r.status != 404 {
			t.Errorf("GET %s of another family: %d", p, r.status)
		}
	}
	for _, p := range []string{"/accounts/" + other, "/accounts/" + other + "/archive", "/accounts/" + other + "/delete"} {
		if r := b.post(p, url.Values{"name": {"x"}}); r.status != 404 {
			t.Errorf("POST %s of another family: %d", p, r.status)
		}
	}
	if _, err := e.store.Account(ctx, e.beta.Family.ID, e.beta.Account.ID); err != nil {
		t.Fatalf("the other family's account: %v", err)
	}

	// Delete says what goes with it, then does it.
	if r := b.get(loc + "/delete"); !strings.Contains(string(r.body), "0 transactions") {
		t.Fatalf("delete confirmation: %s", r.body)
	}
	if r := b.post(loc+"/delete", nil); r.status != 303 {
		t.Fatalf("delete: %d", r.status)
	}
	if _, err := e.store.Account(ctx, e.alpha.Family.ID, uuidOf(t, id)); err != models.ErrNotFound {
		t.Fatalf("deleted account: %v", err)
	}
}

func TestTransactionScreens(t *testing.T) {
	e := newEnv(t)
	b := signedInBrowser(t, e)
	ctx := t.Context()
	acct := e.alpha.Account.ID.String()

	b.get("/transactions/new")
	// Missing and malformed fields: every problem beside its field, nothing written.
	r := b.post("/transactions", url.Values{"account_id": {acct}, "date": {"2026-13-01"}, "type": {"expense"}, "amount": {"-5"}, "name": {"Groceries"}})
	body := string(r.body)
	if r.status != 422 || !strings.Contains(body, "must be a date") || !strings.Contains(body, "positive amount") || !strings.Contains(body, `value="Groceries"`) {
		t.Fatalf("bad transaction: %d %s", r.status, body)
	}
	// Another family's account in the form is refused like a missing one.
	r = b.post("/transactions", url.Values{"account_id": {e.beta.Account.ID.String()}, "date": {"2026-01-05"}, "type": {"expense"}, "amount": {"5"}, "name": {"x"}})
	if r.status != 422 || !strings.Contains(string(r.body), "Choose an account") {
		t.Fatalf("other family's account: %d", r.status)
	}
	if _, n, _ := e.store.Transactions(ctx, e.alpha.Family.ID, models.TransactionFilter{}, models.Page{Number: 1, Size: 1}); n != 0 {
		t.Fatalf("%d transactions written by refused forms", n)
	}

	for _, tx := range []url.Values{
		{"account_id": {acct}, "date": {"2026-01-05"}, "type": {"expense"}, "amount": {"42.50"}, "name": {"Groceries"}},
		{"account_id": {acct}, "date": {"2026-01-06"}, "type": {"income"}, "amount": {"1000"}, "name": {"Salary"}},
	} {
		if r := b.post("/transactions", tx); r.status != 303 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
	}
	a, err := e.store.Account(ctx, e.alpha.Family.ID, e.alpha.Account.ID)
	if err != nil || a.Balance != models.Amount(957_5000) {
		t.Fatalf("balance after two transactions: %v %v", a.Balance, err)
	}
	// The register runs the balance: after the groceries on the 5th, -42.50;
	// after the salary on the 6th, 957.50.
	reg := string(b.get("/accounts/" + acct).body)
	if !strings.Contains(reg, "-$42.50") || !strings.Contains(reg, "$957.50") || !strings.Contains(reg, "<svg") {
		t.Fatalf("register: %s", reg)
	}
	r = b.get("/transactions?q=salary")
	if !strings.Contains(string(r.body), `<span class="in">+$1,000.00</span>`) || strings.Contains(string(r.body), "Groceries") {
		t.Fatalf("search: %s", r.body)
	}
	if r := b.get("/transactions?from=nope&min=-3"); r.status != 200 || !strings.Contains(string(r.body), "Use a date") {
		t.Fatalf("bad filters: %d", r.status)
	}

	rows, _, _ := e.store.Transactions(ctx, e.alpha.Family.ID, models.TransactionFilter{Search: "Groceries"}, models.Page{Number: 1, Size: 1})
	g := rows[0]
	path := "/transactions/" + g.ID.String()
	edit := b.get(path + "/edit")
	updated := regexp.MustCompile(`name="updated" value="([^"]+)"`).FindSubmatch(edit.body)
	if edit.status != 200 || updated == nil {
		t.Fatalf("edit form: %d", edit.status)
	}
	form := url.Values{"account_id": {acct}, "date": {"2026-01-05"}, "type": {"expense"}, "amount": {"40"}, "name": {"Groceries"}, "updated": {string(updated[1])}}
	if r := b.post(path, form); r.status != 303 {
		t.Fatalf("edit: %d %s", r.status, r.body)
	}
	// The same form again is stale: the row changed since it was drawn.
	if r := b.post(path, form); r.status != 409 {
		t.Fatalf("stale edit: %d", r.status)
	}

	beta := &models.Transaction{FamilyID: e.beta.Family.ID, AccountID: e.beta.Account.ID, Date: "2026-01-01", Amount: 10_0000, Currency: "USD", Name: "theirs"}
	if _, _, err := e.store.CreateTransaction(ctx, beta, nil); err != nil {
		t.Fatal(err)
	}
	if r := b.get("/transactions/" + beta.ID.String() + "/edit"); r.status != 404 {
		t.Errorf("another family's transaction: %d", r.status)
	}
	if r := b.post("/transactions/"+beta.ID.String()+"/delete", nil); r.status != 404 {
		t.Errorf("delete another family's transaction: %d", r.status)
	}
	if r := b.post(path+"/delete", nil); r.status != 303 {
		t.Fatalf("delete: %d", r.status)
	}
	if r := b.post(path, form); r.status != 404 {
		t.Fatalf("edit of a deleted transaction: %d", r.status)
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
	e := newEnv(t)
	b := signedInBrowser(t, e)
	ctx := t.Context()
	fam := e.alpha.Family.ID

	b.get("/categories")
	for _, name := range []string{"Groceries", "Food"} {
		if r := b.post("/categories", url.Values{"name": {name}, "classification": {"expense"}, "color": {"#112233"}}); r.status != 303 {
			t.Fatalf("add %s: %d %s", name, r.status, r.body)
		}
	}
	r := b.post("/categories", url.Values{"name": {"Food"}, "classification": {"expense"}, "color": {"#112233"}})
	if r.status != 422 || !strings.Contains(string(r.body), "already exists") {
		t.Fatalf("duplicate name: %d", r.status)
	}
	if r := b.post("/categories", url.Values{"name": {""}, "classification": {"sideways"}, "color": {"red"}}); r.status != 422 ||
		!strings.Contains(string(r.body), "can&#39;t be blank") || !strings.Contains(string(r.body), "#1a2b3c") {
		t.Fatalf("bad category: %d %s", r.status, r.body)
	}
	cats, _, _ := e.store.Categories(ctx, fam, models.Page{Number: 1, Size: 10})
	byName := map[string]models.Category{}
	for _, c := range cats {
		byName[c.Name] = c
	}
	groceries, food := byName["Groceries"], byName["Food"]

	var ids []string
	for i, name := range []string{"Market", "Bakery", "Rent"} {
		tx := &models.Transaction{FamilyID: fam, AccountID: e.alpha.Account.ID, Date: models.Date("2026-01-0" + string(rune('1'+i))),
			Amount: 10_0000, Currency: "USD", Name: name}
		if _, _, err := e.store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tx.ID.String())
	}
	// Bulk: two selected rows get Groceries, and a foreign id is ignored.
	r = b.post("/transactions/bulk", url.Values{"ids": {ids[0], ids[1], e.beta.Account.ID.String()}, "category_id": {groceries.ID.String()}, "return_to": {"/transactions"}})
	if r.status != 303 {
		t.Fatalf("bulk: %d %s", r.status, r.body)
	}
	_, n, _ := e.store.Transactions(ctx, fam, models.TransactionFilter{CategoryIDs: []uuid.UUID{groceries.ID}}, models.Page{Number: 1, Size: 1})
	if n != 2 {
		t.Fatalf("%d transactions in Groceries after bulk", n)
	}

	if r := b.get("/categories/" + groceries.ID.String() + "/delete"); !strings.Contains(string(r.body), "2 transactions use this category") ||
		!strings.Contains(string(r.body), "become uncategorized") {
		t.Fatalf("delete confirmation: %s", r.body)
	}
	if r := b.post("/categories/"+groceries.ID.String()+"/merge", url.Values{"into_id": {food.ID.String()}}); r.status != 303 {
		t.Fatalf("merge: %d %s", r.status, r.body)
	}
	_, n, _ = e.store.Transactions(ctx, fam, models.TransactionFilter{CategoryIDs: []uuid.UUID{food.ID}}, models.Page{Number: 1, Size: 1})
	if n != 2 {
		t.Fatalf("%d transactions in Food after merge", n)
	}
	if r := b.get("/categories/" + groceries.ID.String() + "/edit"); r.status != 404 {
		t.Fatalf("merged category still there: %d", r.status)
	}

	// Another family's tag: 404 everywhere.
	theirs := &models.Tag{FamilyID: e.beta.Family.ID, Name: "theirs", Color: "#000000"}
	if err := e.store.CreateTag(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/tags/" + theirs.ID.String() + "/edit", "/tags/" + theirs.ID.String() + "/delete"} {
		if r := b.get(p); r.status != 404 {
			t.Errorf("GET %s: %d", p, r.status)
		}
	}
	if r := b.post("/tags/"+theirs.ID.String()+"/delete", nil); r.status != 404 {
		t.Errorf("delete another family's tag: %d", r.status)
	}
	if r := b.post("/merchants", url.Values{"name": {"Corner shop"}}); r.status != 303 {
		t.Fatalf("add merchant: %d", r.status)
	}
	if r := b.get("/merchants"); !strings.Contains(string(r.body), "Corner shop") {
		t.Fatal("merchant not listed")
	}
}

func TestBudgetScreen(t *testing.T) {
	e := newEnv(t)
	b := signedInBrowser(t, e)
	ctx := t.Context()
	fam := e.alpha.Family.ID
	food := &models.Category{FamilyID: fam, Name: "Food", Color: "#112233", Classification: "expense"}
	if err := e.store.CreateCategory(ctx, food); err != nil {
		t.Fatal(err)
	}
	month := time.Now().UTC().Format("2006-01")
	tx := &models.Transaction{FamilyID: fam, AccountID: e.alpha.Account.ID, Date: models.DateOf(time.Now()), Amount: 30_0000,
		Currency: "USD", Name: "Market", CategoryID: &food.ID}
	if _, _, err := e.store.CreateTransaction(ctx, tx, nil); err != nil {
		t.Fatal(err)
	}
	r := b.get("/budgets")
	line := regexp.MustCompile(`name="(amount_[0-9a-f-]{36})"`).FindSubmatch(r.body)
	if r.status != 200 || line == nil {
		t.Fatalf("budget page: %d %s", r.status, r.body)
	}
	field := string(line[1])
	rollover := "rollover_" + strings.TrimPrefix(field, "amount_")
	bad := b.post("/budgets?month="+month, url.Values{"budgeted_spending": {"lots"}, field: {"120"}})
	if bad.status != 422 || !strings.Contains(string(bad.body), `value="lots"`) || !strings.Contains(string(bad.body), `value="120"`) {
		t.Fatalf("bad budget form: %d %s", bad.status, bad.body)
	}
	if r := b.post("/budgets?month="+month, url.Values{"budgeted_spending": {"500"}, field: {"120"}, rollover: {"1"}}); r.status != 303 {
		t.Fatalf("save budget: %d %s", r.status, r.body)
	}
	r = b.get("/budgets?month=" + month)
	if !strings.Contains(string(r.body), "$90.00") || !strings.Contains(string(r.body), "$470.00") || !strings.Contains(string(r.body), "checked") {
		t.Fatalf("budget after saving: %s", r.body)
	}
	if r := b.get("/budgets?month=nope"); r.status != 404 {
		t.Fatalf("bad month: %d", r.status)
	}
	// Copy last month: there is none before this one, which it says.
	prev := time.Now().UTC().AddDate(0, 1, 0).Format("2006-01")
	if r := b.post("/budgets?month="+prev, url.Values{"copy": {"1"}}); r.status != 303 {
		t.Fatalf("copy: %d %s", r.status, r.body)
	}
	if r := b.get("/budgets?month=" + prev); !strings.Contains(string(r.body), `value="120.00"`) {
		t.Fatalf("copied budget: %s", r.body)
	}
}

func TestReportScreens(t *testing.T) {
	e := newEnv(t)
	b := signedInBrowser(t, e)
	ctx := t.Context()
	fam := e.alpha.Family.ID
	salary := &models.Category{FamilyID: fam, Name: "=Salary", Color: "#112233", Classification: "income"}
	if err := e.store.CreateCategory(ctx, salary); err != nil {
		t.Fatal(err)
	}
	for _, tx := range []*models.Transaction{
		{Date: "2026-01-05", Amount: -2000_0000, Name: "Pay", CategoryID: &salary.ID},
		{Date: "2026-01-07", Amount: 150_0000, Name: "Market"},
		{Date: "2026-02-03", Amount: 50_0000, Name: "Market"},
	} {
		tx.FamilyID, tx.AccountID, tx.Currency = fam, e.alpha.Account.ID, "USD"
		if _, _, err := e.store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
	}
	r := b.get("/reports?from=2026-01-01&to=2026-02-28")
	body := string(r.body)
	if r.status != 200 || !strings.Contains(body, "$2,000.00") || !strings.Contains(body, "$1,850.00") || !strings.Contains(body, "<svg") {
		t.Fatalf("reports: %d %s", r.status, body)
	}
	if r := b.get("/reports?from=yesterday&to=2026-02-30"); r.status != 200 || !strings.Contains(string(r.body), "Use a date") {
		t.Fatalf("bad period: %d", r.status)
	}
	csv := b.get("/reports/income_statement.csv?from=2026-01-01&to=2026-02-28")
	if csv.status != 200 || !strings.Contains(string(csv.body), "income,'=Salary,,USD,2000.00,0.00,2000.00") {
		t.Fatalf("income statement CSV: %d %s", csv.status, csv.body)
	}
	flow := b.get("/reports/cash_flow.csv?from=2026-01-01&to=2026-02-28")
	if !strings.Contains(string(flow.body), "2026-01,USD,2000.00,150.00,1850.00") {
		t.Fatalf("cash flow CSV: %s", flow.body)
	}
	if r := b.get("/reports/nothing.csv"); r.status != 404 {
		t.Fatalf("unknown report: %d", r.status)
	}
}

func TestMembersAndInvitations(t *testing.T) {
	e := newEnv(t)
	admin := signedInBrowser(t, e)
	ctx := t.Context()

	admin.get("/settings/members")
	r := admin.post("/settings/members/invitations", url.Values{"email": {"spouse@example.com"}, "role": {"member"}})
	link := regexp.MustCompile(`id="invitation-link">http://example.com(/invitations/[A-Za-z0-9_-]+)<`).FindSubmatch(r.body)
	if r.status != 201 || link == nil {
		t.Fatalf("invite: %d %s", r.status, r.body)
	}
	path := string(link[1])
	if r := admin.post("/settings/members/invitations", url.Values{"email": {"not an address"}, "role": {"member"}}); r.status != 422 ||
		!strings.Contains(string(r.body), "valid email") {
		t.Fatalf("bad invitation: %d", r.status)
	}

	guest := e.browser(t)
	if r := guest.get(path); r.status != 200 || !strings.Contains(string(r.body), "spouse@example.com") {
		t.Fatalf("invitation page: %d %s", r.status, r.body)
	}
	if r := guest.post(path, url.Values{"password": {"short"}, "password_confirmation": {"short"}}); r.status != 422 {
		t.Fatalf("short password: %d", r.status)
	}
	r = guest.post(path, url.Values{"password": {"a long enough password"}, "password_confirmation": {"a long enough password"}})
	if r.status != 303 || r.header.Get("Location") != "/" {
		t.Fatalf("accept: %d %s", r.status, r.body)
	}
	if r := guest.get("/accounts"); r.status != 200 || !strings.Contains(string(r.body), "Checking") {
		t.Fatalf("the new member sees the family's accounts: %d", r.status)
	}
	users, _, _ := e.store.Users(ctx, models.UserFilter{FamilyID: &e.alpha.Family.ID, Query: "spouse"}, models.Page{Number: 1, Size: 5})
	if len(users) != 1 || users[0].Role != models.RoleMember {
		t.Fatalf("joined user: %+v", users)
	}
	// Used twice: refused.
	if r := e.browser(t).get(path); r.status != 410 || !strings.Contains(string(r.body), "already been used") {
		t.Fatalf("used link: %d", r.status)
	}
	// A member sees the list but may not invite.
	if r := guest.get("/settings/members"); r.status != 200 || strings.Contains(string(r.body), "Invite someone") {
		t.Fatalf("member's view: %d", r.status)
	}
	if r := guest.post("/settings/members/invitations", url.Values{"email": {"x@example.com"}, "role": {"member"}}); r.status != 403 {
		t.Fatalf("member invites: %d", r.status)
	}

	// An address that belongs to another family, and a revoked link.
	r = admin.post("/settings/members/invitations", url.Values{"email": {e.beta.User.Email}, "role": {"member"}})
	taken := regexp.MustCompile(`(/invitations/[A-Za-z0-9_-]+)<`).FindSubmatch(r.body)
	g2 := e.browser(t)
	g2.get(string(taken[1]))
	if r := g2.post(string(taken[1]), url.Values{"password": {"a long enough password"}, "password_confirmation": {"a long enough password"}}); r.status != 409 {
		t.Fatalf("email of another family: %d", r.status)
	}
	r = admin.post("/settings/members/invitations", url.Values{"email": {"cousin@example.com"}, "role": {"member"}})
	revoked := regexp.MustCompile(`(/invitations/[A-Za-z0-9_-]+)<`).FindSubmatch(r.body)
	invs, _ := e.store.Invitations(ctx, e.alpha.Family.ID)
	for _, inv := range invs {
		if inv.Email == "cousin@example.com" {
			if r := admin.post("/settings/members/invitations/"+inv.ID.String()+"/revoke", nil); r.status != 303 {
				t.Fatalf("revoke: %d", r.status)
			}
		}
	}
	if r := e.browser(t).get(string(revoked[1])); r.status != 410 {
		t.Fatalf("revoked link: %d", r.status)
	}
	if r := e.browser(t).get("/invitations/nonsense"); r.status != 404 {
		t.Fatalf("unknown link: %d", r.status)
	}
}

// TestSignupClosed: with AUTH_SIGNUP_ENABLED off, no new family can be
// made and the login page does not offer it; invitations still work.
func TestSignupClosed(t *testing.T) {
	e := newEnv(t, func(o *api.Options) { o.Web.SignupEnabled = false })
	b := e.browser(t)
	if r := b.get("/sessions/new"); strings.Contains(string(r.body), "/registrations/new") {
		t.Fatal("the login page offers sign-up")
	}
	if r := b.get("/registrations/new"); r.status != 403 || !strings.Contains(string(r.body), "Sign-up is closed") {
		t.Fatalf("sign-up page: %d", r.status)
	}
	r := b.post("/registrations", url.Values{"family": {"X"}, "currency": {"USD"}, "email": {"x@example.com"}, "password": {"long enough password"}})
	if r.status != 403 {
		t.Fatalf("registration: %d", r.status)
	}
	if fams, _ := e.store.Families(t.Context()); len(fams) != 2 {
		t.Fatalf("%d families", len(fams))
	}
}
