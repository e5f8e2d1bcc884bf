package rest

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/valyala/bytebufferpool"

	"coffer/api/httperr"
	"coffer/jobs"
	"coffer/models"
)

const maxMessage = 10_000

type chatDetailJSON struct {
	chatJSON
	// Pending is true while the assistant is answering a message.
	Pending bool `json:"pending"`
	// Usage is the tokens of all the chat's answers.
	Usage      usageJSON     `json:"usage"`
	Messages   []messageJSON `json:"messages"`
	Pagination Pagination    `json:"pagination"`
}

// usageJSON is a token count as the OpenAI API reports one.
type usageJSON struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usage(prompt, completion int) usageJSON {
	return usageJSON{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

func (h *Handler) listChats(c *fiber.Ctx) error {
	p, err := parsePage(c)
	if err != nil {
		return err
	}
	k := KeyOf(c)
	chats, total, err := h.store.Chats(c.UserContext(), k.FamilyID, k.UserID, p)
	if err != nil {
		return err
	}
	// The page is written in a pooled buffer (fasthttp's own pool, where
	// its bodies come from): c.Send copies it, and a new one per page
	// was a third of the bytes this page allocated.
	buf := bytebufferpool.Get()
	defer bytebufferpool.Put(buf)
	b := append(buf.B[:0], `{"chats":[`...)
	for i := range chats {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendChat(b, &chats[i])
	}
	b = appendPagination(append(b, `],"pagination":`...), pagination(p, total))
	buf.B = append(b, '}')
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(buf.B)
}

func (h *Handler) showChat(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	p, err := parsePage(c)
	if err != nil {
		return err
	}
	return h.respondChat(c, fiber.StatusOK, id, p)
}

func (h *Handler) respondChat(c *fiber.Ctx, status int, id uuid.UUID, p models.Page) error {
	ctx, k := c.UserContext(), KeyOf(c)
	chat, err := h.store.Chat(ctx, k.FamilyID, k.UserID, id)
	if err != nil {
		return err
	}
	msgs, total, err := h.store.Messages(ctx, k.FamilyID, k.UserID, id, p)
	if err != nil {
		return err
	}
	pending, err := h.store.ChatPending(ctx, chat)
	if err != nil {
		return err
	}
	prompt, completion, err := h.store.ChatTokens(ctx, k.FamilyID, id)
	if err != nil {
		return err
	}
	proposals, err := h.store.ChatProposals(ctx, k.FamilyID, k.UserID, id)
	if err != nil {
		return err
	}
	byMessage := proposalsByMessage(proposals)
	out := renderAll(msgs, renderMessage)
	for i := range out {
		if out[i].Type == models.AssistantMessage {
			ps := byMessage[msgs[i].ID]
			if ps == nil {
				ps = []proposalJSON{}
			}
			out[i].Proposals = &ps
		}
	}
	return c.Status(status).JSON(chatDetailJSON{chatJSON: renderChat(chat), Pending: pending, Usage: usage(prompt, completion),
		Messages: out, Pagination: pagination(p, total)})
}

func (h *Handler) createChat(c *fiber.Ctx) error {
	f, err := decodeObject(c, "")
	if err != nil {
		return err
	}
	title := f.required("title", maxName)
	first, _ := f.str("message", maxMessage, true)
	if err := f.err(); err != nil {
		return err
	}
	k := KeyOf(c)
	chat := &models.Chat{FamilyID: k.FamilyID, UserID: k.UserID, Title: title}
	msg, err := h.store.CreateChat(c.UserContext(), chat, first)
	if err != nil {
		return err
	}
	if msg != nil {
		h.askAssistant(c, chat.ID, msg.ID)
	}
	return h.respondChat(c, fiber.StatusCreated, chat.ID, models.Page{Number: 1, Size: defaultPerPage})
}

func (h *Handler) updateChat(c *fiber.Ctx) error {
	id, f, err := idAndObject(c, "")
	if err != nil {
		return err
	}
	title := f.required("title", maxName)
	if err := f.err(); err != nil {
		return err
	}
	k := KeyOf(c)
	if err := h.store.RenameChat(c.UserContext(), &models.Chat{ID: id, FamilyID: k.FamilyID, UserID: k.UserID, Title: title}); err != nil {
		return err
	}
	return h.respondChat(c, fiber.StatusOK, id, models.Page{Number: 1, Size: defaultPerPage})
}

func (h *Handler) deleteChat(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	k := KeyOf(c)
	if err := h.store.DeleteChat(c.UserContext(), k.FamilyID, k.UserID, id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (h *Handler) createMessage(c *fiber.Ctx) error {
	id, f, err := idAndObject(c, "")
	if err != nil {
		return err
	}
	content := f.required("content", maxMessage)
	if err := f.err(); err != nil {
		return err
	}
	k := KeyOf(c)
	m := &models.Message{FamilyID: k.FamilyID, ChatID: id, Type: models.UserMessage, Content: content}
	if err := h.store.CreateMessage(c.UserContext(), k.UserID, m); err != nil {
		return err
	}
	h.askAssistant(c, id, m.ID)
	return c.Status(fiber.StatusCreated).JSON(renderMessage(m))
}

// askAssistant queues the assistant's reply to a user message. A reply
// already queued for it is enough.
func (h *Handler) askAssistant(c *fiber.Ctx, chatID, messageID uuid.UUID) {
	task, err := jobs.NewChatReplyTask(KeyOf(c).FamilyID, chatID, messageID)
	if err == nil {
		_, err = h.queue.EnqueueContext(c.UserContext(), task)
	}
	if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
		h.log.Warn("enqueue chat reply", "request_id", httperr.RequestID(c), "chat_id", chatID, "error", err)
	}
}

type messageJSON struct {
	ID      string  `json:"id"`
	ChatID  string  `json:"chat_id"`
	Type    string  `json:"type"`
	Role    string  `json:"role"`
	Content string  `json:"content"`
	Model   *string `json:"model"`
	// Assistant messages only: as the reference, a stored answer is
	// complete; the tools it called and the tokens it used.
	Status    string          `json:"status,omitempty"`
	ToolCalls *[]toolCallJSON `json:"tool_calls,omitempty"`
	Usage     *usageJSON      `json:"usage,omitempty"`
	// Proposals are the changes the answer proposes (the write tools'),
	// each waiting for the person to confirm or reject it.
	Proposals *[]proposalJSON `json:"proposals,omitempty"`
	CreatedAt string          `json:"created_at"`
	UpdatedAt string          `json:"updated_at"`
}

// toolCallJSON is a tool the assistant called for an answer, named as the
// reference names it.
type toolCallJSON struct {
	FunctionName      string          `json:"function_name"`
	FunctionArguments json.RawMessage `json:"function_arguments"`
}

func renderMessage(m *models.Message) messageJSON {
	out := messageJSON{
		ID: m.ID.String(), ChatID: m.ChatID.String(), Type: m.Type, Role: m.Role(), Content: m.Content,
		Model: m.Model, CreatedAt: timestamp(m.CreatedAt), UpdatedAt: timestamp(m.UpdatedAt),
	}
	if m.Type != models.AssistantMessage {
		return out
	}
	u := usage(m.PromptTokens, m.CompletionTokens)
	calls := []toolCallJSON{}
	if m.ToolCalls != nil {
		var stored []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		// Written by the reply job; a row it cannot read shows no calls
		// rather than failing the whole chat.
		_ = json.Unmarshal([]byte(*m.ToolCalls), &stored)
		for _, c := range stored {
			args := c.Arguments
			if !json.Valid(args) {
				args = json.RawMessage("{}")
			}
			calls = append(calls, toolCallJSON{FunctionName: c.Name, FunctionArguments: args})
		}
	}
	out.Status, out.ToolCalls, out.Usage = "complete", &calls, &u
	return out
}

type chatJSON struct {
	ID            string  `json:"id"`
	Title         string  `json:"title"`
	LastMessageAt *string `json:"last_message_at"`
	MessageCount  int     `json:"message_count"`
	Error         *string `json:"error"`
	CreatedAt     string  `json:"created_at"`
	UpdatedAt     string  `json:"updated_at"`
}

// appendChat appends renderChat(ch) as encoding/json writes it.
func appendChat(b []byte, ch *models.Chat) []byte {
	b = appendUUID(append(b, `{"id":`...), ch.ID)
	b = appendJSONString(append(b, `,"title":`...), ch.Title)
	b = appendOptTimestamp(append(b, `,"last_message_at":`...), ch.LastMessageAt)
	b = strconv.AppendInt(append(b, `,"message_count":`...), int64(ch.MessageCount), 10)
	b = appendOptString(append(b, `,"error":`...), ch.Error)
	b = appendTimestamp(append(b, `,"created_at":"`...), ch.CreatedAt)
	b = appendTimestamp(append(b, `","updated_at":"`...), ch.UpdatedAt)
	return append(b, `"}`...)
}

func renderChat(c *models.Chat) chatJSON {
	return chatJSON{
		ID: c.ID.String(), Title: c.Title, LastMessageAt: optTimestamp(c.LastMessageAt), MessageCount: c.MessageCount,
		Error: c.Error, CreatedAt: timestamp(c.CreatedAt), UpdatedAt: timestamp(c.UpdatedAt),
	}
}
