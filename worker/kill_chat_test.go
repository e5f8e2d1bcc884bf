package worker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"coffer/jobs"
	"coffer/jobs/assistant"
	"coffer/jobs/assistant/assistanttest"
	"coffer/models"
	"coffer/models/modelstest"
)

// TestChatReplySurvivesWorkerKill asks for a reply that creates a tag
// through a tool, and kills the worker after the tool call ran, after the
// model answered and after the reply committed. A fresh worker finishes:
// the question has exactly one answer, the chat counts two messages and
// shows no error, and the tag is proposed once (write tools propose; the
// person confirms), and confirming it makes exactly one tag.
func TestChatReplySurvivesWorkerKill(t *testing.T) {
	for _, point := range []string{assistant.HookToolCalled, assistant.HookAnswered, assistant.HookSaved} {
		t.Run(point, func(t *testing.T) {
			r := newKillRig(t)
			ctx := context.Background()
			// The model asks for the tag, then answers from the tool's result.
			fake := assistanttest.New(t, func(n int, req *assistanttest.Request) assistanttest.Reply {
				if req.Last().Role == "tool" {
					return assistanttest.Reply{Content: "Done: " + req.Last().Text()}
				}
				return assistanttest.Reply{Calls: []assistanttest.Call{{Name: "create_tag", Arguments: `{"name":"Coffee"}`}}}
			})
			f := modelstest.NewFamily(t, r.store, "chat-kill")
			if err := r.store.SetAssistantMayWrite(ctx, f.Family.ID, f.User.ID, true); err != nil {
				t.Fatal(err)
			}
			chat := &models.Chat{FamilyID: f.Family.ID, UserID: f.User.ID, Title: "t"}
			q, err := r.store.CreateChat(ctx, chat, "make me a Coffee tag")
			if err != nil {
				t.Fatal(err)
			}
			assist := func(hook func(context.Context, string)) *assistant.Handlers {
				return &assistant.Handlers{Store: r.store, Redis: r.rdb, Log: r.log, Hook: hook, Options: assistant.Options{
					BaseURL: fake.URL, Model: "local", MaxToolRounds: 4, Timeout: time.Minute}}
			}

			task, err := jobs.NewChatReplyTask(chat.FamilyID, chat.ID, q.ID)
			if err != nil {
				t.Fatal(err)
			}
			k := newKiller(point, 1)
			var id string
			r.kill(t, r.options(r.handlers(nil, nil), assist(k.hook)), k, func() { id = r.enqueue(t, task) })
			runWorker(t, r.options(r.handlers(nil, nil), assist(nil)))
			r.waitGone(t, jobs.QueueDefault, id)

			ms, _, err := r.store.Messages(ctx, chat.FamilyID, chat.UserID, chat.ID, models.Page{Number: 1, Size: 10})
			if err != nil {
				t.Fatal(err)
			}
			var answers []string
			for _, m := range ms {
				if m.Type == models.AssistantMessage {
					if m.ReplyTo == nil || *m.ReplyTo != q.ID {
						t.Errorf("an answer to %v", m.ReplyTo)
					}
					answers = append(answers, m.Content)
				}
			}
			if len(ms) != 2 || len(answers) != 1 || !strings.HasPrefix(answers[0], "Done: ") {
				t.Fatalf("%d messages, answers %q", len(ms), answers)
			}
			got, err := r.store.Chat(ctx, chat.FamilyID, chat.UserID, chat.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.MessageCount != 2 || got.Error != nil {
				t.Fatalf("chat counts %d messages, error %v", got.MessageCount, models.Str(got.Error))
			}
			coffee := func() int {
				t.Helper()
				n, err := r.store.DB().NewSelect().Model((*models.Tag)(nil)).Where("family_id = ?", f.Family.ID).
					Where("name = 'Coffee'").Count(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return int(n)
			}
			ps, err := r.store.ChatProposals(ctx, chat.FamilyID, chat.UserID, chat.ID)
			if err != nil || len(ps) != 1 || ps[0].Tool != "create_tag" || coffee() != 0 {
				t.Fatalf("proposals %+v (%v), %d Coffee tags before confirming", ps, err, coffee())
			}
			if _, err := assistant.Confirm(ctx, r.store, assistant.Caller{FamilyID: chat.FamilyID, UserID: chat.UserID}, &ps[0]); err != nil {
				t.Fatal(err)
			}
			if n := coffee(); n != 1 {
				t.Fatalf("%d Coffee tags after confirming", n)
			}
		})
	}
}
