package apitest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/assistant"
	"coffer/jobs/assistant/assistanttest"
)

// answerer runs chat replies as the worker would, against a fake model.
type answerer struct {
	h    *assistant.Handlers
	Fake *assistanttest.Server
}

func NewAnswerer(t *testing.T, e *Env, script func(int, *assistanttest.Request) assistanttest.Reply) *answerer {
	fake := assistanttest.New(t, script)
	return &answerer{Fake: fake, h: &assistant.Handlers{Store: e.Store, Redis: e.RDB, Log: e.Logger(),
		Options: assistant.Options{BaseURL: fake.URL, Model: "m", MaxToolRounds: 8, Timeout: time.Minute,
			RetryWait: time.Second}}}
}

func (a *answerer) Answer(t *testing.T, familyID uuid.UUID, chatID, messageID string) {
	t.Helper()
	task, err := jobs.NewChatReplyTask(familyID, uuid.MustParse(chatID), uuid.MustParse(messageID))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.h.ChatReply(context.Background(), asynq.NewTask(task.Type(), task.Payload())); err != nil {
		t.Fatal(err)
	}
}
