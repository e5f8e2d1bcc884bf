package models_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"coffer/models"
	"coffer/models/modelstest"
)

// TestChatsPageValues: each chat of a page carries its own values, the
// nullable ones included, as Chat reads them one by one. The PostgreSQL
// page reads its rows through one scratch chat, so a pointer shared
// between rows (an error, a last message's time) would show here.
func TestChatsPageValues(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "alpha")
	for i := range 6 {
		c := &models.Chat{FamilyID: f.Family.ID, UserID: f.User.ID, Title: fmt.Sprintf("chat %d", i)}
		first := ""
		if i%3 != 0 {
			first = fmt.Sprintf("hello %d", i)
		}
		if _, err := s.CreateChat(ctx, c, first); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			msg := fmt.Sprintf("failure %d", i)
			if err := s.SetChatError(ctx, f.Family.ID, c.ID, &msg); err != nil {
				t.Fatal(err)
			}
		}
	}
	chats, total, err := s.Chats(ctx, f.Family.ID, f.User.ID, models.Page{Number: 1, Size: 25})
	if err != nil || total != 6 || len(chats) != 6 {
		t.Fatalf("page: %d chats of %d, %v", len(chats), total, err)
	}
	errors, lasts := 0, 0
	for _, got := range chats {
		want, err := s.Chat(ctx, f.Family.ID, f.User.ID, got.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, *want) {
			t.Errorf("chat %q in the page:\n%+v\nread alone:\n%+v", want.Title, got, *want)
		}
		if got.Error != nil {
			errors++
		}
		if got.LastMessageAt != nil {
			lasts++
		}
	}
	if errors != 3 || lasts != 4 {
		t.Errorf("%d chats with an error (want 3), %d with a last message (want 4)", errors, lasts)
	}
}
