// Package assistant answers chat messages with a language model that reads
// the family's ledger through tools. It owns the provider client (any
// OpenAI-compatible endpoint, through the official SDK), the one tool
// table (shared with the MCP server), the chat:reply handler, the daily
// token budget and the stream of a reply's tokens through Redis. It never
// shows a person the provider's own text, the key or a URL.
package assistant

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"coffer/jobs"
	"coffer/models"
)

// Options are the assistant's settings.
type Options struct {
	APIKey  string `env:"OPENAI_API_KEY" secret:"true"`
	BaseURL string `env:"OPENAI_BASE_URL"` // empty: the SDK's (api.openai.com)
	Model   string `env:"OPENAI_MODEL" default:"gpt-4.1-mini"`
	// MaxToolRounds is how many model calls of one reply may ask for tools;
	// past it the reply stops with an error.
	MaxToolRounds int           `env:"ASSISTANT_MAX_TOOL_ROUNDS" default:"8" min:"1" max:"50"`
	Timeout       time.Duration `env:"ASSISTANT_TIMEOUT" default:"2m"`
	// DailyTokens is each family's budget of tokens per UTC day; 0: none.
	DailyTokens int `env:"ASSISTANT_DAILY_TOKENS" default:"200000" min:"0" max:"2000000000"`
	// RetryWait bounds the waits between retries of a transient provider
	// error (at most 3 attempts); zero: 30 seconds. Tests shorten it.
	RetryWait time.Duration
}

// Enabled reports whether a provider is configured: a key, or a base URL
// (local models need no key).
func (o Options) Enabled() bool { return o.APIKey != "" || o.BaseURL != "" }

// Handlers runs the chat:reply task.
type Handlers struct {
	Store   *models.Store
	Redis   redis.UniversalClient // the token budget and the reply streams
	Log     *slog.Logger
	Options Options
	Now     func() time.Time // nil: time.Now
	// Hook, when set, is called with the task's context at the named
	// points of a reply (tests stop a worker there).
	Hook func(ctx context.Context, point string)
}

// Points where Handlers.Hook is called.
const (
	HookToolCalled = "chat:tool_called" // after each tool call of a reply ran
	HookAnswered   = "chat:answered"    // after the model answered, before the reply is saved
	HookSaved      = "chat:saved"       // after the reply committed, before the done event
)

func (h *Handlers) hook(ctx context.Context, point string) {
	if h.Hook != nil {
		h.Hook(ctx, point)
	}
}

// Table lists the assistant's task type with its handler.
func (h *Handlers) Table() jobs.Table {
	if h == nil { // a worker without these handlers leaves their tasks queued
		return nil
	}
	return jobs.Table{jobs.TypeChatReply: {Handler: h.ChatReply}}
}

func (h *Handlers) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Chat errors: what a person reads when a reply fails. None names the
// provider, the key, a URL or the provider's own words.
const (
	NoProviderMessage = "The assistant is not available: no AI provider is configured on this server."
	FailedMessage     = "The assistant could not answer just now. Please try again in a moment."
	BusyMessage       = "The AI provider is busy right now. Please try again in a minute."
	TimeoutMessage    = "The assistant took too long to answer. Please try again, perhaps with a simpler question."
	RoundsMessage     = "The assistant needed too many steps to answer. Please ask a simpler or more specific question."
	EmptyMessage      = "The assistant gave an empty answer. Please try again."
	RefusedMessage    = "The assistant declined to answer this question."
	BudgetMessage     = "Your household has used today's assistant allowance. It resets at midnight UTC."
	RejectedMessage   = "The AI provider refused the request. An administrator should check the assistant's settings."
)
