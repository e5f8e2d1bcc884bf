package assistant

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// StreamChannel is the Redis channel on which a chat's reply is
// published while it is made; any web process can relay it.
func StreamChannel(chatID uuid.UUID) string { return "assistant:chat:" + chatID.String() }

// Event is one message on a chat's stream channel.
type Event struct {
	// Type is "delta" (Text is more of the answer), "restart" (a retry
	// begins: drop the text so far), "tool" (Text names a tool being
	// called), "done" (MessageID is the stored answer) or "error" (Text
	// is the chat's error).
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	MessageID string `json:"message_id,omitempty"`
}

// publisher sends a reply's events; losing one only costs a live view
// (the stored message is the truth), so failures are logged and dropped.
type publisher struct {
	ctx     context.Context
	rdb     redis.UniversalClient
	channel string
	log     *slog.Logger
}

func (p *publisher) send(e Event) {
	if p.rdb == nil {
		return
	}
	b, _ := json.Marshal(e)
	if err := p.rdb.Publish(p.ctx, p.channel, b).Err(); err != nil {
		p.log.Debug("assistant: publish", "error", err)
	}
}

func (p *publisher) delta(text string) { p.send(Event{Type: "delta", Text: text}) }
func (p *publisher) restart()          { p.send(Event{Type: "restart"}) }
