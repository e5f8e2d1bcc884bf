package api_test

import (
	"regexp"
	"strings"
	"testing"

	"coffer/sso/ssotest"
)

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
		r.header.Get("Cache-Control") != "public, max-age=31536000, immutable" || !strings.Contains(string(r.body), "data-copy") {
		t.Fatalf("%s: %d %v", src, r.status, r.header)
	}
	for _, p := range []string{"/static/app.0123456789abcdef.js", "/static/app.js", "/static/..%2Fsite.go"} {
		if r := b.get(p); r.status != 404 {
			t.Errorf("%s: %d", p, r.status)
		}
	}
}
