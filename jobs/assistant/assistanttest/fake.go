// Package assistanttest is a fake OpenAI-compatible chat completions
// server for tests, written to the protocol: it reads the request as the
// API defines it and answers with streamed server-sent events (content
// and tool_calls deltas, finish_reason, a usage chunk, [DONE]) or with the
// API's error bodies, on loopback. Test code only.
package assistanttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Call is a function call the fake model makes.
type Call struct {
	Name      string
	Arguments string // raw: may be invalid JSON on purpose
}

// Reply scripts one answer of the fake model.
type Reply struct {
	Content    string // streamed a few characters at a time
	Calls      []Call
	Refusal    string
	Status     int    // an error status instead of a stream (429, 500, 401…)
	RetryAfter string // with Status
	Drop       bool   // stream part of the answer, then cut the connection
	Hang       bool   // answer nothing until the client gives up
	NoUsage    bool   // leave out the usage chunk
	Prompt     int    // usage reported; zero: 100
	Completion int    // zero: 20
}

// Message is a message of a request as the fake received it.
type Message struct {
	Role       string `json:"role"`
	Content    any    `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// Text is the message's content as text.
func (m Message) Text() string {
	if s, ok := m.Content.(string); ok {
		return s
	}
	b, _ := json.Marshal(m.Content)
	return string(b)
}

// Request is one chat completions request as the fake received it.
type Request struct {
	Model         string    `json:"model"`
	Messages      []Message `json:"messages"`
	Stream        bool      `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	Authorization string `json:"-"`
}

// ToolNames lists the tools the request offered.
func (r *Request) ToolNames() []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Function.Name)
	}
	return out
}

// Last is the request's last message.
func (r *Request) Last() Message { return r.Messages[len(r.Messages)-1] }

// Server is the fake. Script decides each answer from the request; the
// requests are kept for the test to read.
type Server struct {
	URL    string // the base URL, ending in /v1
	Script func(n int, r *Request) Reply

	mu       sync.Mutex
	requests []*Request
	release  chan struct{}
}

// New starts a fake on loopback, stopped at the end of the test.
func New(t testing.TB, script func(n int, r *Request) Reply) *Server {
	t.Helper()
	s := &Server{Script: script, release: make(chan struct{})}
	ts := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		close(s.release)
		ts.CloseClientConnections()
		ts.Close()
	})
	s.URL = ts.URL + "/v1"
	return s
}

// Sequence scripts answers in order; past the end the last repeats.
func Sequence(replies ...Reply) func(int, *Request) Reply {
	return func(n int, _ *Request) Reply {
		return replies[min(n, len(replies)-1)]
	}
}

// Requests returns the requests received so far.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "", "Unknown request URL: "+r.URL.Path)
		return
	}
	req := new(Request)
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, req); err != nil {
		writeError(w, http.StatusBadRequest, "", "We could not parse the JSON body of your request.")
		return
	}
	req.Authorization = r.Header.Get("Authorization")
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	reply := s.Script(n, req)

	switch {
	case reply.Hang:
		select {
		case <-r.Context().Done():
		case <-s.release:
		}
		return
	case reply.Status != 0:
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		// The provider's own words, which must never reach a person.
		writeError(w, reply.Status, "", "upstream said: secret internal detail sk-live-XYZ at https://internal.example/")
		return
	}
	if !req.Stream {
		writeError(w, http.StatusBadRequest, "", "this fake only streams")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	id := fmt.Sprintf("chatcmpl-%d", n)
	send := func(choices []map[string]any, usage map[string]any) {
		chunk := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1700000000,
			"model": req.Model + "-fake", "choices": choices}
		if usage != nil {
			chunk["usage"] = usage
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		flusher.Flush()
	}
	delta := func(d map[string]any, finish any) []map[string]any {
		return []map[string]any{{"index": 0, "delta": d, "finish_reason": finish, "logprobs": nil}}
	}
	send(delta(map[string]any{"role": "assistant", "content": ""}, nil), nil)
	for _, piece := range pieces(reply.Content, 7) {
		send(delta(map[string]any{"content": piece}, nil), nil)
		if reply.Drop {
			panic(http.ErrAbortHandler) // cuts the connection mid-stream
		}
	}
	if reply.Drop {
		panic(http.ErrAbortHandler)
	}
	if reply.Refusal != "" {
		send(delta(map[string]any{"refusal": reply.Refusal}, nil), nil)
	}
	for i, c := range reply.Calls {
		send(delta(map[string]any{"tool_calls": []map[string]any{{"index": i, "id": fmt.Sprintf("call_%d_%d", n, i),
			"type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil), nil)
		for _, piece := range pieces(c.Arguments, 5) {
			send(delta(map[string]any{"tool_calls": []map[string]any{{"index": i,
				"function": map[string]any{"arguments": piece}}}}, nil), nil)
		}
	}
	finish := "stop"
	if len(reply.Calls) > 0 {
		finish = "tool_calls"
	}
	send(delta(map[string]any{}, finish), nil)
	if req.StreamOptions.IncludeUsage && !reply.NoUsage {
		p, c := max(reply.Prompt, 0), max(reply.Completion, 0)
		if p == 0 {
			p = 100
		}
		if c == 0 {
			c = 20
		}
		send([]map[string]any{}, map[string]any{"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	flusher.Flush()
}

// pieces cuts s into chunks of n bytes at most (never inside a rune), as
// a model streams tokens.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i := min(n, len(s))
		for i < len(s) && !utf8Start(s[i]) {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// writeError answers as the API does: {"error": {"message", "type", …}}.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_")),
		"param": nil, "code": code}})
}
