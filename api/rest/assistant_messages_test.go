package rest_test

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/hibiken/asynq"

	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/jobs/assistant/assistanttest"
)

// TestChatMessageToolCallsAndUsage: an answer shows, as the reference's
// chat JSON does, the tools it called with their arguments, and the
// tokens it used; the chat shows the tokens of all its answers; a user
// message shows neither.
func TestChatMessageToolCallsAndUsage(t *testing.T) {
	e := apitest.NewEnv(t)
	a := apitest.NewAnswerer(t, e, func(n int, r *assistanttest.Request) assistanttest.Reply {
		if r.Last().Role != "tool" {
			return assistanttest.Reply{Calls: []assistanttest.Call{
				{Name: "get_transactions", Arguments: `{"search": "coffee", "page_size": 5}`},
				{Name: "get_accounts", Arguments: ""}}}
		}
		return assistanttest.Reply{Content: "Nothing on coffee."}
	})
	chat := e.Do("POST", "/api/v1/chats", e.Alpha.Key, map[string]any{"title": "T", "message": "coffee?"}).WantJSON(t, 201)
	id := chat["id"].(string)
	if u, _ := json.Marshal(chat["usage"]); string(u) != `{"completion_tokens":0,"prompt_tokens":0,"total_tokens":0}` {
		t.Fatalf("usage of a new chat %s", u)
	}
	e.DropTasks()
	a.Answer(t, e.Alpha.Family.ID, id, lastMessageID(t, chat))

	got := e.Do("GET", "/api/v1/chats/"+id, e.Alpha.Key, nil).WantJSON(t, 200)
	msgs := got["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("messages %v", msgs)
	}
	q, ans := msgs[0].(map[string]any), msgs[1].(map[string]any)
	for _, k := range []string{"tool_calls", "usage", "status"} {
		if _, ok := q[k]; ok {
			t.Errorf("a user message has %s: %v", k, q)
		}
	}
	calls, _ := json.Marshal(ans["tool_calls"])
	if string(calls) != `[{"function_arguments":{"page_size":5,"search":"coffee"},"function_name":"get_transactions"},`+
		`{"function_arguments":{},"function_name":"get_accounts"}]` {
		t.Fatalf("tool calls %s", calls)
	}
	usage, _ := json.Marshal(ans["usage"])
	if string(usage) != `{"completion_tokens":40,"prompt_tokens":200,"total_tokens":240}` || ans["status"] != "complete" {
		t.Fatalf("usage %s status %v", usage, ans["status"])
	}
	if total, _ := json.Marshal(got["usage"]); string(total) != string(usage) {
		t.Fatalf("chat usage %s, want %s", total, usage)
	}

	// An answer without tools lists none.
	m := e.Do("POST", "/api/v1/chats/"+id+"/messages", e.Alpha.Key, map[string]any{"content": "thanks"}).WantJSON(t, 201)
	e.DropTasks()
	a.Fake.Script = assistanttest.Sequence(assistanttest.Reply{Content: "You are welcome."})
	a.Answer(t, e.Alpha.Family.ID, id, m["id"].(string))
	got = e.Do("GET", "/api/v1/chats/"+id, e.Alpha.Key, nil).WantJSON(t, 200)
	last := got["messages"].([]any)[3].(map[string]any)
	if calls, _ := json.Marshal(last["tool_calls"]); string(calls) != `[]` {
		t.Fatalf("tool calls of a plain answer %s", calls)
	}
	if total := got["usage"].(map[string]any)["total_tokens"]; total != 360.0 {
		t.Fatalf("chat total %v, want 360", total)
	}
}

// TestChatMessagesPostedAtOnce: two messages posted to one chat at the
// same moment are both kept, both counted and each queued for its own
// answer.
func TestChatMessagesPostedAtOnce(t *testing.T) {
	e := apitest.NewEnv(t)
	chat := e.Do("POST", "/api/v1/chats", e.Alpha.Key, map[string]any{"title": "T"}).WantJSON(t, 201)
	path := "/api/v1/chats/" + chat["id"].(string)
	var wg sync.WaitGroup
	results := make([]apitest.Response, 2)
	for i, content := range []string{"one", "two"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.Do("POST", path+"/messages", e.Alpha.Key, map[string]any{"content": content})
		}()
	}
	wg.Wait()
	insp := asynq.NewInspector(e.Redis)
	defer insp.Close()
	defer e.DropTasks()
	for _, r := range results {
		m := r.WantJSON(t, 201)
		if _, err := insp.GetTaskInfo(jobs.QueueDefault, "chat:reply:"+m["id"].(string)); err != nil {
			t.Fatalf("reply to %v not queued: %v", m["content"], err)
		}
	}
	got := e.Do("GET", path, e.Alpha.Key, nil).WantJSON(t, 200)
	if got["message_count"] != 2.0 || len(got["messages"].([]any)) != 2 || got["pending"] != true {
		t.Fatalf("chat after two messages at once: %v", got)
	}
}
