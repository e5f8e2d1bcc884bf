package jobs

import (
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// TypeChatReply produces the assistant's answer to one user message. Its
// handler lives in jobs/assistant, with the provider and the tools.
const TypeChatReply = "chat:reply"

// ChatReplyPayload names the user message to answer.
type ChatReplyPayload struct {
	FamilyID  uuid.UUID `json:"family_id"`
	ChatID    uuid.UUID `json:"chat_id"`
	MessageID uuid.UUID `json:"message_id"`
}

// ChatReplyTimeout bounds one run of the reply task; the assistant's own
// ASSISTANT_TIMEOUT is shorter, so the job ends with a chat error first.
const ChatReplyTimeout = 15 * time.Minute

// NewChatReplyTask builds the reply to one user message. The task id is
// the message's, so two messages posted together each get their reply and
// a message is never queued twice at once.
func NewChatReplyTask(familyID, chatID, messageID uuid.UUID) (*asynq.Task, error) {
	return NewTask(TypeChatReply, ChatReplyPayload{FamilyID: familyID, ChatID: chatID, MessageID: messageID},
		asynq.TaskID("chat:reply:"+messageID.String()), asynq.Queue(QueueDefault), asynq.MaxRetry(3),
		asynq.Timeout(ChatReplyTimeout))
}
