package screens_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/jobs/assistant/assistanttest"
	"coffer/models"
)

// usageEnv is a household whose admin and member each had a chat answered
// (one model call each: 100 prompt and 20 answer tokens), and a
// neighbouring family with a chat of its own, with a daily budget of
// 1,000 tokens.
func usageEnv(t *testing.T, serve bool) (e *apitest.Env, base string, bob *models.User) {
	t.Helper()
	budget := func(o *api.Options) { o.AssistantDailyTokens = 1000 }
	if serve {
		e, base = apitest.ServeEnv(t, budget)
	} else {
		e = apitest.NewEnv(t, budget)
	}
	a := apitest.NewAnswerer(t, e, func(int, *assistanttest.Request) assistanttest.Reply {
		return assistanttest.Reply{Content: "An answer."}
	})
	bob = apitest.Member(t, e, e.Alpha.Family, "bob-"+e.Alpha.Family.ID.String()[:8]+"@example.com", models.RoleMember)
	for _, c := range []struct {
		fam   *models.Family
		user  *models.User
		title string
	}{
		{e.Alpha.Family, e.Alpha.User, "Groceries this month"},
		{e.Alpha.Family, bob, "Bob's savings question"},
		{e.Beta.Family, e.Beta.User, "The neighbour's chat"},
	} {
		chat := &models.Chat{FamilyID: c.fam.ID, UserID: c.user.ID, Title: c.title}
		m, err := e.Store.CreateChat(context.Background(), chat, "how are we doing?")
		if err != nil {
			t.Fatal(err)
		}
		a.Answer(t, c.fam.ID, chat.ID.String(), m.ID.String())
	}
	return e, base, bob
}

// TestAssistantUsageScreen: a family admin sees the family's tokens of
// today against the daily budget and every member's chats of the last 30
// days with their tokens; a member is refused; another family's chats
// stay out.
func TestAssistantUsageScreen(t *testing.T) {
	e, _, bob := usageEnv(t, false)
	b := apitest.SignedInBrowser(t, e)
	r := b.Get("/settings/assistant")
	body := string(r.Body)
	if r.Status != 200 {
		t.Fatalf("usage screen: %d %s", r.Status, body)
	}
	for _, want := range []string{
		`<label for="budget">Tokens used today: 240 of 1,000 (24%)</label>`,
		`<meter id="budget" min="0" max="1000" value="240"`,
		"Groceries this month", "Bob&#39;s savings question", bob.Email, e.Alpha.User.Email,
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

	m := e.Browser(t)
	if r := m.Login(bob.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("member login: %d", r.Status)
	}
	if r := m.Get("/settings/assistant"); r.Status != 403 {
		t.Fatalf("a member gets %d", r.Status)
	}
	if body := string(m.Get("/chats").Body); strings.Contains(body, "/settings/assistant") {
		t.Error("a member is shown the link to the usage screen")
	}
	if r := e.Browser(t).Get("/settings/assistant"); r.Status != 302 && r.Status != 303 {
		t.Fatalf("signed out: %d", r.Status)
	}

	// The 30 days count answers by their time: none are newer than now.
	later, err := e.Store.AssistantUsage(t.Context(), e.Alpha.Family.ID, time.Now().Add(time.Hour))
	if err != nil || len(later) != 0 {
		t.Fatalf("usage since an hour ahead: %v (%v)", later, err)
	}
}

// TestBrowserAssistantUsage opens the usage screen in Chromium at phone
// and desktop widths and saves both as screenshots.
func TestBrowserAssistantUsage(t *testing.T) {
	e, base, _ := usageEnv(t, true)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	c := apitest.NewChrome(t)
	c.SignIn(base, e.Alpha.User.Email)
	for _, size := range []struct {
		name          string
		width, height int64
	}{{"phone", 390, 844}, {"desktop", 1280, 900}} {
		c.Run("usage at "+size.name,
			chromedp.EmulateViewport(size.width, size.height),
			chromedp.Navigate(base+"/settings/assistant"),
			chromedp.WaitVisible(chromedp.ID("usage-chats")),
		)
		if got := c.Text(`label[for="budget"]`); got != "Tokens used today: 240 of 1,000 (24%)" {
			t.Fatalf("%s: budget label %q", size.name, got)
		}
		if got := c.Text(`#usage-total strong`); got != "240 tokens" {
			t.Fatalf("%s: total %q", size.name, got)
		}
		wide, err := chromedp.Run(c.Ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > innerWidth`))
		if err != nil || wide {
			t.Fatalf("%s: the page scrolls sideways (%v)", size.name, err)
		}
		c.Shoot(fmt.Sprintf("assistant_usage_%s", size.name))
	}
}
