package signin_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"coffer/api/apitest"
	"coffer/models"
)

// TestConsentNativeRedirect: a private-use scheme's redirect is shown
// whole on the consent screen; its "host" alone would read as a website
// (evil://accounts.google.com/ as "sent to accounts.google.com").
func TestConsentNativeRedirect(t *testing.T) {
	e := apitest.NewEnv(t, apitest.TrustLoopback)
	base := e.Listen()
	ctx := apitest.OAuthClientCtx(t)
	clientID := apitest.RegisterClient(t, ctx, base, "evil://accounts.google.com/", "https://budget.example/cb")
	b := apitest.SignedInBrowser(t, e)
	page := func(redirect string) string {
		t.Helper()
		conf := &oauth2.Config{ClientID: clientID, RedirectURL: redirect, Scopes: []string{"read"},
			Endpoint: oauth2.Endpoint{AuthURL: base + "/oauth/authorize"}}
		u, _ := url.Parse(conf.AuthCodeURL("state-0123456789", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
		r := b.Get(u.RequestURI())
		if r.Status != 200 {
			t.Fatalf("consent for %s: %d %s", redirect, r.Status, r.Body)
		}
		return string(r.Body)
	}
	native := page("evil://accounts.google.com/")
	if !strings.Contains(native, "<code>evil://accounts.google.com/</code>") || strings.Contains(native, "<code>accounts.google.com</code>") {
		t.Errorf("native redirect not shown whole:\n%s", native)
	}
	if web := page("https://budget.example/cb"); !strings.Contains(web, "sent to <code>budget.example</code>") {
		t.Errorf("web redirect not shown by host:\n%s", web)
	}
}

// TestClientNameUnsafeCharacters: dynamic registration refuses a name
// with control or bidirectional-formatting characters (RFC 7591
// invalid_client_metadata), and a name stored before is shown without
// them.
func TestClientNameUnsafeCharacters(t *testing.T) {
	e := apitest.NewEnv(t, apitest.TrustLoopback)
	base := e.Listen()
	for _, name := range []string{"Google\u202eelgooG", "a\u202ab", "a\u202db", "a\u2066b", "a\u2069b", "a\u200eb", "a\u200fb",
		"a\u0085b", "a\u009fb", "a\x01b", "a\x7fb", "a\u061cb"} {
		st, _, m := apitest.GetJSON(t, apitest.OAuthClientCtx(t), "POST", base+"/oauth/register", map[string]any{
			"client_name": name, "redirect_uris": []string{"https://budget.example/cb"}}, nil)
		if st != 400 || m["error"] != "invalid_client_metadata" {
			t.Errorf("client_name %q: %d %v", name, st, m)
		}
	}
	// An ordinary name in any script still registers.
	if st, _, m := apitest.GetJSON(t, apitest.OAuthClientCtx(t), "POST", base+"/oauth/register", map[string]any{
		"client_name": "Haushaltsbuch · 家計簿 · دفتر", "redirect_uris": []string{"https://budget.example/cb"}}, nil); st != 201 {
		t.Errorf("plain name: %d %v", st, m)
	}

	cl := &models.OAuthClient{ID: "cofc_legacy", Name: "Safe\u202eppA", RedirectURIs: []string{"https://budget.example/cb"},
		Scope: models.ScopeRead}
	if err := e.Store.CreateOAuthClient(context.Background(), cl); err != nil {
		t.Fatal(err)
	}
	b := apitest.SignedInBrowser(t, e)
	conf := &oauth2.Config{ClientID: cl.ID, RedirectURL: "https://budget.example/cb", Scopes: []string{"read"},
		Endpoint: oauth2.Endpoint{AuthURL: base + "/oauth/authorize"}}
	u, _ := url.Parse(conf.AuthCodeURL("state-0123456789", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	r := b.Get(u.RequestURI())
	if r.Status != 200 || strings.ContainsRune(string(r.Body), '\u202e') || !strings.Contains(string(r.Body), "SafeppA") {
		t.Errorf("stored name rendered raw: %d %s", r.Status, r.Body)
	}
}
