package screens_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/sso/ssotest"
)

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
	e := apitest.NewEnv(t)
	b := apitest.SuperAdmin(t, e)
	// A provider, for its callback URL's copy button.
	b.Get("/admin/sso_providers/new?strategy=openid_connect")
	if r := b.Post("/admin/sso_providers", apitest.OIDCForm(ssotest.NewProvider(t), "corp")); r.Status != 303 {
		t.Fatalf("add a provider: %d %s", r.Status, r.Body)
	}
	var src string
	for _, p := range strictPages {
		r := b.Get(p)
		body := string(r.Body)
		if r.Status != 200 {
			t.Fatalf("%s: %d", p, r.Status)
		}
		csp := r.Header.Get("Content-Security-Policy")
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
	r := b.Get(src)
	if r.Status != 200 || !strings.Contains(r.Header.Get("Content-Type"), "javascript") ||
		r.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || !strings.Contains(string(r.Body), "data-live") {
		t.Fatalf("%s: %d %v", src, r.Status, r.Header)
	}
	for _, p := range []string{"/static/app.0123456789abcdef.js", "/static/app.js", "/static/..%2Fsite.go"} {
		if r := b.Get(p); r.Status != 404 {
			t.Errorf("%s: %d", p, r.Status)
		}
	}
}

// TestInlineCategoryEdit posts as the list's script does: the category
// alone, with the row's version. The answer is the row redrawn; a stale
// version or a category that is gone is refused with the row as it stands
// and the problem in it. The tags stay, and a plain form still redirects.
func TestInlineCategoryEdit(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	l := apitest.NewSmallLedger(t, e)
	path := "/transactions/" + l.Market.ID.String()
	fetched := map[string]string{"X-Requested-With": "fetch"}

	list := b.Get("/transactions?q=market")
	row := regexp.MustCompile(`(?s)<tr id="tx-` + l.Market.ID.String() + `">.*?</tr>`).Find(list.Body)
	version := rowUpdated.FindSubmatch(row)
	if version == nil || !strings.Contains(string(row), `data-inline-edit="category_id"`) {
		t.Fatalf("the list's row: %s", row)
	}
	form := url.Values{"csrf_token": {b.CSRF}, "updated": {string(version[1])}, "category_id": {l.Groceries.ID.String()},
		"return_to": {"/transactions?q=market"}}
	r := b.Send("POST", path, form, fetched)
	body := string(r.Body)
	if r.Status != 200 || !strings.HasPrefix(body, `<tr id="tx-`+l.Market.ID.String()+`">`) || !strings.Contains(body, ">Groceries<") ||
		!strings.Contains(body, "return_to=%2Ftransactions%3Fq%3Dmarket") || strings.Contains(body, "<html") || r.Header.Get("Location") != "" {
		t.Fatalf("inline edit: %d %s", r.Status, body)
	}
	if saved := apitest.Stored(t, e, l.Market.ID); saved.CategoryID == nil || *saved.CategoryID != l.Groceries.ID || len(saved.Tags) != 1 || saved.Amount != 42_5000 {
		t.Fatalf("after the inline edit: %+v", saved)
	}

	// The same version again is stale: the row comes back as it now stands.
	form.Set("category_id", l.Fun.ID.String())
	r = b.Send("POST", path, form, fetched)
	if body := string(r.Body); r.Status != 409 || !strings.Contains(body, "changed meanwhile") || !strings.Contains(body, ">Groceries<") {
		t.Fatalf("stale inline edit: %d %s", r.Status, body)
	}

	// A category deleted since the page was drawn.
	gone := uuid.New()
	form.Set("updated", string(rowUpdated.FindSubmatch(r.Body)[1]))
	form.Set("category_id", gone.String())
	r = b.Send("POST", path, form, fetched)
	if body := string(r.Body); r.Status != 422 || !strings.Contains(body, `class="field-error"`) || !strings.Contains(body, gone.String()+" not found") {
		t.Fatalf("a category that is gone: %d %s", r.Status, body)
	}

	// Without the script's header the same post is a plain form: every
	// field is read, so this one is incomplete.
	if r := b.Post(path, url.Values{"updated": {form.Get("updated")}, "category_id": {l.Fun.ID.String()}}); r.Status != 422 || !strings.Contains(string(r.Body), "<html") {
		t.Fatalf("plain post: %d", r.Status)
	}
	// Another family's transaction is a 404 here too.
	beta := &models.Transaction{FamilyID: e.Beta.Family.ID, AccountID: e.Beta.Account.ID, Date: "2026-01-01", Amount: 10_0000, Currency: "USD", Name: "theirs"}
	if _, _, err := e.Store.CreateTransaction(t.Context(), beta, nil); err != nil {
		t.Fatal(err)
	}
	if r := b.Send("POST", "/transactions/"+beta.ID.String(), form, fetched); r.Status != 404 {
		t.Fatalf("another family's transaction: %d", r.Status)
	}
}
