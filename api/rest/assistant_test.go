package rest_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/jobs/assistant"
	"coffer/jobs/assistant/assistanttest"
)

// lastMessageID is the id of the newest message of a chat detail.
func lastMessageID(t *testing.T, chat map[string]any) string {
	t.Helper()
	msgs := chat["messages"].([]any)
	return msgs[len(msgs)-1].(map[string]any)["id"].(string)
}

func TestChatReplyAndRetry(t *testing.T) {
	e := apitest.NewEnv(t)
	fail := false
	a := apitest.NewAnswerer(t, e, func(n int, r *assistanttest.Request) assistanttest.Reply {
		if fail {
			return assistanttest.Reply{Status: 500}
		}
		return assistanttest.Reply{Content: "Answer to " + r.Last().Text()}
	})
	fam := e.Alpha.Family.ID
	chat := e.Do("POST", "/api/v1/chats", e.Alpha.Key, map[string]any{"title": "T", "message": "first"}).WantJSON(t, 201)
	id := chat["id"].(string)
	path := "/api/v1/chats/" + id
	if chat["pending"] != true {
		t.Fatalf("a new question is not pending: %v", chat)
	}
	insp := asynq.NewInspector(e.Redis)
	defer insp.Close()
	q1 := lastMessageID(t, chat)
	if _, err := insp.GetTaskInfo(jobs.QueueDefault, "chat:reply:"+q1); err != nil {
		t.Fatalf("reply not queued: %v", err)
	}
	// A second message right after the first gets its own reply task (it
	// used to conflict with the first's task id and never be answered).
	q2 := e.Do("POST", path+"/messages", e.Alpha.Key, map[string]any{"content": "second"}).WantJSON(t, 201)["id"].(string)
	if _, err := insp.GetTaskInfo(jobs.QueueDefault, "chat:reply:"+q2); err != nil {
		t.Fatalf("second reply not queued: %v", err)
	}
	e.DropTasks()

	a.Answer(t, fam, id, q1)
	a.Answer(t, fam, id, q2)
	got := e.Do("GET", path, e.Alpha.Key, nil).WantJSON(t, 200)
	msgs := got["messages"].([]any)
	if got["pending"] != false || got["message_count"] != 4.0 || len(msgs) != 4 || got["error"] != nil {
		t.Fatalf("answered chat: %v", got)
	}
	last := msgs[3].(map[string]any)
	if last["role"] != "assistant" || last["content"] != "Answer to second" || last["model"] != "m-fake" {
		t.Fatalf("answer: %v", last)
	}
	apitest.WantError(t, e.Do("POST", path+"/messages/retry", e.Alpha.Key, nil), 422, "validation_failed")

	// A failed reply: the chat says so in a sentence of ours, the
	// question stays, and a retry queues it again.
	q3 := e.Do("POST", path+"/messages", e.Alpha.Key, map[string]any{"content": "third"}).WantJSON(t, 201)["id"].(string)
	e.DropTasks()
	fail = true
	a.Answer(t, fam, id, q3)
	got = e.Do("GET", path, e.Alpha.Key, nil).WantJSON(t, 200)
	if got["error"] != assistant.FailedMessage || got["pending"] != false || got["message_count"] != 5.0 {
		t.Fatalf("failed chat: %v", got)
	}
	r := e.Do("POST", path+"/messages/retry", e.Alpha.Key, nil).WantJSON(t, 202)
	if r["message"] != "Retry initiated" || r["message_id"] != q3 {
		t.Fatalf("retry: %v", r)
	}
	if _, err := insp.GetTaskInfo(jobs.QueueDefault, "chat:reply:"+q3); err != nil {
		t.Fatalf("retry not queued: %v", err)
	}
	// Asked twice, it is queued once.
	e.Do("POST", path+"/messages/retry", e.Alpha.Key, nil).WantJSON(t, 202)
	e.DropTasks()
	if got = e.Do("GET", path, e.Alpha.Key, nil).WantJSON(t, 200); got["error"] != nil || got["pending"] != true {
		t.Fatalf("after retry: %v", got)
	}
	fail = false
	a.Answer(t, fam, id, q3)
	a.Answer(t, fam, id, q3) // asynq may run it twice: one answer
	if got = e.Do("GET", path, e.Alpha.Key, nil).WantJSON(t, 200); got["message_count"] != 6.0 || got["pending"] != false {
		t.Fatalf("after the retried reply: %v", got)
	}

	apitest.WantError(t, e.Do("POST", path+"/messages/retry", e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("POST", path+"/messages/retry", e.Alpha.ReadKey, nil), 403, "insufficient_scope")
	empty := e.Do("POST", "/api/v1/chats", e.Alpha.Key, map[string]any{"title": "Empty"}).WantJSON(t, 201)
	apitest.WantError(t, e.Do("POST", "/api/v1/chats/"+empty["id"].(string)+"/messages/retry", e.Alpha.Key, nil), 422, "validation_failed")
	apitest.WantError(t, e.Do("POST", "/api/v1/chats/nope/messages/retry", e.Alpha.Key, nil), 404, "not_found")
}

func TestAssistantSettings(t *testing.T) {
	e := apitest.NewEnv(t)
	a := apitest.NewAnswerer(t, e, assistanttest.Sequence(assistanttest.Reply{Content: "Hi.", Prompt: 70, Completion: 5}))
	chat := e.Do("POST", "/api/v1/chats", e.Alpha.Key, map[string]any{"title": "T", "message": "hello"}).WantJSON(t, 201)
	e.DropTasks()
	a.Answer(t, e.Alpha.Family.ID, chat["id"].(string), lastMessageID(t, chat))

	s := e.Do("GET", "/api/v1/assistant", e.Alpha.ReadKey, nil).WantJSON(t, 200)
	usage, _ := s["usage"].(map[string]any)
	if s["may_write"] != false || usage == nil || usage["tokens_today"] != 75.0 {
		t.Fatalf("settings: %v", s)
	}
	chats := usage["chats"].([]any)
	if len(chats) != 1 || chats[0].(map[string]any)["prompt_tokens"] != 70.0 || chats[0].(map[string]any)["answers"] != 1.0 {
		t.Fatalf("usage: %v", usage)
	}
	if s := e.Do("PATCH", "/api/v1/assistant", e.Alpha.Key, map[string]any{"may_write": true}).WantJSON(t, 200); s["may_write"] != true {
		t.Fatalf("after PATCH: %v", s)
	}
	u, err := e.Store.User(t.Context(), e.Alpha.Family.ID, e.Alpha.User.ID)
	if err != nil || !u.AssistantMayWrite {
		t.Fatalf("stored: %v %v", u, err)
	}
	apitest.WantError(t, e.Do("PATCH", "/api/v1/assistant", e.Alpha.Key, map[string]any{"may_write": "yes"}), 422, "validation_failed")
	apitest.WantError(t, e.Do("PATCH", "/api/v1/assistant", e.Alpha.Key, map[string]any{}), 422, "validation_failed")
	apitest.WantError(t, e.Do("PATCH", "/api/v1/assistant", e.Alpha.ReadKey, map[string]any{"may_write": false}), 403, "insufficient_scope")
	// Another family's figures are its own.
	if s := e.Do("GET", "/api/v1/assistant", e.Beta.Key, nil).WantJSON(t, 200); s["usage"].(map[string]any)["tokens_today"] != 0.0 {
		t.Fatalf("beta: %v", s)
	}
}

// TestChatStream follows a reply over server-sent events, through Redis
// from the job to the web process.
func TestChatStream(t *testing.T) {
	e := apitest.NewEnv(t)
	a := apitest.NewAnswerer(t, e, assistanttest.Sequence(assistanttest.Reply{Content: "Streaming works fine."}))
	base := e.Listen()
	chat := e.Do("POST", "/api/v1/chats", e.Alpha.Key, map[string]any{"title": "T", "message": "hello"}).WantJSON(t, 201)
	e.DropTasks()
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
	resp := open(e.Alpha.Key)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Answer(t, e.Alpha.Family.ID, id, lastMessageID(t, chat))
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
	resp = open(e.Alpha.Key)
	body := new(strings.Builder)
	sc = bufio.NewScanner(resp.Body)
	for sc.Scan() {
		body.WriteString(sc.Text() + "\n")
	}
	if !strings.HasPrefix(body.String(), "event: idle\n") {
		t.Fatalf("idle stream: %q", body.String())
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/chats/"+id+"/stream", e.Beta.Key, nil), 404, "not_found")
}
