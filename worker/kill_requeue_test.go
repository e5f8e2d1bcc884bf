package worker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/jobs"
	"coffer/jobs/assistant"
	"coffer/jobs/assistant/assistanttest"
	"coffer/models"
	"coffer/models/modelstest"
)

// TestRequeueSurvivesWorkerKill rebuilds a lost queue holding three chats
// waiting for the assistant and two empty families, and kills the worker
// after the rebuild queued the sweep and the first chat. A fresh worker
// finishes: each chat has exactly one answer, both families are purged.
func TestRequeueSurvivesWorkerKill(t *testing.T) {
	r := newKillRig(t)
	ctx := context.Background()
	fake := assistanttest.New(t, func(n int, req *assistanttest.Request) assistanttest.Reply {
		return assistanttest.Reply{Content: "You asked: " + req.Last().Text()}
	})
	assist := &assistant.Handlers{Store: r.store, Redis: r.rdb, Log: r.log, Options: assistant.Options{
		BaseURL: fake.URL, Model: "local", MaxToolRounds: 4, Timeout: time.Minute}}
	f := modelstest.NewFamily(t, r.store, "requeue-kill")
	super := &models.User{FamilyID: f.Family.ID, Email: "root-" + f.Family.ID.String()[:8] + "@example.com", Role: models.RoleSuperAdmin}
	if err := r.store.CreateUser(ctx, super); err != nil {
		t.Fatal(err)
	}
	chats := map[uuid.UUID]uuid.UUID{} // chat: question
	for i := range 3 {
		c := &models.Chat{FamilyID: f.Family.ID, UserID: f.User.ID, Title: "t"}
		q, err := r.store.CreateChat(ctx, c, fmt.Sprintf("question %d", i))
		if err != nil {
			t.Fatal(err)
		}
		chats[c.ID] = q.ID
	}
	var empty []uuid.UUID
	for i := range 2 {
		e := modelstest.NewFamily(t, r.store, fmt.Sprintf("requeue-empty-%d", i))
		if err := r.store.DeleteUser(ctx, models.AdminChange{ActorID: super.ID, ActorRole: models.RoleSuperAdmin, TargetID: e.User.ID}); err != nil {
			t.Fatal(err)
		}
		empty = append(empty, e.Family.ID)
	}

	k := newKiller(jobs.HookRequeued, 2)
	var id string
	r.kill(t, r.options(r.handlers(nil, k.hook), assist), k, func() { id = r.enqueue(t, jobs.NewRequeueTask()) })
	runWorker(t, r.options(r.handlers(nil, nil), assist))
	r.waitGone(t, jobs.QueueCritical, id)
	for chat, q := range chats {
		r.waitGone(t, jobs.QueueDefault, "chat:reply:"+q.String())
		ms, _, err := r.store.Messages(ctx, f.Family.ID, f.User.ID, chat, models.Page{Number: 1, Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.store.Chat(ctx, f.Family.ID, f.User.ID, chat)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 2 || ms[0].Type == ms[1].Type || got.MessageCount != 2 || got.Error != nil {
			t.Errorf("chat %s: %d messages, count %d, error %v", chat, len(ms), got.MessageCount, models.Str(got.Error))
		}
	}
	for _, fam := range empty {
		r.waitGone(t, jobs.QueueLow, "family:purge:"+fam.String())
		if left := familyRows(t, r.store, fam); len(left) != 0 {
			t.Errorf("left of an empty family: %v", left)
		}
	}
}
