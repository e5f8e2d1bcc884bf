package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"coffer/api"
	"coffer/jobs/assistant/assistanttest"
	"coffer/models"
)

// usageEnv is a household whose admin and member each had a chat answered
// (one model call each: 100 prompt and 20 answer tokens), and a
// neighbouring family with a chat of its own, with a daily budget of
// 1,000 tokens.
func usageEnv(t *testing.T, serve bool) (e *env, base string, bob *models.User) {
	t.Helper()
	budget := func(o *api.Options) { o.AssistantDailyTokens = 1000 }
	if serve {
		e, base = serveEnv(t, budget)
	} else {
		e = newEnv(t, budget)
	}
	a := newAnswerer(t, e, func(int, *assistanttest.Request) assistanttest.Reply {
		return assistanttest.Reply{Content: "An answer."}
	})
	bob = member(t, e, e.alpha.Family, "bob-"+e.alpha.Family.ID.String()[:8]+"@example.com", models.RoleMember)
	for _, c := range []struct {
		fam   *models.Family
		user  *models.User
		title string
	}{
		{e.alpha.Family, e.alpha.User, "Groceries this month"},
		{e.alpha.Family, bob, "Bob's savings question"},
		{e.beta.Family, e.beta.User, "The neighbour's chat"},
	} {
		chat := &models.Chat{FamilyID: c.fam.ID, UserID: c.user.ID, Title: c.title}
		m, err := e.store.CreateChat(context.Background(), chat, "how are we doing?")
		if err != nil {
			t.Fatal(err)
		}
		a.answer(t, c.fam.ID, chat.ID.String(), m.ID.String())
	}
	return e, base, bob
}

// TestAssistantUsageScreen: a family admin sees the family's tokens of
// today against the daily budget and every member's chats of the last 30
// days with their tokens; a member is refused; another family's chats
// stay out.
func TestAssistantUsageScreen(t *testing.T) {
	e, _, bob := usageEnv(t, false)
	b := signedInBrowser(t, e)
	r := b.get("/settings/assistant")
	body := string(r.body)
	if r.status != 200 {
		t.Fatalf("usage screen: %d %s", r.status, body)
	}
	for _, want := range []string{
		`<label for="budget">Tokens used today: 240 of 1,000 (24%)</label>`,
		`<meter id="budget" min="0" max="1000" value="240"`,
		"Groceries this month", "Bob&#39;s savings question", bob.Email, e.alpha.User.Email,
		`<td data-label="Total tokens">120</td>`, `<td data-label="Messages">2</td>`,
		`<p id="usage-total">All chats: 2 answers, 200 prompt and 40 answer tokens, <strong>240 tokens</strong> in all.</p>`,
		`<a href="/settings/assistant">Assistant usage</a>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("usage screen lacks %s", want)
		}
	}
	if strings.Contains(body, "neighbour") {
		t.Error("another family's chat is shown")
	}

	m := e.browser(t)
	if r := m.login(bob.Email, "correct horse battery"); r.status != 303 {
		t.Fatalf("member login: %d", r.status)
	}
	if r := m.get("/settings/assistant"); r.status != 403 {
		t.Fatalf("a member gets %d", r.status)
	}
	if body := string(m.get("/chats").body); strings.Contains(body, "/settings/assistant") {
		t.Error("a member is shown the link to the usage screen")
	}
	if r := e.browser(t).get("/settings/assistant"); r.status != 302 && r.status != 303 {
		t.Fatalf("signed out: %d", r.status)
	}

	// The 30 days count answers by their time: none are newer than now.
	later, err := e.store.AssistantUsage(t.Context(), e.alpha.Family.ID, time.Now().Add(time.Hour))
	if err != nil || len(later) != 0 {
		t.Fatalf("usage since an hour ahead: %v (%v)", later, err)
	}
}

// TestBrowserAssistantUsage opens the usage screen in Chromium at phone
// and desktop widths and saves both as screenshots.
func TestBrowserAssistantUsage(t *testing.T) {
	e, base, _ := usageEnv(t, true)
	setPassword(t, e, e.alpha.User, "correct horse battery")
	c := newChrome(t)
	c.signIn(base, e.alpha.User.Email)
	for _, size := range []struct {
		name          string
		width, height int64
	}{{"phone", 390, 844}, {"desktop", 1280, 900}} {
		c.run("usage at "+size.name,
			chromedp.EmulateViewport(size.width, size.height),
			chromedp.Navigate(base+"/settings/assistant"),
			chromedp.WaitVisible(chromedp.ID("usage-chats")),
		)
		if got := c.text(`label[for="budget"]`); got != "Tokens used today: 240 of 1,000 (24%)" {
			t.Fatalf("%s: budget label %q", size.name, got)
		}
		if got := c.text(`#usage-total strong`); got != "240 tokens" {
			t.Fatalf("%s: total %q", size.name, got)
		}
		wide, err := chromedp.Run(c.ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > innerWidth`))
		if err != nil || wide {
			t.Fatalf("%s: the page scrolls sideways (%v)", size.name, err)
		}
		c.shoot(fmt.Sprintf("assistant_usage_%s", size.name))
	}
}
