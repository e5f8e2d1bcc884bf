package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/assistant"
	"coffer/jobs/assistant/assistanttest"
)

// answerer runs chat replies as the worker would, against a fake model.
type answerer struct {
	h    *assistant.Handlers
	fake *assistanttest.Server
}

func newAnswerer(t *testing.T, e *env, script func(int, *assistanttest.Request) assistanttest.Reply) *answerer {
	fake := assistanttest.New(t, script)
	return &answerer{fake: fake, h: &assistant.Handlers{Store: e.store, Redis: e.rdb, Log: e.logger(),
		Options: assistant.Options{BaseURL: fake.URL, Model: "m", MaxToolRounds: 8, Timeout: time.Minute,
			RetryWait: time.Second}}}
}

func (a *answerer) answer(t *testing.T, familyID uuid.UUID, chatID, messageID string) {
	t.Helper()
	task, err := jobs.NewChatReplyTask(familyID, uuid.MustParse(chatID), uuid.MustParse(messageID))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.h.ChatReply(context.Background(), asynq.NewTask(task.Type(), task.Payload())); err != nil {
		t.Fatal(err)
	}
}

// lastMessageID is the id of the newest message of a chat detail.
func lastMessageID(t *testing.T, chat map[string]any) string {
	t.Helper()
	msgs := chat["messages"].([]any)
	return msgs[len(msgs)-1].(map[string]any)["id"].(string)
}

func TestChatReplyAndRetry(t *testing.T) {
	e := newEnv(t)
	fail := false
	a := newAnswerer(t, e, func(n int, r *assistanttest.Request) assistanttest.Reply {
		if fail {
			return assistanttest.Reply{Status: 500}
		}
		return assistanttest.Reply{Content: "Answer to " + r.Last().Text()}
	})
	fam := e.alpha.Family.ID
	chat := e.do("POST", "/api/v1/chats", e.alpha.Key, map[string]any{"title": "T", "message": "first"}).wantJSON(t, 201)
	id := chat["id"].(string)
	path := "/api/v1/chats/" + id
	if chat["pending"] != true {
		t.Fatalf("a new question is not pending: %v", chat)
	}
	insp := asynq.NewInspector(e.redis)
	defer insp.Close()
	q1 := lastMessageID(t, chat)
	if _, err := insp.GetTaskInfo(jobs.QueueDefault, "chat:reply:"+q1); err != nil {
		t.Fatalf("reply not queued: %v", err)
	}
	// A second message right after the first gets its own reply task (it
	// used to conflict with the first's task id and never be answered).
	q2 := e.do("POST", path+"/messages", e.alpha.Key, map[string]any{"content": "second"}).wantJSON(t, 201)["id"].(string)
	if _, err := insp.GetTaskInfo(jobs.QueueDefault, "chat:reply:"+q2); err != nil {
		t.Fatalf("second reply not queued: %v", err)
	}
	e.dropTasks()

	a.answer(t, fam, id, q1)
	a.answer(t, fam, id, q2)
	got := e.do("GET", path, e.alpha.Key, nil).wantJSON(t, 200)
	msgs := got["messages"].([]any)
	if got["pending"] != false || got["message_count"] != 4.0 || len(msgs) != 4 || got["error"] != nil {
		t.Fatalf("answered chat: %v", got)
	}
	last := msgs[3].(map[string]any)
	if last["role"] != "assistant" || last["content"] != "Answer to second" || last["model"] != "m-fake" {
		t.Fatalf("answer: %v", last)
	}
	wantError(t, e.do("POST", path+"/messages/retry", e.alpha.Key, nil), 422, "validation_failed")

	// A failed reply: the chat says so in a sentence of ours, the
	// question stays, and a retry queues it again.
	q3 := e.do("POST", path+"/messages", e.alpha.Key, map[string]any{"content": "third"}).wantJSON(t, 201)["id"].(string)
	e.dropTasks()
	fail = true
	a.answer(t, fam, id, q3)
	got = e.do("GET", path, e.alpha.Key, nil).wantJSON(t, 200)
	if got["error"] != assistant.FailedMessage || got["pending"] != false || got["message_count"] != 5.0 {
		t.Fatalf("failed chat: %v", got)
	}
	r := e.do("POST", path+"/messages/retry", e.alpha.Key, nil).wantJSON(t, 202)
	if r["message"] != "Retry initiated" || r["message_id"] != q3 {
		t.Fatalf("retry: %v", r)
	}
	if _, err := insp.GetTaskInfo(jobs.QueueDefault, "chat:reply:"+q3); err != nil {
		t.Fatalf("retry not queued: %v", err)
	}
	// Asked twice, it is queued once.
	e.do("POST", path+"/messages/retry", e.alpha.Key, nil).wantJSON(t, 202)
	e.dropTasks()
	if got = e.do("GET", path, e.alpha.Key, nil).wantJSON(t, 200); got["error"] != nil || got["pending"] != true {
		t.Fatalf("after retry: %v", got)
	}
	fail = false
	a.answer(t, fam, id, q3)
	a.answer(t, fam, id, q3) // asynq may run it twice: one answer
	if got = e.do("GET", path, e.alpha.Key, nil).wantJSON(t, 200); got["message_count"] != 6.0 || got["pending"] != false {
		t.Fatalf("after the retried reply: %v", got)
	}

	wantError(t, e.do("POST", path+"/messages/retry", e.beta.Key, nil), 404, "not_found")
	wantError(t, e.do("POST", path+"/messages/retry", e.alpha.ReadKey, nil), 403, "insufficient_scope")
	empty := e.do("POST", "/api/v1/chats", e.alpha.Key, map[string]any{"title": "Empty"}).wantJSON(t, 201)
	wantError(t, e.do("POST", "/api/v1/chats/"+empty["id"].(string)+"/messages/retry", e.alpha.Key, nil), 422, "validation_failed")
	wantError(t, e.do("POST", "/api/v1/chats/nope/messages/retry", e.alpha.Key, nil), 404, "not_found")
}

func TestAssistantSettings(t *testing.T) {
	e := newEnv(t)
	a := newAnswerer(t, e, assistanttest.Sequence(assistanttest.Reply{Content: "Hi.", Prompt: 70, Completion: 5}))
	chat := e.do("POST", "/api/v1/chats", e.alpha.Key, map[string]any{"title": "T", "message": "hello"}).wantJSON(t, 201)
	e.dropTasks()
	a.answer(t, e.alpha.Family.ID, chat["id"].(string), lastMessageID(t, chat))

	s := e.do("GET", "/api/v1/assistant", e.alpha.ReadKey, nil).wantJSON(t, 200)
	usage, _ := s["usage"].(map[string]any)
	if s["may_write"] != false || usage == nil || usage["tokens_today"] != 75.0 {
		t.Fatalf("settings: %v", s)
	}
	chats := usage["chats"].([]any)
	if len(chats) != 1 || chats[0].(map[string]any)["prompt_tokens"] != 70.0 || chats[0].(map[string]any)["answers"] != 1.0 {
		t.Fatalf("usage: %v", usage)
	}
	if s := e.do("PATCH", "/api/v1/assistant", e.alpha.Key, map[string]any{"may_write": true}).wantJSON(t, 200); s["may_write"] != true {
		t.Fatalf("after PATCH: %v", s)
	}
	u, err := e.store.User(t.Context(), e.alpha.Family.ID, e.alpha.User.ID)
	if err != nil || !u.AssistantMayWrite {
		t.Fatalf("stored: %v %v", u, err)
	}
	wantError(t, e.do("PATCH", "/api/v1/assistant", e.alpha.Key, map[string]any{"may_write": "yes"}), 422, "validation_failed")
	wantError(t, e.do("PATCH", "/api/v1/assistant", e.alpha.Key, map[string]any{}), 422, "validation_failed")
	wantError(t, e.do("PATCH", "/api/v1/assistant", e.alpha.ReadKey, map[string]any{"may_write": false}), 403, "insufficient_scope")
	// Another family's figures are its own.
	if s := e.do("GET", "/api/v1/assistant", e.beta.Key, nil).wantJSON(t, 200); s["usage"].(map[string]any)["tokens_today"] != 0.0 {
		t.Fatalf("beta: %v", s)
	}
}

// TestChatStream follows a reply over server-sent events, through Redis
// from the job to the web process.
func TestChatStream(t *testing.T) {
	e := newEnv(t)
	a := newAnswerer(t, e, assistanttest.Sequence(assistanttest.Reply{Content: "Streaming works fine."}))
	base := e.listen()
	chat := e.do("POST", "/api/v1/chats", e.alpha.Key, map[string]any{"title": "T", "message": "hello"}).wantJSON(t, 201)
	e.dropTasks()
	id := chat["id"].(string)

	open := func(key string) *http.Response {
		req, _ := http.NewRequest("GET", base+"/api/v1/chats/"+id+"/stream", nil)
		req.Header.Set("X-Api-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := open(e.alpha.Key)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.answer(t, e.alpha.Family.ID, id, lastMessageID(t, chat))
	}()
	var text strings.Builder
	var events []string
	sc := bufio.NewScanner(resp.Body)
	typ := ""
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			typ = v
			events = append(events, typ)
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok && typ == "delta" {
			var ev assistant.Event
			if err := json.Unmarshal([]byte(v), &ev); err != nil {
				t.Fatal(err)
			}
			text.WriteString(ev.Text)
		}
	}
	<-done
	if text.String() != "Streaming works fine." || events[len(events)-1] != "done" {
		t.Fatalf("streamed %q, events %v", text.String(), events)
	}
	// Nothing pending: one idle event, then the end.
	resp = open(e.alpha.Key)
	body := new(strings.Builder)
	sc = bufio.NewScanner(resp.Body)
	for sc.Scan() {
		body.WriteString(sc.Text() + "\n")
	}
	if !strings.HasPrefix(body.String(), "event: idle\n") {
		t.Fatalf("idle stream: %q", body.String())
	}
	wantError(t, e.do("GET", "/api/v1/chats/"+id+"/stream", e.beta.Key, nil), 404, "not_found")
}
