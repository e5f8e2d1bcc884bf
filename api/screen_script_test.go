package api_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/sso/ssotest"
)

// smallLedger is alpha's checking account and a card, two categories and
// a transaction in each account, the market run tagged.
type smallLedger struct {
	card           *models.Account
	groceries, fun *models.Category
	tag            *models.Tag
	market, coffee *models.Transaction
}

func newSmallLedger(t *testing.T, e *env) smallLedger {
	t.Helper()
	ctx, fam := t.Context(), e.alpha.Family.ID
	l := smallLedger{
		card:      &models.Account{FamilyID: fam, Name: "Visa", AccountType: "credit_card", Currency: "USD"},
		groceries: &models.Category{FamilyID: fam, Name: "Groceries", Color: "#112233", Classification: "expense"},
		fun:       &models.Category{FamilyID: fam, Name: "Fun", Color: "#112233", Classification: "expense"},
		tag:       &models.Tag{FamilyID: fam, Name: "weekly", Color: "#112233"},
	}
	for _, err := range []error{e.store.CreateAccount(ctx, l.card), e.store.CreateCategory(ctx, l.groceries),
		e.store.CreateCategory(ctx, l.fun), e.store.CreateTag(ctx, l.tag)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	l.market = &models.Transaction{FamilyID: fam, AccountID: e.alpha.Account.ID, Date: "2026-01-05", Amount: 42_5000, Currency: "USD", Name: "Corner market"}
	l.coffee = &models.Transaction{FamilyID: fam, AccountID: l.card.ID, Date: "2026-01-06", Amount: 4_5000, Currency: "USD", Name: "Coffee"}
	for _, tx := range []struct {
		t    *models.Transaction
		tags []uuid.UUID
	}{{l.market, []uuid.UUID{l.tag.ID}}, {l.coffee, nil}} {
		if _, _, err := e.store.CreateTransaction(ctx, tx.t, tx.tags); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// stored is the alpha family's transaction id as the database has it now.
func stored(t *testing.T, e *env, id uuid.UUID) *models.Transaction {
	t.Helper()
	tx, err := e.store.Transaction(t.Context(), e.alpha.Family.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

var (
	scriptTag   = regexp.MustCompile(`<script[^>]*>`)
	scriptSrc   = regexp.MustCompile(`<script src="(/static/app\.[0-9a-f]{16}\.js)" defer>`)
	eventAttr   = regexp.MustCompile(`<[^>]*\son[a-z]+=`)
	rowUpdated  = regexp.MustCompile(`data-updated="([^"]+)"`)
	strictPages = []string{"/", "/transactions", "/accounts", "/categories", "/budgets", "/reports", "/settings/api_keys", "/admin/sso_providers"}
)

// TestScreenScriptAndPolicy: every screen loads the one script file by its
// hashed name and carries no inline script, under a policy that runs
// nothing else; the file is cached for a year, and a name that is not the
// current one is a 404.
func TestScreenScriptAndPolicy(t *testing.T) {
	e := newEnv(t)
	b := superAdmin(t, e)
	// A provider, for its callback URL's copy button.
	b.get("/admin/sso_providers/new?strategy=openid_connect")
	if r := b.post("/admin/sso_providers", oidcForm(ssotest.NewProvider(t), "corp")); r.status != 303 {
		t.Fatalf("add a provider: %d %s", r.status, r.body)
	}
	var src string
	for _, p := range strictPages {
		r := b.get(p)
		body := string(r.body)
		if r.status != 200 {
			t.Fatalf("%s: %d", p, r.status)
		}
		csp := r.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self';") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Fatalf("%s: Content-Security-Policy %q", p, csp)
		}
		for _, tag := range scriptTag.FindAllString(body, -1) {
			if !scriptSrc.MatchString(tag) {
				t.Fatalf("%s: a script that is not the file: %s", p, tag)
			}
		}
		if m := eventAttr.FindString(body); m != "" {
			t.Fatalf("%s: an inline event handler: %s", p, m)
		}
		src = scriptSrc.FindStringSubmatch(body)[1]
		if p == "/admin/sso_providers" && !strings.Contains(body, `data-copy="callback-corp" hidden>Copy</button>`) {
			t.Fatalf("%s: no copy button for the script to show: %s", p, body)
		}
	}
	r := b.get(src)
	if r.status != 200 || !strings.Contains(r.header.Get("Content-Type"), "javascript") ||
		r.header.Get("Cache-Control") != "public, max-age=31536000, immutable" || !strings.Contains(string(r.body), "data-live") {
		t.Fatalf("%s: %d %v", src, r.status, r.header)
	}
	for _, p := range []string{"/static/app.0123456789abcdef.js", "/static/app.js", "/static/..%2Fsite.go"} {
		if r := b.get(p); r.status != 404 {
			t.Errorf("%s: %d", p, r.status)
		}
	}
}

// TestInlineCategoryEdit posts as the list's script does: the category
// alone, with the row's version. The answer is the row redrawn; a stale
// version or a category that is gone is refused with the row as it stands
// and the problem in it. The tags stay, and a plain form still redirects.
func TestInlineCategoryEdit(t *testing.T) {
	e := newEnv(t)
	b := signedInBrowser(t, e)
	l := newSmallLedger(t, e)
	path := "/transactions/" + l.market.ID.String()
	fetched := map[string]string{"X-Requested-With": "fetch"}

	list := b.get("/transactions?q=market")
	row := regexp.MustCompile(`(?s)<tr id="tx-` + l.market.ID.String() + `">.*?</tr>`).Find(list.body)
	version := rowUpdated.FindSubmatch(row)
	if version == nil || !strings.Contains(string(row), `data-inline-edit="category_id"`) {
		t.Fatalf("the list's row: %s", row)
	}
	form := url.Values{"csrf_token": {b.csrf}, "updated": {string(version[1])}, "category_id": {l.groceries.ID.String()},
		"return_to": {"/transactions?q=market"}}
	r := b.send("POST", path, form, fetched)
	body := string(r.body)
	if r.status != 200 || !strings.HasPrefix(body, `<tr id="tx-`+l.market.ID.String()+`">`) || !strings.Contains(body, ">Groceries<") ||
		!strings.Contains(body, "return_to=%2Ftransactions%3Fq%3Dmarket") || strings.Contains(body, "<html") || r.header.Get("Location") != "" {
		t.Fatalf("inline edit: %d %s", r.status, body)
	}
	if saved := stored(t, e, l.market.ID); saved.CategoryID == nil || *saved.CategoryID != l.groceries.ID || len(saved.Tags) != 1 || saved.Amount != 42_5000 {
		t.Fatalf("after the inline edit: %+v", saved)
	}

	// The same version again is stale: the row comes back as it now stands.
	form.Set("category_id", l.fun.ID.String())
	r = b.send("POST", path, form, fetched)
	if body := string(r.body); r.status != 409 || !strings.Contains(body, "changed meanwhile") || !strings.Contains(body, ">Groceries<") {
		t.Fatalf("stale inline edit: %d %s", r.status, body)
	}

	// A category deleted since the page was drawn.
	gone := uuid.New()
	form.Set("updated", string(rowUpdated.FindSubmatch(r.body)[1]))
	form.Set("category_id", gone.String())
	r = b.send("POST", path, form, fetched)
	if body := string(r.body); r.status != 422 || !strings.Contains(body, `class="field-error"`) || !strings.Contains(body, gone.String()+" not found") {
		t.Fatalf("a category that is gone: %d %s", r.status, body)
	}

	// Without the script's header the same post is a plain form: every
	// field is read, so this one is incomplete.
	if r := b.post(path, url.Values{"updated": {form.Get("updated")}, "category_id": {l.fun.ID.String()}}); r.status != 422 || !strings.Contains(string(r.body), "<html") {
		t.Fatalf("plain post: %d", r.status)
	}
	// Another family's transaction is a 404 here too.
	beta := &models.Transaction{FamilyID: e.beta.Family.ID, AccountID: e.beta.Account.ID, Date: "2026-01-01", Amount: 10_0000, Currency: "USD", Name: "theirs"}
	if _, _, err := e.store.CreateTransaction(t.Context(), beta, nil); err != nil {
		t.Fatal(err)
	}
	if r := b.send("POST", "/transactions/"+beta.ID.String(), form, fetched); r.status != 404 {
		t.Fatalf("another family's transaction: %d", r.status)
	}
}
