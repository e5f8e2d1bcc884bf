package jobs

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// TypeChatReply produces the assistant's answer to the newest message.
const TypeChatReply = "chat:reply"

// NoProviderMessage is the chat error shown until an AI provider is set up.
const NoProviderMessage = "The assistant is not available: no AI provider is configured on this server."

// ChatReplyPayload names the chat to answer.
type ChatReplyPayload struct {
	FamilyID uuid.UUID `json:"family_id"`
	ChatID   uuid.UUID `json:"chat_id"`
}

// NewChatReplyTask builds the reply to a chat, unique per chat while queued.
func NewChatReplyTask(familyID, chatID uuid.UUID) (*asynq.Task, error) {
	return NewTask(TypeChatReply, ChatReplyPayload{FamilyID: familyID, ChatID: chatID},
		asynq.TaskID("chat:reply:"+chatID.String()), asynq.Queue(QueueDefault), asynq.MaxRetry(3),
		asynq.Timeout(2*time.Minute))
}

// ChatReply handles TypeChatReply. No AI provider is configured in this
// version, so the reply is the chat's error saying so; setting it again is
// harmless.
func (h *Handlers) ChatReply(ctx context.Context, t *asynq.Task) error {
	var p ChatReplyPayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	msg := NoProviderMessage
	return IgnoreNotFound(h.Store.SetChatError(ctx, p.FamilyID, p.ChatID, &msg))
}
