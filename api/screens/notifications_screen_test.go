package screens_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"coffer/api/apitest"
	"coffer/models"
)

// The notifications screen without JavaScript: the defaults (nothing
// chosen, 3 days), a large-transaction choice without an amount refused
// with the choices kept, then saved; another person's choices are their
// own.
func TestNotificationScreen(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := t.Context()
	b := apitest.SignedInBrowser(t, e)
	r := b.Get("/settings/notifications")
	body := string(r.Body)
	if r.Status != 200 || !strings.Contains(body, `<label for="large_amount">`) || !strings.Contains(body, `name="csrf_token"`) ||
		!strings.Contains(body, `value="3"`) || strings.Contains(body, " checked") {
		t.Fatalf("screen: %d %s", r.Status, body)
	}
	if !strings.Contains(string(b.Get("/settings/api_keys").Body), `href="/settings/notifications"`) {
		t.Error("settings do not link to notifications")
	}
	bad := b.Post("/settings/notifications", url.Values{"large_transaction": {"on"}, "weekly_digest": {"on"}, "bill_due_days": {"0"}})
	if bad.Status != 422 || !strings.Contains(string(bad.Body), "Days before a bill must be a whole number from 1 to 30.") ||
		!strings.Contains(string(bad.Body), "Amount can&#39;t be blank.") || !strings.Contains(string(bad.Body), `name="weekly_digest" style="width:auto" checked`) {
		t.Fatalf("refused: %d %s", bad.Status, bad.Body)
	}
	if p, _ := e.Store.NotificationPreference(ctx, e.Alpha.Family.ID, e.Alpha.User.ID); p.WeeklyDigest {
		t.Fatal("a refused form was stored")
	}
	if r := b.Post("/settings/notifications", url.Values{"large_transaction": {"on"}, "large_amount": {"250.50"},
		"weekly_digest": {"on"}, "bill_due": {"on"}, "bill_due_days": {"5"}}); r.Status != 303 {
		t.Fatalf("save: %d %s", r.Status, r.Body)
	}
	p, err := e.Store.NotificationPreference(ctx, e.Alpha.Family.ID, e.Alpha.User.ID)
	if err != nil || !p.LargeTransaction || p.LargeAmount != 2505000 || !p.WeeklyDigest || !p.BillDue || p.BillDueDays != 5 || p.BudgetExceeded {
		t.Fatalf("stored: %+v %v", p, err)
	}
	page := string(b.Get("/settings/notifications").Body)
	if !strings.Contains(page, `value="250.50"`) || !strings.Contains(page, `name="bill_due" style="width:auto" checked`) ||
		!strings.Contains(page, "Your notification choices are saved.") {
		t.Errorf("after save: %s", page)
	}
	member := apitest.Member(t, e, e.Alpha.Family, "member-notify@alpha.test", models.RoleMember)
	mb := e.Browser(t)
	if r := mb.Login(member.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("member login: %d", r.Status)
	}
	if page := string(mb.Get("/settings/notifications").Body); strings.Contains(page, "250.50") {
		t.Error("a member sees another person's choices")
	}
}

// The notifications screen in Chromium at phone and desktop width.
func TestBrowserNotificationScreen(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	c := apitest.NewChrome(t)
	c.SignIn(base, e.Alpha.User.Email)
	c.Run("choose", chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(base+"/settings/notifications"), chromedp.WaitVisible(chromedp.ID("large_amount")),
		chromedp.Click(chromedp.ID("large_transaction")), chromedp.SendKeys(chromedp.ID("large_amount"), "500"),
		chromedp.Click(chromedp.ID("weekly_digest")),
		chromedp.Submit(chromedp.ID("large_amount")), chromedp.WaitVisible(chromedp.CSS(".flash")))
	c.Shoot("notifications_390")
	c.Run("desktop", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(base+"/settings/notifications"),
		chromedp.WaitVisible(chromedp.ID("weekly_digest")))
	c.Shoot("notifications_1280")
	p, err := e.Store.NotificationPreference(t.Context(), e.Alpha.Family.ID, e.Alpha.User.ID)
	if err != nil || !p.LargeTransaction || p.LargeAmount != 5000000 || !p.WeeklyDigest {
		t.Fatalf("stored: %+v %v", p, err)
	}
}
