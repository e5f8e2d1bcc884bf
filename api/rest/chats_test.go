package rest_test

import (
	"fmt"
	"testing"
	"time"

	"coffer/api/apitest"
	"coffer/models"
)

func TestChats(t *testing.T) {
	e := apitest.NewEnv(t)
	r := e.Do("POST", "/api/v1/chats", e.Alpha.Key, map[string]any{"title": "Budget", "message": "How much did I spend?"})
	chat := r.WantJSON(t, 201)
	if chat["message_count"] != 1.0 || chat["error"] != nil || chat["last_message_at"] == nil || len(chat["messages"].([]any)) != 1 {
		t.Errorf("created chat: %s", r.Body)
	}
	id := chat["id"].(string)
	path := "/api/v1/chats/" + id

	msg := e.Do("POST", path+"/messages", e.Alpha.Key, map[string]any{"content": "And in March?"})
	if msg.Status != 201 {
		t.Fatalf("message: %d %s", msg.Status, msg.Body)
	}
	if m := msg.JSON(t); m["role"] != "user" || m["type"] != "user_message" || m["chat_id"] != id || m["model"] != nil {
		t.Errorf("message: %s", msg.Body)
	}
	apitest.WantError(t, e.Do("POST", path+"/messages", e.Alpha.Key, map[string]any{"content": " "}), 422, "validation_failed")
	apitest.WantError(t, e.Do("POST", path+"/messages", e.Alpha.Key, map[string]any{"content": 5}), 422, "validation_failed")

	// Another family, or another user of the same family, sees nothing.
	apitest.WantError(t, e.Do("GET", path, e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("POST", path+"/messages", e.Beta.Key, map[string]any{"content": "hi"}), 404, "not_found")
	sib := &models.User{FamilyID: e.Alpha.Family.ID, Email: "sibling-" + id[:8] + "@example.com"}
	if err := e.Store.CreateUser(t.Context(), sib); err != nil {
		t.Fatal(err)
	}
	sibKey, _ := e.Store.CreateAPIKey(t.Context(), e.Alpha.Family.ID, &models.APIKey{UserID: sib.ID, Name: "s", Scope: models.ScopeReadWrite})
	apitest.WantError(t, e.Do("GET", path, sibKey, nil), 404, "not_found")
	if m := e.Do("GET", "/api/v1/chats", sibKey, nil).JSON(t); len(m["chats"].([]any)) != 0 {
		t.Errorf("sibling sees chats: %v", m)
	}

	up := e.Do("PATCH", path, e.Alpha.Key, map[string]any{"title": "Renamed"})
	if up.Status != 200 || up.JSON(t)["title"] != "Renamed" {
		t.Errorf("rename: %d %s", up.Status, up.Body)
	}
	apitest.WantError(t, e.Do("PUT", path, e.Alpha.Key, map[string]any{}), 422, "validation_failed")
	apitest.WantError(t, e.Do("POST", "/api/v1/chats", e.Alpha.Key, map[string]any{"message": "no title"}), 422, "validation_failed")
	apitest.WantError(t, e.Do("POST", "/api/v1/chats", e.Alpha.Key, `[]`), 400, "bad_request")

	detail := e.Do("GET", path+"?per_page=1&page=2", e.Alpha.Key, nil).JSON(t)
	msgs := detail["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["content"] != "And in March?" || detail["message_count"] != 2.0 {
		t.Errorf("detail page 2: %v", detail)
	}

	if r := e.Do("DELETE", path, e.Alpha.Key, nil); r.Status != 204 || len(r.Body) != 0 {
		t.Errorf("delete: %d %q", r.Status, r.Body)
	}
	apitest.WantError(t, e.Do("GET", path, e.Alpha.Key, nil), 404, "not_found")
}

func TestListChatsPaging(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := t.Context()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	tick := 0
	e.Store.Now = func() time.Time { tick++; return base.Add(time.Duration(tick) * time.Minute) }
	for i := 0; i < 30; i++ {
		c := &models.Chat{FamilyID: e.Alpha.Family.ID, UserID: e.Alpha.User.ID, Title: fmt.Sprintf("chat %02d", i)}
		first := ""
		if i%2 == 0 {
			first = "hello"
		}
		if _, err := e.Store.CreateChat(ctx, c, first); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := e.Store.CreateMessage(ctx, e.Alpha.User.ID, &models.Message{FamilyID: e.Alpha.Family.ID, ChatID: c.ID, Type: models.UserMessage, Content: "later"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	m := e.Do("GET", "/api/v1/chats", e.Alpha.Key, nil).JSON(t)
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
	page2 := e.Do("GET", "/api/v1/chats?page=2", e.Alpha.Key, nil).JSON(t)
	if n := len(page2["chats"].([]any)); n != 5 {
		t.Errorf("page 2 has %d chats", n)
	}
	empty := e.Do("GET", "/api/v1/chats?page=5", e.Alpha.Key, nil).JSON(t)
	if len(empty["chats"].([]any)) != 0 || empty["pagination"].(map[string]any)["page"] != 5.0 {
		t.Errorf("past the end: %v", empty)
	}
	for _, q := range []string{"page=0", "per_page=abc", "per_page=0", "page=1.5", "page=99999999999999999999"} {
		apitest.WantError(t, e.Do("GET", "/api/v1/chats?"+q, e.Alpha.Key, nil), 400, "bad_request")
	}
}
