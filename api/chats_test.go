package api_test

import (
	"fmt"
	"testing"
	"time"

	"coffer/models"
)

func TestChats(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/api/v1/chats", e.alpha.Key, map[string]any{"title": "Budget", "message": "How much did I spend?"})
	chat := r.wantJSON(t, 201)
	if chat["message_count"] != 1.0 || chat["error"] != nil || chat["last_message_at"] == nil || len(chat["messages"].([]any)) != 1 {
		t.Errorf("created chat: %s", r.body)
	}
	id := chat["id"].(string)
	path := "/api/v1/chats/" + id

	msg := e.do("POST", path+"/messages", e.alpha.Key, map[string]any{"content": "And in March?"})
	if msg.status != 201 {
		t.Fatalf("message: %d %s", msg.status, msg.body)
	}
	if m := msg.json(t); m["role"] != "user" || m["type"] != "user_message" || m["chat_id"] != id || m["model"] != nil {
		t.Errorf("message: %s", msg.body)
	}
	wantError(t, e.do("POST", path+"/messages", e.alpha.Key, map[string]any{"content": " "}), 422, "validation_failed")
	wantError(t, e.do("POST", path+"/messages", e.alpha.Key, map[string]any{"content": 5}), 422, "validation_failed")

	// Another family, or another user of the same family, sees nothing.
	wantError(t, e.do("GET", path, e.beta.Key, nil), 404, "not_found")
	wantError(t, e.do("POST", path+"/messages", e.beta.Key, map[string]any{"content": "hi"}), 404, "not_found")
	sib := &models.User{FamilyID: e.alpha.Family.ID, Email: "sibling-" + id[:8] + "@example.com"}
	if err := e.store.CreateUser(t.Context(), sib); err != nil {
		t.Fatal(err)
	}
	sibKey, _ := e.store.CreateAPIKey(t.Context(), e.alpha.Family.ID, &models.APIKey{UserID: sib.ID, Name: "s", Scope: models.ScopeReadWrite})
	wantError(t, e.do("GET", path, sibKey, nil), 404, "not_found")
	if m := e.do("GET", "/api/v1/chats", sibKey, nil).json(t); len(m["chats"].([]any)) != 0 {
		t.Errorf("sibling sees chats: %v", m)
	}

	up := e.do("PATCH", path, e.alpha.Key, map[string]any{"title": "Renamed"})
	if up.status != 200 || up.json(t)["title"] != "Renamed" {
		t.Errorf("rename: %d %s", up.status, up.body)
	}
	wantError(t, e.do("PUT", path, e.alpha.Key, map[string]any{}), 422, "validation_failed")
	wantError(t, e.do("POST", "/api/v1/chats", e.alpha.Key, map[string]any{"message": "no title"}), 422, "validation_failed")
	wantError(t, e.do("POST", "/api/v1/chats", e.alpha.Key, `[]`), 400, "bad_request")

	detail := e.do("GET", path+"?per_page=1&page=2", e.alpha.Key, nil).json(t)
	msgs := detail["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["content"] != "And in March?" || detail["message_count"] != 2.0 {
		t.Errorf("detail page 2: %v", detail)
	}

	if r := e.do("DELETE", path, e.alpha.Key, nil); r.status != 204 || len(r.body) != 0 {
		t.Errorf("delete: %d %q", r.status, r.body)
	}
	wantError(t, e.do("GET", path, e.alpha.Key, nil), 404, "not_found")
}

func TestListChatsPaging(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	tick := 0
	e.store.Now = func() time.Time { tick++; return base.Add(time.Duration(tick) * time.Minute) }
	for i := 0; i < 30; i++ {
		c := &models.Chat{FamilyID: e.alpha.Family.ID, UserID: e.alpha.User.ID, Title: fmt.Sprintf("chat %02d", i)}
		first := ""
		if i%2 == 0 {
			first = "hello"
		}
		if _, err := e.store.CreateChat(ctx, c, first); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := e.store.CreateMessage(ctx, e.alpha.User.ID, &models.Message{FamilyID: e.alpha.Family.ID, ChatID: c.ID, Type: models.UserMessage, Content: "later"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	m := e.do("GET", "/api/v1/chats", e.alpha.Key, nil).json(t)
	p := m["pagination"].(map[string]any)
	if p["page"] != 1.0 || p["per_page"] != 25.0 || p["total_count"] != 30.0 || p["total_pages"] != 2.0 {
		t.Errorf("pagination %v", p)
	}
	chats := m["chats"].([]any)
	first := chats[0].(map[string]any)
	if first["title"] != "chat 29" || first["last_message_at"] != nil || first["message_count"] != 0.0 {
		t.Errorf("newest chat first: %v", first)
	}
	second := chats[1].(map[string]any)
	if second["title"] != "chat 28" || second["message_count"] != 2.0 {
		t.Errorf("second: %v", second)
	}
	// last_message_at is the newest message's time, not the first one's.
	if second["last_message_at"].(string) <= second["created_at"].(string) {
		t.Errorf("last_message_at %v is not after created_at %v", second["last_message_at"], second["created_at"])
	}
	page2 := e.do("GET", "/api/v1/chats?page=2", e.alpha.Key, nil).json(t)
	if n := len(page2["chats"].([]any)); n != 5 {
		t.Errorf("page 2 has %d chats", n)
	}
	empty := e.do("GET", "/api/v1/chats?page=5", e.alpha.Key, nil).json(t)
	if len(empty["chats"].([]any)) != 0 || empty["pagination"].(map[string]any)["page"] != 5.0 {
		t.Errorf("past the end: %v", empty)
	}
	for _, q := range []string{"page=0", "per_page=abc", "per_page=0", "page=1.5", "page=99999999999999999999"} {
		wantError(t, e.do("GET", "/api/v1/chats?"+q, e.alpha.Key, nil), 400, "bad_request")
	}
}
