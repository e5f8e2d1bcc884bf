package screens_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"coffer/api/apitest"
	"coffer/models"
)

var formToken = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// pageFormToken is the form token of the page b got last: what a browser
// posts back from that page's forms.
func pageFormToken(t *testing.T, r apitest.Response) string {
	t.Helper()
	m := formToken.FindSubmatch(r.Body)
	if m == nil || !strings.Contains(string(m[1]), ".") {
		t.Fatalf("no one-time form token in the page: %.300s", r.Body)
	}
	return string(m[1])
}

// TestFormPostedTwice: a form sent twice with its page's token (a double
// click, back and submit again) makes one transaction; the second lands
// where the first went, saying so. A refused form can be corrected and
// sent with the same token.
func TestFormPostedTwice(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := t.Context()
	token := pageFormToken(t, b.Get("/transactions/new"))
	form := url.Values{"csrf_token": {token}, "account_id": {e.Alpha.Account.ID.String()}, "date": {"2026-01-05"},
		"type": {"expense"}, "amount": {"12.50"}, "name": {"Bakery"}}

	bad := url.Values{}
	for k, v := range form {
		bad[k] = v
	}
	bad.Set("date", "2026-13-01")
	if r := b.Post("/transactions", bad); r.Status != 422 {
		t.Fatalf("refused form: %d", r.Status)
	}
	first := b.Post("/transactions", form)
	if first.Status != 303 {
		t.Fatalf("first post: %d %s", first.Status, first.Body)
	}
	second := b.Post("/transactions", form)
	if second.Status != 303 || second.Header.Get("Location") != first.Header.Get("Location") {
		t.Fatalf("second post: %d to %q, want 303 to %q", second.Status, second.Header.Get("Location"), first.Header.Get("Location"))
	}
	if page := b.Get(second.Header.Get("Location")); !strings.Contains(string(page.Body), "already sent") {
		t.Errorf("the page after the second post does not say it was sent already")
	}
	if _, n, err := e.Store.Transactions(ctx, e.Alpha.Family.ID, models.TransactionFilter{Search: "Bakery"}, models.Page{Number: 1, Size: 5}); err != nil || n != 1 {
		t.Fatalf("%d transactions after the form was posted twice (%v), want 1", n, err)
	}

	// A new account's form, posted twice: one account.
	token = pageFormToken(t, b.Get("/accounts/new"))
	acct := url.Values{"csrf_token": {token}, "name": {"Twice Savings"}, "account_type": {"depository"}, "currency": {"USD"}, "opening_balance": {"10"}}
	r1, r2 := b.Post("/accounts", acct), b.Post("/accounts", acct)
	if r1.Status != 303 || r2.Status != 303 {
		t.Fatalf("account posts: %d %d %s", r1.Status, r2.Status, r1.Body)
	}
	accts, _, err := e.Store.Accounts(ctx, e.Alpha.Family.ID, models.Page{Number: 1, Size: 100})
	n := 0
	for _, a := range accts {
		if a.Name == "Twice Savings" {
			n++
		}
	}
	if err != nil || n != 1 {
		t.Fatalf("%d accounts after the form was posted twice (%v)", n, err)
	}

	// Another page's token is another form: a second transaction is made.
	form.Set("csrf_token", pageFormToken(t, b.Get("/transactions/new")))
	if r := b.Post("/transactions", form); r.Status != 303 {
		t.Fatalf("new page's post: %d", r.Status)
	}
	if _, n, _ := e.Store.Transactions(ctx, e.Alpha.Family.ID, models.TransactionFilter{Search: "Bakery"}, models.Page{Number: 1, Size: 5}); n != 2 {
		t.Fatalf("%d transactions after a second form, want 2", n)
	}
	// A token whose nonce was tampered with is refused.
	form.Set("csrf_token", token+"x")
	if r := b.Post("/transactions", form); r.Status != 403 {
		t.Fatalf("tampered token: %d", r.Status)
	}
}

// TestBrowserBackAndSubmitAgain: in Chromium, a new transaction's form
// sent, then back and sent again as it was, makes one transaction.
func TestBrowserBackAndSubmitAgain(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	c := apitest.NewChrome(t)
	c.SignIn(base, e.Alpha.User.Email)
	c.Run("add a transaction",
		chromedp.Navigate(base+"/transactions/new"),
		chromedp.WaitVisible(chromedp.ID("amount")),
		chromedp.SetValue(chromedp.ID("account_id"), e.Alpha.Account.ID.String()),
		chromedp.SendKeys(chromedp.ID("amount"), "19.99"),
		chromedp.SendKeys(chromedp.ID("name"), "Pharmacy"),
		chromedp.Submit(chromedp.ID("name")),
		chromedp.WaitVisible(chromedp.ID("results")),
	)
	c.Run("back", chromedp.NavigateBack(), chromedp.WaitVisible(chromedp.ID("amount")))
	c.WaitFor(`document.getElementById("name").value`, "Pharmacy")
	c.Run("send again", chromedp.Submit(chromedp.ID("name")), chromedp.WaitVisible(chromedp.ID("results")))
	if got := c.Text("p.flash"); !strings.Contains(got, "already sent") {
		t.Errorf("flash after sending again: %q", got)
	}
	if _, n, err := e.Store.Transactions(t.Context(), e.Alpha.Family.ID, models.TransactionFilter{Search: "Pharmacy"},
		models.Page{Number: 1, Size: 5}); err != nil || n != 1 {
		t.Fatalf("%d transactions after back and submit again (%v), want 1", n, err)
	}
}
