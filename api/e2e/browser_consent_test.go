package e2e_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"coffer/api/apitest"
	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"
)

// TestBrowserConsent drives the authorization code flow in headless
// Chromium, on a phone's screen: the app's authorization URL, the sign-in
// it leads to, the consent screen (readable without sideways scrolling),
// Allow, and the app's loopback redirect URI receiving the code, which
// golang.org/x/oauth2 exchanges; then Deny.
func TestBrowserConsent(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")

	// The app: a loopback server on a port of its own (RFC 8252 §7.3).
	var mu sync.Mutex
	var got url.Values
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r) // the browser's favicon request
			return
		}
		mu.Lock()
		got = r.URL.Query()
		mu.Unlock()
		fmt.Fprint(w, "<!doctype html><title>Signed in</title><p id=done>You can close this window.</p>")
	}))
	t.Cleanup(app.Close)
	ctx := apitest.OAuthClientCtx(t)
	clientID := apitest.RegisterClient(t, ctx, base, "http://127.0.0.1/callback")
	conf := &oauth2.Config{ClientID: clientID, RedirectURL: app.URL + "/callback", Scopes: []string{"read_write"},
		Endpoint: oauth2.Endpoint{AuthURL: base + "/oauth/authorize", TokenURL: base + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()

	c := apitest.NewChrome(t)
	c.Run("sign in from the app's authorization URL",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(conf.AuthCodeURL("state-0123456789", oauth2.S256ChallengeOption(verifier))),
		chromedp.WaitVisible(`#email`),
		chromedp.SendKeys(`#email`, e.Alpha.User.Email),
		chromedp.SendKeys(`#password`, "correct horse battery"),
		chromedp.Submit(`#password`),
		chromedp.WaitVisible(`#allow`),
	)
	page := c.Text(`#consent`)
	if !strings.Contains(page, "Budget Helper") || !strings.Contains(page, "read and change") || !strings.Contains(page, "127.0.0.1") {
		t.Fatalf("consent screen: %q", page)
	}
	if deny := c.Text(`#deny`); deny != "Deny" {
		t.Fatalf("deny button %q", deny)
	}
	wide, err := chromedp.Run(c.Ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
	if err != nil || wide {
		c.Fail("the consent screen scrolls sideways on a phone", err)
	}
	c.Run("allow", chromedp.Click(`#allow`), chromedp.WaitVisible(`#done`))
	mu.Lock()
	q := got
	mu.Unlock()
	if q.Get("state") != "state-0123456789" || q.Get("code") == "" {
		t.Fatalf("the app received %v", q)
	}
	tok, err := conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if st, _, _ := apitest.GetJSON(t, ctx, "POST", base+"/api/v1/tags", map[string]any{"tag": map[string]any{"name": "from chromium"}}, apitest.Bearer(tok.AccessToken)); st != 201 {
		t.Fatalf("write with the granted token: %d", st)
	}

	// Deny: the app hears access_denied and gets no code.
	c.Run("deny",
		chromedp.Navigate(conf.AuthCodeURL("state-9876543210", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))),
		chromedp.WaitVisible(`#deny`),
		chromedp.Click(`#deny`),
		chromedp.WaitVisible(`#done`),
	)
	mu.Lock()
	q = got
	mu.Unlock()
	if q.Get("error") != "access_denied" || q.Get("code") != "" || q.Get("state") != "state-9876543210" {
		t.Fatalf("after deny the app received %v", q)
	}
}
