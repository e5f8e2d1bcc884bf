package screens_test

import (
	"net/url"
	"strings"
	"testing"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/jobs/assistant"
	"coffer/jobs/assistant/assistanttest"
	"coffer/models"
)

// TestChatScreens asks a question on the /chats screen with plain forms:
// the chat page shows the question pending and refreshes itself until the
// answer is stored, then shows the answer; a failure shows the chat's
// error with a button that asks again.
func TestChatScreens(t *testing.T) {
	e := apitest.NewEnv(t)
	fail := false
	a := apitest.NewAnswerer(t, e, func(n int, r *assistanttest.Request) assistanttest.Reply {
		if fail {
			return assistanttest.Reply{Status: 500}
		}
		return assistanttest.Reply{Content: "About <b>$12</b>."}
	})
	b := apitest.SignedInBrowser(t, e)

	r := b.Get("/chats")
	body := string(r.Body)
	if r.Status != 200 || !strings.Contains(body, `<label for="message">`) || !strings.Contains(body, "no chats yet") ||
		!strings.Contains(body, `id="usage"`) {
		t.Fatalf("chats: %d %s", r.Status, body)
	}
	if r := b.Post("/chats", url.Values{"message": {"   "}}); r.Status != 422 || !strings.Contains(string(r.Body), "Write a question first") {
		t.Fatalf("empty question: %d", r.Status)
	}
	r = b.Post("/chats", url.Values{"message": {"How much did I spend on coffee?"}})
	if r.Status != 303 {
		t.Fatalf("ask: %d %s", r.Status, r.Body)
	}
	loc := r.Header.Get("Location")
	id := strings.TrimPrefix(loc, "/chats/")
	r = b.Get(loc)
	body = string(r.Body)
	if r.Status != 200 || !strings.Contains(body, `<noscript><meta http-equiv="refresh" content="3"></noscript>`) || !strings.Contains(body, `id="pending"`) ||
		!strings.Contains(body, `data-stream="/chats/`+strings.TrimPrefix(loc, "/chats/")+`/stream"`) ||
		!strings.Contains(body, "How much did I spend on coffee?") {
		t.Fatalf("pending chat page: %d %s", r.Status, body)
	}
	e.DropTasks()
	ms, _, err := e.Store.LastQuestion(t.Context(), e.Alpha.Family.ID, e.Alpha.User.ID, uuidOf(t, id))
	if err != nil {
		t.Fatal(err)
	}
	a.Answer(t, e.Alpha.Family.ID, id, ms.ID.String())
	body = string(b.Get(loc).Body)
	if strings.Contains(body, "http-equiv") || strings.Contains(body, `id="pending"`) || !strings.Contains(body, "About &lt;b&gt;$12&lt;/b&gt;.") {
		t.Fatalf("answered chat page: %s", body)
	}

	// The page's script follows the answer on the chat's stream, which
	// the session opens: nothing pending now, so one idle event.
	if r := b.Get(loc + "/stream"); r.Status != 200 || !strings.HasPrefix(string(r.Body), "event: idle\n") {
		t.Fatalf("stream: %d %s", r.Status, r.Body)
	}

	// A follow-up that fails: the error, then Ask again, then the answer.
	fail = true
	if r := b.Post(loc+"/messages", url.Values{"message": {"And on tea?"}}); r.Status != 303 {
		t.Fatalf("follow-up: %d", r.Status)
	}
	e.DropTasks()
	q2, _, err := e.Store.LastQuestion(t.Context(), e.Alpha.Family.ID, e.Alpha.User.ID, uuidOf(t, id))
	if err != nil {
		t.Fatal(err)
	}
	a.Answer(t, e.Alpha.Family.ID, id, q2.ID.String())
	body = string(b.Get(loc).Body)
	if !strings.Contains(body, assistant.FailedMessage) || !strings.Contains(body, "Ask again") || strings.Contains(body, "http-equiv") {
		t.Fatalf("failed chat page: %s", body)
	}
	fail = false
	if r := b.Post(loc+"/retry", nil); r.Status != 303 {
		t.Fatalf("retry: %d", r.Status)
	}
	e.DropTasks()
	if body = string(b.Get(loc).Body); !strings.Contains(body, `id="pending"`) {
		t.Fatalf("after retry: %s", body)
	}
	a.Answer(t, e.Alpha.Family.ID, id, q2.ID.String())
	if body = string(b.Get(loc).Body); strings.Count(body, "About &lt;b&gt;$12&lt;/b&gt;.") != 2 {
		t.Fatalf("after the retried answer: %s", body)
	}

	// The write permission, on the chats page.
	if r := b.Post("/chats/settings", url.Values{"may_write": {"on"}}); r.Status != 303 {
		t.Fatalf("settings: %d", r.Status)
	}
	if u, _ := e.Store.User(t.Context(), e.Alpha.Family.ID, e.Alpha.User.ID); !u.AssistantMayWrite {
		t.Fatal("may_write not saved")
	}
	if body = string(b.Get("/chats").Body); !strings.Contains(body, "checked") {
		t.Fatal("the checkbox does not show the setting")
	}
	b.Post("/chats/settings", url.Values{})
	if u, _ := e.Store.User(t.Context(), e.Alpha.Family.ID, e.Alpha.User.ID); u.AssistantMayWrite {
		t.Fatal("may_write not turned off")
	}

	// Another family's chat is not found; deleting ends the chat.
	other := e.Browser(t)
	apitest.SetPassword(t, e, e.Beta.User, "correct horse battery")
	other.Login(e.Beta.User.Email, "correct horse battery")
	if r := other.Get(loc); r.Status != 404 {
		t.Fatalf("other family: %d", r.Status)
	}
	if r := other.Get(loc + "/stream"); r.Status != 404 {
		t.Fatalf("other family's stream: %d", r.Status)
	}
	b.Get(loc)
	if r := b.Post(loc+"/delete", nil); r.Status != 303 {
		t.Fatalf("delete: %d", r.Status)
	}
	if r := b.Get(loc); r.Status != 404 {
		t.Fatalf("deleted chat: %d", r.Status)
	}
}

// On a server without a language model the assistant screen says so
// before anyone asks, and a question posted anyway (from a page loaded
// before) is refused with no chat made.
func TestAssistantNotConfigured(t *testing.T) {
	e := apitest.NewEnv(t, func(o *api.Options) { o.AssistantOff = true })
	b := apitest.SignedInBrowser(t, e)
	r := b.Get("/chats")
	if body := string(r.Body); r.Status != 200 || !strings.Contains(body, `id="assistant-off"`) || !strings.Contains(body, "OPENAI_API_KEY") ||
		strings.Contains(body, `action="/chats"`) {
		t.Fatalf("chats: %d %s", r.Status, body)
	}
	r = b.Post("/chats", url.Values{"message": {"How much did we spend?"}})
	if r.Status != 422 || !strings.Contains(string(r.Body), "not set up on this server") {
		t.Fatalf("a question to no model: %d %s", r.Status, r.Body)
	}
	if _, n, err := e.Store.Chats(t.Context(), e.Alpha.Family.ID, e.Alpha.User.ID, models.Page{Number: 1, Size: 5}); err != nil || n != 0 {
		t.Fatalf("chats made: %d %v", n, err)
	}
}
