package api_test

import (
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

var (
	scriptTag   = regexp.MustCompile(`<script[^>]*>`)
	scriptSrc   = regexp.MustCompile(`<script src="(/static/app\.[0-9a-f]{16}\.js)" defer>`)
	eventAttr   = regexp.MustCompile(`<[^>]*\son[a-z]+=`)
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
