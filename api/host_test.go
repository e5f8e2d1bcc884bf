package api_test

import (
	"net/url"
	"strings"
	"testing"

	"coffer/api"
)

// TestAppURLHost: a page asked for at another host than APP_URL's is sent
// there once, since its forms would fail; a proxy that rewrites Host cannot
// make that a loop; the API and health checks answer at any host.
func TestAppURLHost(t *testing.T) {
	e := newEnv(t)
	b := e.browser(t)
	other := map[string]string{"Host": "127.0.0.1:3000"}
	r := b.send("GET", "/sessions/new?return_to=%2Faccounts", nil, other)
	if r.status != 302 || r.header.Get("Location") != "http://example.com/sessions/new?return_to=%2Faccounts" {
		t.Fatalf("first visit at another host: %d %q", r.status, r.header.Get("Location"))
	}
	if r := b.send("GET", "/sessions/new", nil, other); r.status != 200 {
		t.Errorf("a second visit within the minute (a proxy rewriting Host) bounced again: %d", r.status)
	}
	for _, path := range []string{"/healthz", "/api/v1/accounts"} {
		if r := e.browser(t).send("GET", path, nil, other); r.status == 302 {
			t.Errorf("%s redirected", path)
		}
	}
	// Production has no loopback aliases: a form posted from one is refused.
	b = e.browser(t)
	b.get("/sessions/new")
	form := url.Values{"email": {e.alpha.User.Email}, "password": {"wrong password"}, "csrf_token": {b.csrf}}
	if r := b.send("POST", "/sessions", form, map[string]string{"Origin": "http://localhost"}); r.status != 403 {
		t.Errorf("a form from another origin: %d", r.status)
	}
}

// TestLoopbackAliasesInDevelopment: on a laptop APP_URL says localhost and
// the browser may say 127.0.0.1 or [::1]; both work, forms included.
func TestLoopbackAliasesInDevelopment(t *testing.T) {
	e := newEnv(t, func(o *api.Options) { o.Web.Origin, o.Web.Development = "http://localhost:3000", true })
	for _, host := range []string{"localhost:3000", "127.0.0.1:3000", "[::1]:3000"} {
		b := e.browser(t)
		h := map[string]string{"Host": host}
		if r := b.send("GET", "/sessions/new", nil, h); r.status != 200 {
			t.Fatalf("%s: %d", host, r.status)
		}
		h["Origin"] = "http://" + host
		form := url.Values{"email": {e.alpha.User.Email}, "password": {"wrong password"}, "csrf_token": {b.csrf}}
		if r := b.send("POST", "/sessions", form, h); r.status == 403 || !strings.Contains(string(r.body), "Invalid email or password") {
			t.Errorf("%s: a form from the alias got %d %s", host, r.status, r.body)
		}
	}
	for _, host := range []string{"127.0.0.1:4000", "192.168.1.5:3000", "coffer.example.com"} {
		if r := e.browser(t).send("GET", "/sessions/new", nil, map[string]string{"Host": host}); r.status != 302 {
			t.Errorf("%s is no alias of localhost:3000, got %d", host, r.status)
		}
	}
}
