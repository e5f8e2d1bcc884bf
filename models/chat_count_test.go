package models_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/modelstest"
)

// TestChatCount: the total of a page of chats (users.chat_count, kept by
// the triggers on chats) equals a count of the chats themselves after
// creates, deletes and a user's removal, on every page and past the end.
func TestChatCount(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	a, b := modelstest.NewFamily(t, s, "alpha"), modelstest.NewFamily(t, s, "beta")
	second := &models.User{FamilyID: a.Family.ID, Email: fmt.Sprintf("second-%s@example.com", uuid.NewString()[:8]), Role: models.RoleMember}
	if err := s.CreateUser(ctx, second); err != nil {
		t.Fatal(err)
	}
	var ids []uuid.UUID
	for i := 0; i < 7; i++ {
		for j, u := range []*models.User{a.User, second, b.User} {
			if i >= 3+2*j { // 3, 5 and 7 chats
				continue
			}
			first := ""
			if i%2 == 0 {
				first = "hello"
			}
			c := &models.Chat{FamilyID: u.FamilyID, UserID: u.ID, Title: fmt.Sprintf("chat %d", i)}
			if _, err := s.CreateChat(ctx, c, first); err != nil {
				t.Fatal(err)
			}
			if u == a.User {
				ids = append(ids, c.ID)
			}
		}
	}
	check := func(step string) {
		t.Helper()
		for _, u := range []*models.User{a.User, second, b.User} {
			n, err := s.DB().NewSelect().Table("chats").Where("family_id = ? AND user_id = ?", u.FamilyID, u.ID).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := int(n)
			for page := 1; page <= 4; page++ {
				chats, total, err := s.Chats(ctx, u.FamilyID, u.ID, models.Page{Number: page, Size: 2})
				if err != nil {
					t.Fatal(err)
				}
				if total != want {
					t.Errorf("%s: %s page %d: total %d, counted %d", step, u.Email, page, total, want)
				}
				if n := min(2, max(0, want-(page-1)*2)); len(chats) != n {
					t.Errorf("%s: %s page %d: %d chats, want %d", step, u.Email, page, len(chats), n)
				}
			}
			// Another family's user id counts nothing.
			if _, total, err := s.Chats(ctx, b.Family.ID, u.ID, models.Page{Number: 9, Size: 2}); err != nil || u != b.User && total != 0 {
				t.Errorf("%s: %s under another family: total %d, %v", step, u.Email, total, err)
			}
		}
	}
	check("created")
	if err := s.DeleteChat(ctx, a.Family.ID, a.User.ID, ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteChat(ctx, b.Family.ID, a.User.ID, ids[1]); err == nil { // another family's chat: refused, counts unchanged
		t.Fatal("deleted another family's chat")
	}
	check("deleted")
	// Removing a user takes their chats by cascade, and the trigger's
	// update of the removed row is harmless.
	if _, err := s.DB().NewDelete().Table("users").Where("id = ?", second.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	check("user removed")
}
