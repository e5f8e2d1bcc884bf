package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Message types.
const (
	UserMessage      = "user_message"
	AssistantMessage = "assistant_message"
)

// Message is one turn of a chat.
type Message struct {
	bun.BaseModel `bun:"table:messages,alias:msg"`

	ID        uuid.UUID `bun:"id,pk"`
	FamilyID  uuid.UUID `bun:"family_id"`
	ChatID    uuid.UUID `bun:"chat_id"`
	Type      string    `bun:"type"`
	Content   string    `bun:"content"`
	Model     *string   `bun:"model"` // assistant messages only
	CreatedAt time.Time `bun:"created_at"`
	UpdatedAt time.Time `bun:"updated_at"`
}

// Role is "user" or "assistant".
func (m *Message) Role() string {
	if m.Type == AssistantMessage {
		return "assistant"
	}
	return "user"
}

// Messages lists a page of a user's chat, oldest first.
func (s *Store) Messages(ctx context.Context, familyID, userID, chatID uuid.UUID, p Page) ([]Message, int, error) {
	if _, err := s.Chat(ctx, familyID, userID, chatID); err != nil {
		return nil, 0, err
	}
	msgs := []Message{}
	n, err := p.scan(ctx, s.db.NewSelect().Model(&msgs).
		Where("msg.family_id = ?", familyID).
		Where("msg.chat_id = ?", chatID).
		OrderExpr("msg.created_at ASC, msg.id ASC"))
	return msgs, n, dbErr("list messages", err)
}

// CreateMessage appends a message to a user's chat and updates the chat's
// count and last-message time in the same database transaction.
func (s *Store) CreateMessage(ctx context.Context, userID uuid.UUID, m *Message) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		return tx.insertMessage(ctx, userID, m)
	})
}

func (s *Store) insertMessage(ctx context.Context, userID uuid.UUID, m *Message) error {
	m.ID = NewID()
	m.CreatedAt = s.now()
	m.UpdatedAt = m.CreatedAt
	res, err := s.db.NewUpdate().Model((*Chat)(nil)).
		Set("message_count = message_count + 1").
		Set("last_message_at = ?", m.CreatedAt).
		Set("updated_at = ?", m.CreatedAt).
		Where("family_id = ?", m.FamilyID).
		Where("user_id = ?", userID).
		Where("id = ?", m.ChatID).
		Exec(ctx)
	if err := affectedOne(res, err, "count message"); err != nil {
		return err
	}
	_, err = s.db.NewInsert().Model(m).Exec(ctx)
	return dbErr("create message", err)
}
