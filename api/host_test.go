package api_test

import (
	"net/url"
	"strings"
	"testing"

	"coffer/api"
	"coffer/api/apitest"
)

// TestAppURLHost: a page asked for at another host than APP_URL's is sent
// there once, since its forms would fail; a proxy that rewrites Host cannot
// make that a loop; the API and health checks answer at any host.
func TestAppURLHost(t *testing.T) {
	e := apitest.NewEnv(t)
	b := e.Browser(t)
	other := map[string]string{"Host": "127.0.0.1:3000"}
	r := b.Send("GET", "/sessions/new?return_to=%2Faccounts", nil, other)
	if r.Status != 302 || r.Header.Get("Location") != "http://example.com/sessions/new?return_to=%2Faccounts" {
		t.Fatalf("first visit at another host: %d %q", r.Status, r.Header.Get("Location"))
	}
	if r := b.Send("GET", "/sessions/new", nil, other); r.Status != 200 {
		t.Errorf("a second visit within the minute (a proxy rewriting Host) bounced again: %d", r.Status)
	}
	for _, path := range []string{"/healthz", "/api/v1/accounts"} {
		if r := e.Browser(t).Send("GET", path, nil, other); r.Status == 302 {
			t.Errorf("%s redirected", path)
		}
	}
	// Production has no loopback aliases: a form posted from one is refused.
	b = e.Browser(t)
	b.Get("/sessions/new")
	form := url.Values{"email": {e.Alpha.User.Email}, "password": {"wrong password"}, "csrf_token": {b.CSRF}}
	if r := b.Send("POST", "/sessions", form, map[string]string{"Origin": "http://localhost"}); r.Status != 403 {
		t.Errorf("a form from another origin: %d", r.Status)
	}
}

// TestLoopbackAliasesInDevelopment: on a laptop APP_URL says localhost and
// the browser may say 127.0.0.1 or [::1]; both work, forms included.
func TestLoopbackAliasesInDevelopment(t *testing.T) {
	e := apitest.NewEnv(t, func(o *api.Options) { o.Web.Origin, o.Web.Development = "http://localhost:3000", true })
	for _, host := range []string{"localhost:3000", "127.0.0.1:3000", "[::1]:3000"} {
		b := e.Browser(t)
		h := map[string]string{"Host": host}
		if r := b.Send("GET", "/sessions/new", nil, h); r.Status != 200 {
			t.Fatalf("%s: %d", host, r.Status)
		}
		h["Origin"] = "http://" + host
		form := url.Values{"email": {e.Alpha.User.Email}, "password": {"wrong password"}, "csrf_token": {b.CSRF}}
		if r := b.Send("POST", "/sessions", form, h); r.Status == 403 || !strings.Contains(string(r.Body), "Invalid email or password") {
			t.Errorf("%s: a form from the alias got %d %s", host, r.Status, r.Body)
		}
	}
	for _, host := range []string{"127.0.0.1:4000", "192.168.1.5:3000", "coffer.example.com"} {
		if r := e.Browser(t).Send("GET", "/sessions/new", nil, map[string]string{"Host": host}); r.Status != 302 {
			t.Errorf("%s is no alias of localhost:3000, got %d", host, r.Status)
		}
	}
}
