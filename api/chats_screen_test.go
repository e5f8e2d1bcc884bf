package api_test

import (
	"net/url"
	"strings"
	"testing"

	"coffer/jobs/assistant"
	"coffer/jobs/assistant/assistanttest"
)

// TestChatScreens asks a question on the /chats screen with plain forms:
// the chat page shows the question pending and refreshes itself until the
// answer is stored, then shows the answer; a failure shows the chat's
// error with a button that asks again.
func TestChatScreens(t *testing.T) {
	e := newEnv(t)
	fail := false
	a := newAnswerer(t, e, func(n int, r *assistanttest.Request) assistanttest.Reply {
		if fail {
			return assistanttest.Reply{Status: 500}
		}
		return assistanttest.Reply{Content: "About <b>$12</b>."}
	})
	b := signedInBrowser(t, e)

	r := b.get("/chats")
	body := string(r.body)
	if r.status != 200 || !strings.Contains(body, `<label for="message">`) || !strings.Contains(body, "no chats yet") ||
		!strings.Contains(body, `id="usage"`) {
		t.Fatalf("chats: %d %s", r.status, body)
	}
	if r := b.post("/chats", url.Values{"message": {"   "}}); r.status != 422 || !strings.Contains(string(r.body), "Write a question first") {
		t.Fatalf("empty question: %d", r.status)
	}
	r = b.post("/chats", url.Values{"message": {"How much did I spend on coffee?"}})
	if r.status != 303 {
		t.Fatalf("ask: %d %s", r.status, r.body)
	}
	loc := r.header.Get("Location")
	id := strings.TrimPrefix(loc, "/chats/")
	r = b.get(loc)
	body = string(r.body)
	if r.status != 200 || !strings.Contains(body, `<noscript><meta http-equiv="refresh" content="3"></noscript>`) || !strings.Contains(body, `id="pending"`) ||
		!strings.Contains(body, `data-stream="/chats/`+strings.TrimPrefix(loc, "/chats/")+`/stream"`) ||
		!strings.Contains(body, "How much did I spend on coffee?") {
		t.Fatalf("pending chat page: %d %s", r.status, body)
	}
	e.dropTasks()
	ms, _, err := e.store.LastQuestion(t.Context(), e.alpha.Family.ID, e.alpha.User.ID, uuidOf(t, id))
	if err != nil {
		t.Fatal(err)
	}
	a.answer(t, e.alpha.Family.ID, id, ms.ID.String())
	body = string(b.get(loc).body)
	if strings.Contains(body, "http-equiv") || strings.Contains(body, `id="pending"`) || !strings.Contains(body, "About &lt;b&gt;$12&lt;/b&gt;.") {
		t.Fatalf("answered chat page: %s", body)
	}

	// The page's script follows the answer on the chat's stream, which
	// the session opens: nothing pending now, so one idle event.
	if r := b.get(loc + "/stream"); r.status != 200 || !strings.HasPrefix(string(r.body), "event: idle\n") {
		t.Fatalf("stream: %d %s", r.status, r.body)
	}

	// A follow-up that fails: the error, then Ask again, then the answer.
	fail = true
	if r := b.post(loc+"/messages", url.Values{"message": {"And on tea?"}}); r.status != 303 {
		t.Fatalf("follow-up: %d", r.status)
	}
	e.dropTasks()
	q2, _, err := e.store.LastQuestion(t.Context(), e.alpha.Family.ID, e.alpha.User.ID, uuidOf(t, id))
	if err != nil {
		t.Fatal(err)
	}
	a.answer(t, e.alpha.Family.ID, id, q2.ID.String())
	body = string(b.get(loc).body)
	if !strings.Contains(body, assistant.FailedMessage) || !strings.Contains(body, "Ask again") || strings.Contains(body, "http-equiv") {
		t.Fatalf("failed chat page: %s", body)
	}
	fail = false
	if r := b.post(loc+"/retry", nil); r.status != 303 {
		t.Fatalf("retry: %d", r.status)
	}
	e.dropTasks()
	if body = string(b.get(loc).body); !strings.Contains(body, `id="pending"`) {
		t.Fatalf("after retry: %s", body)
	}
	a.answer(t, e.alpha.Family.ID, id, q2.ID.String())
	if body = string(b.get(loc).body); strings.Count(body, "About &lt;b&gt;$12&lt;/b&gt;.") != 2 {
		t.Fatalf("after the retried answer: %s", body)
	}

	// The write permission, on the chats page.
	if r := b.post("/chats/settings", url.Values{"may_write": {"on"}}); r.status != 303 {
		t.Fatalf("settings: %d", r.status)
	}
	if u, _ := e.store.User(t.Context(), e.alpha.Family.ID, e.alpha.User.ID); !u.AssistantMayWrite {
		t.Fatal("may_write not saved")
	}
	if body = string(b.get("/chats").body); !strings.Contains(body, "checked") {
		t.Fatal("the checkbox does not show the setting")
	}
	b.post("/chats/settings", url.Values{})
	if u, _ := e.store.User(t.Context(), e.alpha.Family.ID, e.alpha.User.ID); u.AssistantMayWrite {
		t.Fatal("may_write not turned off")
	}

	// Another family's chat is not found; deleting ends the chat.
	other := e.browser(t)
	setPassword(t, e, e.beta.User, "correct horse battery")
	other.login(e.beta.User.Email, "correct horse battery")
	if r := other.get(loc); r.status != 404 {
		t.Fatalf("other family: %d", r.status)
	}
	if r := other.get(loc + "/stream"); r.status != 404 {
		t.Fatalf("other family's stream: %d", r.status)
	}
	b.get(loc)
	if r := b.post(loc+"/delete", nil); r.status != 303 {
		t.Fatalf("delete: %d", r.status)
	}
	if r := b.get(loc); r.status != 404 {
		t.Fatalf("deleted chat: %d", r.status)
	}
}
