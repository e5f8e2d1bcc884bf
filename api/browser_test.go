package api_test

import (
	"context"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"coffer/api"
	"coffer/sso"
)

// TestBrowser drives headless Chromium through the screens: sign in, create an API key
// and use it, suspend a user and see their key refused, filter the audit
// log.
func TestBrowser(t *testing.T) {
	e, base := serveEnv(t)
	root := newSuperAdmin(t, e, e.alpha.Family)
	c := newChrome(t)
	ctx, run, text, fail := c.ctx, c.run, c.text, c.fail

	// Sign in: the home page sends us to the login form and back.
	run("sign in",
		chromedp.Navigate(base+"/settings/api_keys"),
		chromedp.WaitVisible(`#email`),
		chromedp.SendKeys(`#email`, root.Email),
		chromedp.SendKeys(`#password`, "correct horse battery"),
		chromedp.Submit(`#password`),
		chromedp.WaitVisible(`#name`),
	)
	if heading := text(`h1`); heading != "API keys" {
		t.Fatalf("after sign-in: %q", heading)
	}

	// Create a key and use it on the API.
	run("create a key",
		chromedp.SendKeys(`#name`, "browser key"),
		chromedp.SetValue(`#scope`, "read_write"),
		chromedp.Submit(`#name`),
		chromedp.WaitVisible(`#new-key-value`),
	)
	key := text(`#new-key-value`)
	if status := apiStatus(t, base, strings.TrimSpace(key)); status != 200 {
		t.Fatalf("the new key on the API: %d", status)
	}

	// Suspend the family admin on its page: its key stops working.
	if status := apiStatus(t, base, e.alpha.Key); status != 200 {
		t.Fatalf("admin key before: %d", status)
	}
	run("suspend a user",
		chromedp.Navigate(base+"/admin/users/"+e.alpha.User.ID.String()),
		chromedp.WaitVisible(`#suspend`),
		chromedp.Click(`#suspend`),
		chromedp.WaitVisible(`#reactivate`),
	)
	if state := text(`#status`); state != "suspended" {
		t.Fatalf("status after suspend: %q", state)
	}
	if status := apiStatus(t, base, e.alpha.Key); status != 401 {
		t.Fatalf("suspended user's key: %d", status)
	}

	// Filter the audit log to suspensions.
	run("filter the audit log",
		chromedp.Navigate(base+"/admin/sso_audit_logs"),
		chromedp.WaitVisible(`#event_type`),
		chromedp.SetValue(`#event_type`, "user_suspended"),
		chromedp.SetValue(`#range`, "24h"),
		chromedp.Submit(`#event_type`),
	)
	// Wait for the filtered page itself, not the one the form was on.
	deadline := time.Now().Add(20 * time.Second)
	for {
		search, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.search`))
		if err == nil && strings.Contains(search, "event_type=user_suspended") {
			break
		}
		if time.Now().After(deadline) {
			fail("the filtered page never loaded", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	run("wait for the table", chromedp.WaitVisible(`#audit`))
	events, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#audit td.event')].map(td => td.textContent)`))
	if err != nil {
		fail("read the audit table", err)
	}
	if len(events) != 1 || events[0] != "user_suspended" {
		t.Fatalf("filtered audit log: %v", events)
	}
}

// serveEnv runs a test app on a loopback port, as a browser reaches it.
func serveEnv(t *testing.T, opts ...func(*api.Options)) (*env, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	opts = append([]func(*api.Options){func(o *api.Options) {
		o.Web.Origin = base
		o.Web.TrustedProxies = nil
		o.SSO.Registry = sso.NewRegistry(o.Store, o.Redis, sso.Options{BaseURL: base, HTTPClient: &http.Client{Timeout: 10 * time.Second}}, o.Logger)
	}}, opts...)
	e := newEnv(t, opts...)
	go func() { _ = e.app.Listener(ln) }()
	t.Cleanup(func() { _ = e.app.Shutdown() })
	return e, base
}

// chrome is a headless Chromium (Debian's chromium, installed by
// deploy/test-services.sh) and the steps tests drive it with.
type chrome struct {
	t   *testing.T
	ctx context.Context
}

func newChrome(t *testing.T) *chrome {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: run deploy/test-services.sh (make test does), or apt-get install chromium")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	// The first action starts the browser, bound to the context it runs
	// in: this one, not a step's shorter one.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &chrome{t: t, ctx: ctx}
}

func (c *chrome) fail(what string, err error) {
	c.t.Helper()
	page, _ := chromedp.Run(c.ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.outerHTML`))
	c.t.Fatalf("%s: %v\npage: %s", what, err, page)
}

// run does steps, each group bounded, so that a stuck step still leaves
// time to show the page it is stuck on.
func (c *chrome) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 40*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		c.fail(what, err)
	}
}

func (c *chrome) text(sel string) string {
	c.t.Helper()
	s, err := chromedp.Run(c.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		c.fail("read "+sel, err)
	}
	return s
}

func apiStatus(t *testing.T, base, key string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/v1/accounts", nil)
	req.Header.Set("X-Api-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
