package rest

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/hibiken/asynq"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/jobs"
	"coffer/jobs/assistant"
	"coffer/models"
)

// retryMessage asks the assistant again to answer a chat's last user
// message, when it has no answer (the last attempt failed, or never ran).
func (h *Handler) retryMessage(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	ctx, k := c.UserContext(), KeyOf(c)
	q, reply, err := h.store.LastQuestion(ctx, k.FamilyID, k.UserID, id)
	if errors.Is(err, models.ErrNotFound) {
		if _, err := h.store.Chat(ctx, k.FamilyID, k.UserID, id); err != nil {
			return err
		}
		return httperr.New(fiber.StatusUnprocessableEntity, "validation_failed", "The chat has no message to answer.")
	}
	if err != nil {
		return err
	}
	if reply != nil {
		return httperr.New(fiber.StatusUnprocessableEntity, "validation_failed", "The last message already has an answer.")
	}
	if err := h.store.SetChatError(ctx, k.FamilyID, id, nil); err != nil {
		return err
	}
	task, err := jobs.NewChatReplyTask(k.FamilyID, id, q.ID)
	if err != nil {
		return err
	}
	// Queued already (a reply under way): that one will answer.
	if _, err := h.queue.EnqueueContext(ctx, task); err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
		return httperr.Unavailable("The assistant cannot be reached right now. Please try again later.", err)
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"message": "Retry initiated", "message_id": q.ID.String()})
}

// streamChat relays the reply being made in a chat as server-sent
// events (see web.ChatStream).
func (h *Handler) streamChat(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	k := KeyOf(c)
	chat, err := h.store.Chat(c.UserContext(), k.FamilyID, k.UserID, id)
	if err != nil {
		return err
	}
	return web.ChatStream(c, h.store, h.redis, chat)
}

type assistantSettingsJSON struct {
	MayWrite bool `json:"may_write"`
	// Usage is shown to the family's admins only.
	Usage *assistantUsageJSON `json:"usage,omitempty"`
}

type assistantUsageJSON struct {
	TokensToday int             `json:"tokens_today"`
	DailyTokens int             `json:"daily_tokens"` // 0: no limit
	Chats       []chatUsageJSON `json:"chats"`
}

type chatUsageJSON struct {
	ChatID           string `json:"chat_id"`
	Title            string `json:"title"`
	UserID           string `json:"user_id"`
	Answers          int    `json:"answers"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	TotalTokens      int    `json:"total_tokens"`
}

func (h *Handler) showAssistant(c *fiber.Ctx) error {
	ctx, k := c.UserContext(), KeyOf(c)
	u, err := h.store.User(ctx, k.FamilyID, k.UserID)
	if err != nil {
		return err
	}
	out := assistantSettingsJSON{MayWrite: u.AssistantMayWrite}
	if u.Role == models.RoleAdmin || u.Role == models.RoleSuperAdmin {
		used, err := assistant.Usage(ctx, h.redis, k.FamilyID, h.now())
		if err != nil {
			return httperr.Unavailable("Usage figures are not available right now. Please try again later.", err)
		}
		chats, err := h.store.AssistantUsage(ctx, k.FamilyID, time.Time{})
		if err != nil {
			return err
		}
		out.Usage = &assistantUsageJSON{TokensToday: used, DailyTokens: h.assistantDailyTokens, Chats: []chatUsageJSON{}}
		for _, u := range chats {
			out.Usage.Chats = append(out.Usage.Chats, chatUsageJSON{ChatID: u.ChatID.String(), Title: u.Title,
				UserID: u.UserID.String(), Answers: u.Answers, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
				TotalTokens: u.TotalTokens()})
		}
	}
	return c.JSON(out)
}

func (h *Handler) updateAssistant(c *fiber.Ctx) error {
	f, err := decodeObject(c, "")
	if err != nil {
		return err
	}
	var may bool
	if !f.has("may_write") {
		f.add("may_write is required")
	} else if json.Unmarshal(f.raw["may_write"], &may) != nil {
		f.add("may_write must be true or false")
	}
	if err := f.err(); err != nil {
		return err
	}
	k := KeyOf(c)
	if err := h.store.SetAssistantMayWrite(c.UserContext(), k.FamilyID, k.UserID, may); err != nil {
		return err
	}
	return h.showAssistant(c)
}
