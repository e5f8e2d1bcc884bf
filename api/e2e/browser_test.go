package e2e_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"coffer/api/apitest"
)

// TestBrowser drives headless Chromium through the screens: sign in, create an API key
// and use it, suspend a user and see their key refused, filter the audit
// log.
func TestBrowser(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	root := apitest.NewSuperAdmin(t, e, e.Alpha.Family)
	c := apitest.NewChrome(t)
	ctx, run, text, fail := c.Ctx, c.Run, c.Text, c.Fail

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
	if status := apiStatus(t, base, e.Alpha.Key); status != 200 {
		t.Fatalf("admin key before: %d", status)
	}
	run("suspend a user",
		chromedp.Navigate(base+"/admin/users/"+e.Alpha.User.ID.String()),
		chromedp.WaitVisible(`#suspend`),
		chromedp.Click(`#suspend`),
		chromedp.WaitVisible(`#reactivate`),
	)
	if state := text(`#status`); state != "suspended" {
		t.Fatalf("status after suspend: %q", state)
	}
	if status := apiStatus(t, base, e.Alpha.Key); status != 401 {
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
