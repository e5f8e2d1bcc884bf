package screens

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/jobs"
	"coffer/jobs/assistant"
	"coffer/models"
)

// maxMessage is the longest question the chat form takes, as the API.
const maxMessage = 10_000

// pendingRefresh is how often (seconds) a chat page waiting for an answer
// reloads itself, so that it works without JavaScript.
const pendingRefresh = 3

// assistantOffText says why a question is not asked on a server without a
// model, before anyone types one.
const assistantOffText = "The assistant is not set up on this server. An administrator turns it on by setting " +
	"OPENAI_API_KEY, or OPENAI_BASE_URL for a local model (see the README)."

type chatsData struct {
	Chats    []models.Chat
	MayWrite bool
	Question string
	// Admins see the family's token use of today.
	Admin       bool
	TokensToday int
	DailyTokens int
	Off         bool // no model is configured
}

func (h *Handler) listChats(c *fiber.Ctx) error {
	return h.chatsPage(c, fiber.StatusOK, "", "")
}

func (h *Handler) chatsPage(c *fiber.Ctx, status int, question, msg string) error {
	ctx, u := c.UserContext(), web.SessionOf(c).User
	chats, _, err := h.store.Chats(ctx, u.FamilyID, u.ID, models.Page{Number: 1, Size: 100})
	if err != nil {
		return err
	}
	me, err := h.store.User(ctx, u.FamilyID, u.ID)
	if err != nil {
		return err
	}
	d := chatsData{Chats: chats, MayWrite: me.AssistantMayWrite, Question: question,
		Admin: me.Role == models.RoleAdmin || me.Role == models.RoleSuperAdmin, DailyTokens: h.assistantDailyTokens,
		Off: h.assistantOff}
	if d.Admin {
		// The figure is a courtesy: with Redis away the page still shows.
		if d.TokensToday, err = assistant.Usage(ctx, h.redis, u.FamilyID, h.now()); err != nil {
			h.log.Warn("assistant usage", "request_id", httperr.RequestID(c), "error", err)
		}
	}
	return h.pages.Render(c, status, "chats", web.Page{Nav: "chats", Title: "Assistant", Error: msg, Data: d})
}

// question reads the message field of a chat form.
func question(c *fiber.Ctx) (string, string) {
	q := strings.TrimSpace(c.FormValue("message"))
	switch {
	case q == "":
		return "", "Write a question first."
	case utf8.RuneCountInString(q) > maxMessage || strings.ContainsRune(q, 0):
		return q, "A question is at most 10,000 characters."
	}
	return strings.Clone(q), ""
}

// createChat starts a chat with its first question, titled after it.
func (h *Handler) createChat(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	q, problem := question(c)
	if h.assistantOff {
		problem = assistantOffText
	}
	if problem != "" {
		return h.chatsPage(c, fiber.StatusUnprocessableEntity, q, problem)
	}
	title := q
	if utf8.RuneCountInString(title) > 60 {
		title = string([]rune(title)[:60]) + "…"
	}
	chat := &models.Chat{FamilyID: u.FamilyID, UserID: u.ID, Title: title}
	m, err := h.store.CreateChat(c.UserContext(), chat, q)
	if err != nil {
		return err
	}
	h.askAssistant(c, chat.ID, m.ID)
	return h.site.Redirect(c, "/chats/"+chat.ID.String(), "")
}

type chatData struct {
	Chat     *models.Chat
	Messages []models.Message
	Pending  bool
	Question string
	// Proposals are the changes each answer proposes, by its id.
	Proposals map[uuid.UUID][]proposalView
}

// proposalView is a proposal as the chat page shows it.
type proposalView struct {
	*models.Proposal
	Changes []assistant.Change
}

func (h *Handler) showChat(c *fiber.Ctx) error {
	return h.chatPage(c, fiber.StatusOK, "", "")
}

func (h *Handler) chatPage(c *fiber.Ctx, status int, q, msg string) error {
	ctx, u := c.UserContext(), web.SessionOf(c).User
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	chat, err := h.store.Chat(ctx, u.FamilyID, u.ID, id)
	if err != nil {
		return err
	}
	msgs, _, err := h.store.Messages(ctx, u.FamilyID, u.ID, id, models.Page{Number: 1, Size: 500})
	if err != nil {
		return err
	}
	pending, err := h.store.ChatPending(ctx, chat)
	if err != nil {
		return err
	}
	proposals, err := h.store.ChatProposals(ctx, u.FamilyID, u.ID, id)
	if err != nil {
		return err
	}
	byMessage := map[uuid.UUID][]proposalView{}
	for i := range proposals {
		v := proposalView{Proposal: &proposals[i]}
		// Written by the reply job; unreadable changes show none.
		_ = json.Unmarshal([]byte(proposals[i].Changes), &v.Changes)
		byMessage[proposals[i].MessageID] = append(byMessage[proposals[i].MessageID], v)
	}
	page := web.Page{Nav: "chats", Title: chat.Title, Error: msg,
		Data: chatData{Chat: chat, Messages: msgs, Pending: pending, Question: q, Proposals: byMessage}}
	if pending {
		page.Refresh = pendingRefresh
	}
	return h.pages.Render(c, status, "chat", page)
}

// streamChat relays the chat's pending answer to the page's script.
func (h *Handler) streamChat(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	chat, err := h.store.Chat(c.UserContext(), u.FamilyID, u.ID, id)
	if err != nil {
		return err
	}
	return web.ChatStream(c, h.store, h.redis, chat)
}

func (h *Handler) createChatMessage(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	q, problem := question(c)
	if h.assistantOff {
		problem = assistantOffText
	}
	if problem != "" {
		return h.chatPage(c, fiber.StatusUnprocessableEntity, q, problem)
	}
	m := &models.Message{FamilyID: u.FamilyID, ChatID: id, Type: models.UserMessage, Content: q}
	if err := h.store.CreateMessage(c.UserContext(), u.ID, m); err != nil {
		return err
	}
	h.askAssistant(c, id, m.ID)
	return h.site.Redirect(c, "/chats/"+id.String(), "")
}

// retryChat asks again for the answer to the chat's last question.
func (h *Handler) retryChat(c *fiber.Ctx) error {
	ctx, u := c.UserContext(), web.SessionOf(c).User
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	q, reply, err := h.store.LastQuestion(ctx, u.FamilyID, u.ID, id)
	if errors.Is(err, models.ErrNotFound) {
		return h.site.Redirect(c, "/chats/"+id.String(), "There is no question to answer.")
	}
	if err != nil {
		return err
	}
	if reply != nil {
		return h.site.Redirect(c, "/chats/"+id.String(), "The last question already has an answer.")
	}
	if err := h.store.SetChatError(ctx, u.FamilyID, id, nil); err != nil {
		return err
	}
	h.askAssistant(c, id, q.ID)
	return h.site.Redirect(c, "/chats/"+id.String(), "Asked again.")
}

func (h *Handler) deleteChat(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	if err := h.store.DeleteChat(c.UserContext(), u.FamilyID, u.ID, id); err != nil {
		return err
	}
	return h.site.Redirect(c, "/chats", "The chat was deleted.")
}

// proposalOf loads the proposal of the path, of the signed-in user's chat.
func (h *Handler) proposalOf(c *fiber.Ctx) (*models.Proposal, error) {
	u := web.SessionOf(c).User
	chatID, err := httperr.PathID(c)
	if err != nil {
		return nil, err
	}
	id, err := httperr.ParamID(c, "pid")
	if err != nil {
		return nil, err
	}
	return h.store.Proposal(c.UserContext(), u.FamilyID, u.ID, chatID, id)
}

// proposalProblem is what the person reads when a confirmation or a
// rejection cannot be had; "" for a failure of the service.
func proposalProblem(err error) string {
	var te *assistant.Error
	switch {
	case errors.Is(err, models.ErrConflict):
		return assistant.DecidedMessage
	case errors.Is(err, assistant.ErrStale):
		return assistant.StaleMessage
	case errors.As(err, &te):
		return "The change cannot be made: " + te.Message
	}
	return ""
}

// confirmProposal applies the change the assistant proposed, as shown.
func (h *Handler) confirmProposal(c *fiber.Ctx) error {
	p, err := h.proposalOf(c)
	if err != nil {
		return err
	}
	u := web.SessionOf(c).User
	back := "/chats/" + p.ChatID.String()
	if _, err := assistant.Confirm(c.UserContext(), h.store, assistant.Caller{FamilyID: u.FamilyID, UserID: u.ID, Role: u.Role}, p); err != nil {
		if msg := proposalProblem(err); msg != "" {
			return h.site.Redirect(c, back, msg)
		}
		return err
	}
	return h.site.Redirect(c, back, "Done: "+p.Summary+".")
}

// rejectProposal closes a proposal without changing anything.
func (h *Handler) rejectProposal(c *fiber.Ctx) error {
	p, err := h.proposalOf(c)
	if err != nil {
		return err
	}
	if err := h.store.DecideProposal(c.UserContext(), p, models.ProposalRejected); err != nil {
		if msg := proposalProblem(err); msg != "" {
			return h.site.Redirect(c, "/chats/"+p.ChatID.String(), msg)
		}
		return err
	}
	return h.site.Redirect(c, "/chats/"+p.ChatID.String(), "Rejected: nothing was changed.")
}

// saveAssistantSettings turns the assistant's write tools on or off for
// the signed-in user.
func (h *Handler) saveAssistantSettings(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	may := c.FormValue("may_write") == "on"
	if err := h.store.SetAssistantMayWrite(c.UserContext(), u.FamilyID, u.ID, may); err != nil {
		return err
	}
	flash := "The assistant may now only read your data."
	if may {
		flash = "The assistant may now propose changes to your data when you ask it to; each waits for your confirmation."
	}
	return h.site.Redirect(c, "/chats", flash)
}

// askAssistant queues the reply to a question. A failure to queue is
// logged: the question stays, shown as waiting, and the queue rebuild or
// a retry asks again.
func (h *Handler) askAssistant(c *fiber.Ctx, chatID, messageID uuid.UUID) {
	task, err := jobs.NewChatReplyTask(web.SessionOf(c).User.FamilyID, chatID, messageID)
	if err == nil {
		_, err = h.queue.EnqueueContext(c.UserContext(), task)
	}
	if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
		h.log.Warn("enqueue chat reply", "request_id", httperr.RequestID(c), "chat_id", chatID, "error", err)
	}
}
