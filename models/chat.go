package models

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/uptrace/bun"
)

// Chat is a conversation of one user with the assistant. It belongs to the
// user, not to the whole family.
type Chat struct {
	bun.BaseModel `bun:"table:chats,alias:ch"`

	ID            uuid.UUID  `bun:"id,pk"`
	FamilyID      uuid.UUID  `bun:"family_id"`
	UserID        uuid.UUID  `bun:"user_id"`
	Title         string     `bun:"title"`
	Error         *string    `bun:"error"` // user-facing text of the last failure
	MessageCount  int        `bun:"message_count"`
	LastMessageAt *time.Time `bun:"last_message_at"` // the newest message's time
	CreatedAt     time.Time  `bun:"created_at"`
	UpdatedAt     time.Time  `bun:"updated_at"`
}

// chatsPageSQL reads a page of a user's chats with the count of all of
// them, as a subquery that runs once: one round trip for both. The count
// is the user's chat_count, kept by the triggers on chats: counting the
// chats themselves read every one of them on each page.
const chatsPageSQL = `
SELECT ch.id, ch.family_id, ch.user_id, ch.title, ch.error, ch.message_count, ch.last_message_at, ch.created_at,
       ch.updated_at, (SELECT chat_count FROM users WHERE family_id = $1 AND id = $2) AS total_count
FROM chats AS ch WHERE ch.family_id = $1 AND ch.user_id = $2
ORDER BY ch.created_at DESC, ch.id DESC LIMIT $3 OFFSET $4`

// Chats lists a page of one user's chats, newest first, with the count of
// all of them.
func (s *Store) Chats(ctx context.Context, familyID, userID uuid.UUID, p Page) ([]Chat, int, error) {
	total := -1
	args := []any{familyID, userID, p.Size, (p.Number - 1) * p.Size}
	var err error
	if s.Postgres() {
		// The page's rows and their last messages' times are allocated
		// once, at the page's size (the API caps it at 100), rather than
		// grown row by row: this is the hottest list the API serves. A
		// time appended past that capacity leaves the earlier pointers on
		// the old array, whose values stay as they were.
		chats := make([]Chat, 0, min(max(p.Size, 0), 100))
		lasts := make([]time.Time, 0, cap(chats))
		// Each row is read into c through dest, both made once: Scan's
		// arguments escape, so a slice of them (or a Chat) made per row
		// was a heap object per row. As [16]byte the ids are read in
		// binary; as uuid.UUID (a sql.Scanner) they would be read as text
		// and parsed. The nullable columns go through pgtype values: pgx
		// fills a pointer by reflection.
		var c Chat
		var errText pgtype.Text
		var last pgtype.Timestamptz
		dest := []any{(*[16]byte)(&c.ID), (*[16]byte)(&c.FamilyID), (*[16]byte)(&c.UserID), &c.Title, &errText, &c.MessageCount, &last,
			&c.CreatedAt, &c.UpdatedAt, &total}
		err = s.queryPgx(ctx, chatsPageSQL, args, func(rows pgx.Rows) error {
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			c.Error, c.LastMessageAt = nil, nil
			if errText.Valid {
				msg := errText.String
				c.Error = &msg
			}
			if last.Valid {
				lasts = append(lasts, last.Time)
				c.LastMessageAt = &lasts[len(lasts)-1]
			}
			chats = append(chats, c)
			return nil
		})
		return s.chatsCounted(ctx, familyID, userID, chats, total, err)
	}
	chats := []Chat{}
	var rows []countedChat
	err = s.queryHot(ctx, &rows, chatsPageSQL, args...)
	for _, r := range rows {
		chats, total = append(chats, r.Chat), r.Total
	}
	return s.chatsCounted(ctx, familyID, userID, chats, total, err)
}

// chatsCounted completes a page of chats with the count of all of them:
// the page's own when it brought one, else the user's (a page past the
// end brings none).
func (s *Store) chatsCounted(ctx context.Context, familyID, userID uuid.UUID, chats []Chat, total int, err error) ([]Chat, int, error) {
	if err != nil || total >= 0 {
		return chats, total, dbErr("list chats", err)
	}
	err = s.db.NewSelect().Model((*User)(nil)).Column("chat_count").
		Where("family_id = ?", familyID).Where("id = ?", userID).Scan(ctx, &total)
	if errors.Is(err, sql.ErrNoRows) {
		return chats, 0, nil
	}
	return chats, total, dbErr("count chats", err)
}

// countedChat is a chat read with the count of the query's every row.
type countedChat struct {
	Chat  `bun:",extend"`
	Total int `bun:"total_count,scanonly"`
}

// Chat returns one chat of a user.
func (s *Store) Chat(ctx context.Context, familyID, userID, id uuid.UUID) (*Chat, error) {
	c := new(Chat)
	err := s.db.NewSelect().Model(c).
		Where("ch.family_id = ?", familyID).
		Where("ch.user_id = ?", userID).
		Where("ch.id = ?", id).
		Scan(ctx)
	return c, dbErr("get chat", err)
}

// CreateChat inserts a chat and, when first is not empty, its first user
// message, in one database transaction.
func (s *Store) CreateChat(ctx context.Context, c *Chat, first string) (*Message, error) {
	c.ID = NewID()
	c.CreatedAt = s.now()
	c.UpdatedAt = c.CreatedAt
	var m *Message
	err := s.RunInTx(ctx, func(tx *Store) error {
		if _, err := tx.db.NewInsert().Model(c).Exec(ctx); err != nil {
			return dbErr("create chat", err)
		}
		if first == "" {
			return nil
		}
		m = &Message{FamilyID: c.FamilyID, ChatID: c.ID, Type: UserMessage, Content: first}
		if err := tx.insertMessage(ctx, c.UserID, m); err != nil {
			return err
		}
		c.MessageCount, c.LastMessageAt = 1, &m.CreatedAt
		return nil
	})
	return m, err
}

// RenameChat sets the title of a user's chat.
func (s *Store) RenameChat(ctx context.Context, c *Chat) error {
	c.UpdatedAt = s.now()
	res, err := s.db.NewUpdate().Model(c).
		Column("title", "updated_at").
		Where("ch.family_id = ?", c.FamilyID).
		Where("ch.user_id = ?", c.UserID).
		Where("ch.id = ?", c.ID).
		Exec(ctx)
	return affectedOne(res, err, "rename chat")
}

// SetChatError records (or, with nil, clears) the chat's user-facing error.
func (s *Store) SetChatError(ctx context.Context, familyID, id uuid.UUID, msg *string) error {
	res, err := s.db.NewUpdate().Model((*Chat)(nil)).
		Set("error = ?", msg).
		Set("updated_at = ?", s.now()).
		Where("family_id = ?", familyID).
		Where("id = ?", id).
		Exec(ctx)
	return affectedOne(res, err, "set chat error")
}

// DeleteChat removes a user's chat and its messages.
func (s *Store) DeleteChat(ctx context.Context, familyID, userID, id uuid.UUID) error {
	res, err := s.db.NewDelete().Model((*Chat)(nil)).
		Where("family_id = ?", familyID).
		Where("user_id = ?", userID).
		Where("id = ?", id).
		Exec(ctx)
	return affectedOne(res, err, "delete chat")
}

// ChatRef names a user message of a family's chat, for jobs that visit
// many.
type ChatRef struct {
	FamilyID  uuid.UUID `bun:"family_id"`
	ID        uuid.UUID `bun:"id"`         // the chat
	MessageID uuid.UUID `bun:"message_id"` // the user message
}

// ChatsAwaitingReply lists, of every family, each chat's newest user
// message when it has no answer and the chat shows no error: the work a
// lost queue would have held. Ids only.
func (s *Store) ChatsAwaitingReply(ctx context.Context) ([]ChatRef, error) {
	var refs []ChatRef
	err := s.db.NewSelect().Model((*Message)(nil)).
		ColumnExpr("msg.family_id, msg.chat_id AS id, msg.id AS message_id").
		Join("JOIN chats AS ch ON ch.id = msg.chat_id AND ch.family_id = msg.family_id").
		Where("ch.error IS NULL").
		Where("msg.type = ?", UserMessage).
		Where(unansweredSQL).Where(newestQuestionSQL, UserMessage).
		OrderExpr("msg.family_id, msg.chat_id").
		Scan(ctx, &refs)
	return refs, dbErr("list chats awaiting reply", err)
}
