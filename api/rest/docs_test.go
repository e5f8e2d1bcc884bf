package rest_test

import (
	"time"

	"bytes"
	"compress/gzip"
	"encoding/json"
	"html"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"coffer/api"
	"coffer/api/apitest"
)

// TestAPIDocs reads the reference page as a client without a browser
// would: every operation of the document is on it, its Markdown is
// rendered, and its headers let nothing but its own style sheet run.
func TestAPIDocs(t *testing.T) {
	e := apitest.NewEnv(t)
	r := e.Do("GET", "/api/docs", "", nil)
	if r.Status != 200 || r.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("/api/docs: %d %q", r.Status, r.Header.Get("Content-Type"))
	}
	csp := r.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "style-src 'sha256-", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") || strings.Contains(csp, "script-src") {
		t.Errorf("Content-Security-Policy %q allows more than the page's style", csp)
	}
	if r.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("X-Content-Type-Options %q", r.Header.Get("X-Content-Type-Options"))
	}
	page := string(r.Body)
	if strings.Contains(page, "<script") {
		t.Error("the page has a script")
	}

	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(api.OpenAPIJSON, &doc); err != nil {
		t.Fatal(err)
	}
	ops := 0
	for path, item := range doc.Paths {
		for method, raw := range item {
			var op struct{ OperationID, Summary string }
			if method == "parameters" || json.Unmarshal(raw, &op) != nil {
				continue
			}
			ops++
			for _, want := range []string{`id="` + op.OperationID + `"`, ">" + html.EscapeString(op.Summary) + "<",
				`<code class="path">` + html.EscapeString(path) + "</code>"} {
				if !strings.Contains(page, want) {
					t.Errorf("%s %s: the page lacks %s", method, path, want)
				}
			}
		}
	}
	if ops < 60 {
		t.Fatalf("found %d operations in the document", ops)
	}
	for _, want := range []string{
		"<h2>Authentication</h2>",                   // the description's Markdown, rendered
		`<code>X-Api-Key</code>`,                    // inline code
		`<a href="#schema-Transaction">Transaction`, // response bodies link to their schema
		`id="schema-TransactionFields"`,
		`<span class="prefix">transaction.</span>account_id`, // a request body's fields, nested
		`id="response-NotFound"`,
		`id="header-XRequestId"`,
		`curl -X POST "$COFFER_URL/api/v1/transactions"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "## ") || strings.Contains(page, "**") {
		t.Error("the page shows raw Markdown")
	}

	// A browser that takes gzip gets the same page, a fraction of the size.
	req := httptest.NewRequest("GET", "/api/docs", nil)
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	resp, err := e.App.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("gzip: %q, Vary %q", resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
	}
	gz, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(plain, r.Body) {
		t.Fatalf("the gzipped page differs (%v)", err)
	}
	if len(gz)*8 > len(plain) {
		t.Errorf("gzip: %d bytes for %d", len(gz), len(plain))
	}
}

// TestBrowserAPIDocs opens the reference in Chromium, at desktop and
// phone width: the style sheet applies under the page's policy and an
// operation reads as it should.
func TestBrowserAPIDocs(t *testing.T) {
	_, base := apitest.ServeEnv(t)
	c := apitest.NewChrome(t)
	for _, size := range []struct {
		name          string
		width, height int64
		toc           string // where the contents sit
	}{{"desktop", 1280, 900, "sticky"}, {"phone", 390, 844, "static"}} {
		c.Run("open the reference at "+size.name+" width",
			chromedp.EmulateViewport(size.width, size.height),
			chromedp.Navigate(base+"/api/docs"),
		)
		c.Run("wait", chromedp.WaitVisible(chromedp.CSS(`#overview`)))
		ms, err := chromedp.Run(c.Ctx, chromedp.Evaluate[float64](`performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd`))
		t.Logf("%s: the reference was ready %.0f ms after the request (err %v)", size.name, ms, err)
		c.ShootView("api-docs-" + size.name)
		// Follow the contents to the transactions: their first operation
		// is there, drawn (operations off screen are drawn when reached).
		c.Run("follow the contents",
			chromedp.Click(chromedp.CSS(`nav.toc a[href="#tag-Transactions"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#listTransactions h3`)),
			// Visible comes before drawn: an operation's text reads empty
			// until the browser has laid out what the jump brought on screen.
			chromedp.Poll[chromedp.Void](`document.querySelector('#listTransactions h3').innerText !== ""`,
				chromedp.WithPollingTimeout(10*time.Second)),
		)
		if got := c.Text(`#listTransactions h3`); got != "List transactions" {
			t.Errorf("%s: summary %q", size.name, got)
		}
		if got := c.Text(`#listTransactions .path`); got != "/api/v1/transactions" {
			t.Errorf("%s: path %q", size.name, got)
		}
		// The policy admits the style sheet by its hash: were the hash
		// wrong, the contents would not be placed.
		pos, err := chromedp.Run(c.Ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('nav.toc')).position`))
		if err != nil || pos != size.toc {
			t.Errorf("%s: the contents are %q (%v), want %q: the style sheet did not apply", size.name, pos, err, size.toc)
		}
		// Nothing is wider than the screen.
		wide, err := chromedp.Run(c.Ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > innerWidth`))
		if err != nil || wide {
			t.Errorf("%s: the page scrolls sideways (%v)", size.name, err)
		}
		c.ShootView("api-docs-" + size.name + "-transactions")
		for _, id := range []string{"createTransaction", "response-NotFound", "schema-Transaction"} {
			if _, err := chromedp.Run(c.Ctx, chromedp.Evaluate[bool](`document.getElementById('`+id+`').scrollIntoView(), true`)); err != nil {
				c.Fail("scroll to "+id, err)
			}
			c.ShootView("api-docs-" + size.name + "-" + id)
		}
	}
}
