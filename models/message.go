package models

import (
	"context"
	"errors"
	"slices"
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

	ID       uuid.UUID `bun:"id,pk"`
	FamilyID uuid.UUID `bun:"family_id"`
	ChatID   uuid.UUID `bun:"chat_id"`
	Type     string    `bun:"type"`
	Content  string    `bun:"content"`
	Model    *string   `bun:"model"` // assistant messages only
	// ReplyTo is the user message an assistant message answers; at most one
	// assistant message answers each user message.
	ReplyTo          *uuid.UUID `bun:"reply_to"`
	ToolCalls        *string    `bun:"tool_calls"` // JSON list of the tools called, with their arguments
	PromptTokens     int        `bun:"prompt_tokens"`
	CompletionTokens int        `bun:"completion_tokens"`
	CreatedAt        time.Time  `bun:"created_at"`
	UpdatedAt        time.Time  `bun:"updated_at"`
	// Proposals are the changes an answer proposes, stored with it by
	// SaveReply (table chat_proposals).
	Proposals []Proposal `bun:"-"`
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
		Set("error = NULL"). // a new question starts afresh
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

// Conversation is a user message to answer with what comes before it.
type Conversation struct {
	Chat     *Chat
	Question *Message
	// History is the chat's messages up to and including Question, oldest
	// first, at most the newest limit of them.
	History []Message
	// Reply is the assistant's answer to Question; nil until there is one.
	Reply *Message
}

// Conversation loads user message messageID of a family's chat with the
// messages before it, for the assistant, which acts for the chat's owner.
func (s *Store) Conversation(ctx context.Context, familyID, chatID, messageID uuid.UUID, limit int) (*Conversation, error) {
	c := &Conversation{Chat: new(Chat), Question: new(Message)}
	err := s.db.NewSelect().Model(c.Chat).Where("ch.family_id = ?", familyID).Where("ch.id = ?", chatID).Scan(ctx)
	if err != nil {
		return nil, dbErr("get chat", err)
	}
	err = s.db.NewSelect().Model(c.Question).
		Where("msg.family_id = ?", familyID).Where("msg.chat_id = ?", chatID).
		Where("msg.id = ?", messageID).Where("msg.type = ?", UserMessage).
		Scan(ctx)
	if err != nil {
		return nil, dbErr("get message", err)
	}
	reply := new(Message)
	err = s.db.NewSelect().Model(reply).Where("msg.family_id = ?", familyID).Where("msg.reply_to = ?", messageID).Scan(ctx)
	switch err = dbErr("get reply", err); {
	case err == nil:
		c.Reply = reply
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	// The newest limit messages up to the question, in (created_at, id)
	// order: read newest first, then turn around.
	q := c.Question
	err = s.db.NewSelect().Model(&c.History).
		Where("msg.family_id = ?", familyID).Where("msg.chat_id = ?", chatID).
		Where("(msg.created_at < ? OR (msg.created_at = ? AND msg.id <= ?))", q.CreatedAt, q.CreatedAt, q.ID).
		OrderExpr("msg.created_at DESC, msg.id DESC").Limit(int64(limit)).
		Scan(ctx)
	if err != nil {
		return nil, dbErr("list conversation", err)
	}
	slices.Reverse(c.History)
	return c, nil
}

// SaveReply stores m, the assistant's answer to user message m.ReplyTo,
// counts it on the chat and clears the chat's error, in one database
// transaction. A message is answered once: when it already has an answer
// (a job that ran twice), that answer comes back with created false and
// nothing changes. A chat deleted meanwhile is ErrNotFound.
func (s *Store) SaveReply(ctx context.Context, m *Message) (reply *Message, created bool, err error) {
	m.Type = AssistantMessage
	err = s.RunInTx(ctx, func(tx *Store) error {
		m.ID = NewID()
		m.CreatedAt = tx.now()
		m.UpdatedAt = m.CreatedAt
		res, err := tx.db.NewUpdate().Model((*Chat)(nil)).
			Set("message_count = message_count + 1").
			Set("last_message_at = ?", m.CreatedAt).
			Set("updated_at = ?", m.CreatedAt).
			Set("error = NULL").
			Where("family_id = ?", m.FamilyID).
			Where("id = ?", m.ChatID).
			Exec(ctx)
		if err := affectedOne(res, err, "count reply"); err != nil {
			return err
		}
		if _, err := tx.db.NewInsert().Model(m).Exec(ctx); err != nil {
			return dbErr("create reply", err)
		}
		return tx.insertProposals(ctx, m)
	})
	if errors.Is(err, ErrConflict) {
		// Either the answer exists, or the question was deleted with its chat.
		existing := new(Message)
		err = s.db.NewSelect().Model(existing).
			Where("msg.family_id = ?", m.FamilyID).Where("msg.reply_to = ?", m.ReplyTo).
			Scan(ctx)
		return existing, false, dbErr("get reply", err)
	}
	if err != nil {
		return nil, false, err
	}
	return m, true, nil
}

// LastQuestion returns the newest user message of a user's chat, with its
// answer when it has one.
func (s *Store) LastQuestion(ctx context.Context, familyID, userID, chatID uuid.UUID) (question, reply *Message, err error) {
	if _, err := s.Chat(ctx, familyID, userID, chatID); err != nil {
		return nil, nil, err
	}
	question = new(Message)
	err = s.db.NewSelect().Model(question).
		Where("msg.family_id = ?", familyID).Where("msg.chat_id = ?", chatID).Where("msg.type = ?", UserMessage).
		OrderExpr("msg.created_at DESC, msg.id DESC").Limit(1).
		Scan(ctx)
	if err != nil {
		return nil, nil, dbErr("get last question", err)
	}
	reply = new(Message)
	err = s.db.NewSelect().Model(reply).Where("msg.family_id = ?", familyID).Where("msg.reply_to = ?", question.ID).Scan(ctx)
	if err = dbErr("get reply", err); errors.Is(err, ErrNotFound) {
		return question, nil, nil
	}
	return question, reply, err
}

// ChatPending reports whether the assistant is still answering a family's
// chat: its newest user message has no answer and the chat shows no error.
// Older questions left without an answer (a failure the person moved on
// from) do not count.
func (s *Store) ChatPending(ctx context.Context, c *Chat) (bool, error) {
	if c.Error != nil {
		return false, nil
	}
	n, err := s.db.NewSelect().Model((*Message)(nil)).
		Where("msg.family_id = ?", c.FamilyID).Where("msg.chat_id = ?", c.ID).Where("msg.type = ?", UserMessage).
		Where(unansweredSQL).Where(newestQuestionSQL, UserMessage).
		Count(ctx)
	return n > 0, dbErr("count unanswered messages", err)
}

// unansweredSQL holds for a message msg that no assistant message answers.
const unansweredSQL = "NOT EXISTS (SELECT 1 FROM messages r WHERE r.family_id = msg.family_id AND r.reply_to = msg.id)"

// newestQuestionSQL holds for the newest user message msg of its chat
// (? is UserMessage), in the chat's (created_at, id) order.
const newestQuestionSQL = `NOT EXISTS (SELECT 1 FROM messages n WHERE n.family_id = msg.family_id AND n.chat_id = msg.chat_id
	AND n.type = ? AND (n.created_at > msg.created_at OR (n.created_at = msg.created_at AND n.id > msg.id)))`

// ChatUsage is the tokens a chat's answers used, as the provider counted.
type ChatUsage struct {
	ChatID           uuid.UUID  `bun:"chat_id"`
	Title            string     `bun:"title"`
	UserID           uuid.UUID  `bun:"user_id"`
	Email            string     `bun:"email"` // the chat's owner
	MessageCount     int        `bun:"message_count"`
	LastMessageAt    *time.Time `bun:"last_message_at"`
	Answers          int        `bun:"answers"`
	PromptTokens     int        `bun:"prompt_tokens"`
	CompletionTokens int        `bun:"completion_tokens"`
}

// TotalTokens is prompt and completion tokens together.
func (u ChatUsage) TotalTokens() int { return u.PromptTokens + u.CompletionTokens }

// AssistantUsage lists the token use of every chat of the family that has
// answers written since since (the zero time: ever), counting those
// answers only, the heaviest first, for its admins.
func (s *Store) AssistantUsage(ctx context.Context, familyID uuid.UUID, since time.Time) ([]ChatUsage, error) {
	out := []ChatUsage{}
	q := s.db.NewSelect().Model((*Message)(nil)).
		ColumnExpr("msg.chat_id, ch.title, ch.user_id, u.email, ch.message_count, ch.last_message_at, count(*) AS answers").
		ColumnExpr("sum(msg.prompt_tokens) AS prompt_tokens, sum(msg.completion_tokens) AS completion_tokens").
		Join("JOIN chats AS ch ON ch.id = msg.chat_id AND ch.family_id = msg.family_id").
		Join("JOIN users AS u ON u.id = ch.user_id AND u.family_id = ch.family_id").
		Where("msg.family_id = ?", familyID).
		Where("msg.type = ?", AssistantMessage)
	if !since.IsZero() {
		q.Where("msg.created_at >= ?", since)
	}
	err := q.GroupExpr("msg.chat_id, ch.title, ch.user_id, u.email, ch.message_count, ch.last_message_at").
		OrderExpr("sum(msg.prompt_tokens) + sum(msg.completion_tokens) DESC, msg.chat_id").
		Scan(ctx, &out)
	return out, dbErr("assistant usage", err)
}

// ChatTokens adds up the tokens of a family's chat's answers.
func (s *Store) ChatTokens(ctx context.Context, familyID, chatID uuid.UUID) (prompt, completion int, err error) {
	err = s.db.NewSelect().Model((*Message)(nil)).
		ColumnExpr("COALESCE(sum(msg.prompt_tokens), 0), COALESCE(sum(msg.completion_tokens), 0)").
		Where("msg.family_id = ?", familyID).
		Where("msg.chat_id = ?", chatID).
		Scan(ctx, &prompt, &completion)
	return prompt, completion, dbErr("chat tokens", err)
}
