package screens_test

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"coffer/api/apitest"
	"coffer/models"
)

// The webhook screens without JavaScript: an admin adds an endpoint (a bad
// URL or no event is refused, nothing stored), sees its secret once,
// switches it off and on, opens its deliveries and removes it; a member
// cannot reach them; another family's endpoint is not found.
func TestWebhookScreens(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := t.Context()
	b := apitest.SignedInBrowser(t, e)
	if r := b.Get("/settings/webhooks"); r.Status != 200 || !strings.Contains(string(r.Body), `<label for="url">`) {
		t.Fatalf("screen: %d %s", r.Status, r.Body)
	}
	for _, bad := range []url.Values{
		{"url": {"ftp://example.com/x"}, "events": {"transaction.created"}},
		{"url": {"https://example.com/x"}},
	} {
		if r := b.Post("/settings/webhooks", bad); r.Status != 422 {
			t.Fatalf("bad %v: %d", bad, r.Status)
		}
	}
	if es, _ := e.Store.Webhooks(ctx, e.Alpha.Family.ID); len(es) != 0 {
		t.Fatalf("refused forms stored %d endpoints", len(es))
	}
	r := b.Post("/settings/webhooks", url.Values{"url": {"https://example.com/hook"}, "description": {"Home Assistant"},
		"events": {"transaction.created", "budget.exceeded"}})
	// The page escapes the secret's "+" as HTML does (&#43;): read it as a person sees it.
	secret := regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`).FindString(html.UnescapeString(string(r.Body)))
	if r.Status != 200 || secret == "" || !strings.Contains(string(r.Body), "shown only this once") {
		t.Fatalf("created: %d %s", r.Status, r.Body)
	}
	if again := b.Get("/settings/webhooks"); strings.Contains(html.UnescapeString(string(again.Body)), secret) {
		t.Fatal("the secret is shown twice")
	}
	es, err := e.Store.Webhooks(ctx, e.Alpha.Family.ID)
	if err != nil || len(es) != 1 || es[0].Description != "Home Assistant" || len(es[0].Events) != 2 {
		t.Fatalf("stored: %+v %v", es, err)
	}
	id := es[0].ID.String()
	if r := b.Post("/settings/webhooks/"+id+"/toggle", nil); r.Status != 303 {
		t.Fatalf("toggle: %d", r.Status)
	}
	if w, _ := e.Store.Webhook(ctx, e.Alpha.Family.ID, es[0].ID); w.Enabled {
		t.Fatal("still on")
	}
	if r := b.Get("/settings/webhooks/" + id); r.Status != 200 || !strings.Contains(string(r.Body), "Nothing was sent") {
		t.Fatalf("deliveries: %d %s", r.Status, r.Body)
	}

	member := apitest.Member(t, e, e.Alpha.Family, "member@alpha.test", models.RoleMember)
	mb := e.Browser(t)
	if r := mb.Login(member.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("member login: %d", r.Status)
	}
	if r := mb.Get("/settings/webhooks"); r.Status == 200 {
		t.Fatal("a member reached the webhooks screen")
	}
	apitest.SetPassword(t, e, e.Beta.User, "correct horse battery")
	bb := e.Browser(t)
	if r := bb.Login(e.Beta.User.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("beta login: %d", r.Status)
	}
	if r := bb.Get("/settings/webhooks/" + id); r.Status != 404 {
		t.Fatalf("another family's endpoint: %d", r.Status)
	}
	if r := bb.Post("/settings/webhooks/"+id+"/delete", nil); r.Status != 404 {
		t.Fatalf("another family's delete: %d", r.Status)
	}
	if r := b.Post("/settings/webhooks/"+id+"/delete", nil); r.Status != 303 {
		t.Fatalf("delete: %d", r.Status)
	}
	if es, _ := e.Store.Webhooks(ctx, e.Alpha.Family.ID); len(es) != 0 {
		t.Fatal("not removed")
	}
}

// The webhooks screen in Chromium at phone and desktop width.
func TestBrowserWebhookScreen(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	c := apitest.NewChrome(t)
	c.SignIn(base, e.Alpha.User.Email)
	c.Run("add an endpoint", chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(base+"/settings/webhooks"), chromedp.WaitVisible(chromedp.ID("url")),
		chromedp.SendKeys(chromedp.ID("url"), "https://example.com/hooks/coffer"),
		chromedp.SendKeys(chromedp.ID("description"), "Home Assistant"),
		chromedp.Click(chromedp.CSS(`input[value="sync.failed"]`)),
		chromedp.Submit(chromedp.ID("url")), chromedp.WaitVisible(chromedp.ID("webhook-secret")))
	c.Shoot("webhooks_secret_390")
	c.Run("desktop", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(base+"/settings/webhooks"),
		chromedp.WaitVisible(chromedp.ID("webhooks")))
	c.Shoot("webhooks_1280")
}
