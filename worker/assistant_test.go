package worker_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/assistant"
	"coffer/jobs/assistant/assistanttest"
	"coffer/jobs/simplefin"
	"coffer/models"
	"coffer/models/modelstest"
	"coffer/worker"
)

// TestWorkerRepliesToChats runs chat replies through the real asynq
// server on Redis against the fake model: two messages posted at once to
// one chat each get one answer, and the answer's tokens are published on
// the chat's stream channel as they come.
func TestWorkerRepliesToChats(t *testing.T) {
	store := modelstest.NewStore(t)
	opt, rdb := modelstest.RedisClient(t, redisDB)
	queue := asynq.NewClientFromRedisClient(rdb)
	log := discardLog()
	ctx := context.Background()
	fake := assistanttest.New(t, func(n int, r *assistanttest.Request) assistanttest.Reply {
		return assistanttest.Reply{Content: "You asked: " + r.Last().Text()}
	})
	f := modelstest.NewFamily(t, store, "worker-chat")
	chat := &models.Chat{FamilyID: f.Family.ID, UserID: f.User.ID, Title: "t"}
	q1, err := store.CreateChat(ctx, chat, "first question")
	if err != nil {
		t.Fatal(err)
	}
	q2 := &models.Message{FamilyID: chat.FamilyID, ChatID: chat.ID, Type: models.UserMessage, Content: "second question"}
	if err := store.CreateMessage(ctx, chat.UserID, q2); err != nil {
		t.Fatal(err)
	}
	sub := rdb.Subscribe(ctx, assistant.StreamChannel(chat.ID))
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil { // the subscription is live
		t.Fatal(err)
	}

	for _, q := range []*models.Message{q1, q2} {
		task, err := jobs.NewChatReplyTask(chat.FamilyID, chat.ID, q.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := queue.Enqueue(task); err != nil {
			t.Fatal(err)
		}
	}
	// Every table is set: the worker shares the usual queues of this Redis
	// database with the package's other tests, and may meet their leftovers.
	runWorker(t, worker.Options{Redis: opt, Logger: log, Concurrency: 2, BalanceSweepCron: "@every 1h",
		Handlers: &jobs.Handlers{Store: store, Queue: queue, Log: log},
		SimpleFIN: &simplefin.Handlers{Store: store, Queue: queue, Log: log, Redis: rdb, Bridge: fakeBridgeClient(),
			Options: simplefin.Options{RetryBase: 10 * time.Millisecond}},
		Assistant: &assistant.Handlers{Store: store, Redis: rdb, Log: log, Options: assistant.Options{
			BaseURL: fake.URL, Model: "local", MaxToolRounds: 8, Timeout: time.Minute, DailyTokens: 0}}})

	var texts = map[string]*strings.Builder{}
	done := 0
	deadline := time.After(30 * time.Second)
	for done < 2 {
		select {
		case m := <-sub.Channel():
			var e assistant.Event
			if err := json.Unmarshal([]byte(m.Payload), &e); err != nil {
				t.Fatal(err)
			}
			switch e.Type {
			case "delta":
				if texts["all"] == nil {
					texts["all"] = &strings.Builder{}
				}
				texts["all"].WriteString(e.Text)
			case "done":
				done++
			case "error":
				t.Fatalf("error event: %s", e.Text)
			}
		case <-deadline:
			t.Fatalf("timed out waiting for two done events; saw %d", done)
		}
	}
	ms, _, err := store.Messages(ctx, chat.FamilyID, chat.UserID, chat.ID, models.Page{Number: 1, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string]string{}
	for _, m := range ms {
		if m.Type == models.AssistantMessage {
			answers[m.ReplyTo.String()] = m.Content
		}
	}
	if len(ms) != 4 || answers[q1.ID.String()] != "You asked: first question" || answers[q2.ID.String()] != "You asked: second question" {
		t.Fatalf("%d messages, answers %v", len(ms), answers)
	}
	// Both answers were streamed (interleaved, when the two ran at once).
	if got := texts["all"].String(); len(got) != len("You asked: first question")+len("You asked: second question") {
		t.Fatalf("streamed text %q", got)
	}
}
