package e2e_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hibiken/asynq"

	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/jobs/assistant"
	"coffer/jobs/assistant/assistanttest"
	"coffer/models"
	"coffer/worker"
)

// TestBrowserChat asks "how much is in Checking?" on /chats in Chromium,
// with plain forms and no script: the page shows the question pending and
// reloads itself (meta refresh) until the real worker, on Redis, has the
// fake model's answer, which quotes the database's figure through a tool.
func TestBrowserChat(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	ctx := context.Background()
	f := e.Alpha
	if _, _, err := e.Store.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
		Date: "2026-11-01", Amount: -31_415_900, Currency: "USD", Name: "Salary"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.RecalculateBalance(ctx, f.Family.ID, f.Account.ID); err != nil {
		t.Fatal(err)
	}
	fake := assistanttest.New(t, func(n int, r *assistanttest.Request) assistanttest.Reply {
		if r.Last().Role != "tool" {
			return assistanttest.Reply{Calls: []assistanttest.Call{{Name: "get_accounts", Arguments: "{}"}}}
		}
		var res struct {
			Accounts []struct{ Name, Balance string }
		}
		_ = json.Unmarshal([]byte(r.Last().Text()), &res)
		return assistanttest.Reply{Content: "Checking holds " + res.Accounts[0].Balance + "."}
	})
	log := slog.New(slog.NewTextHandler(apitest.LogWriter{T: t}, nil))
	queue := asynq.NewClientFromRedisClient(e.RDB)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- worker.Run(wctx, worker.Options{Redis: e.Redis, Logger: log, Concurrency: 2, BalanceSweepCron: "@every 1h",
			Handlers: &jobs.Handlers{Store: e.Store, Queue: queue, Log: log},
			Assistant: &assistant.Handlers{Store: e.Store, Redis: e.RDB, Log: log, Options: assistant.Options{
				BaseURL: fake.URL, Model: "local", MaxToolRounds: 4, Timeout: time.Minute}}})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})

	apitest.SetPassword(t, e, f.User, "correct horse battery")
	c := apitest.NewChrome(t)
	c.SignIn(base, f.User.Email)
	c.Run("ask",
		chromedp.EmulateViewport(390, 844), // a phone
		chromedp.Navigate(base+"/chats"),
		chromedp.WaitVisible(chromedp.ID("message")),
		chromedp.SendKeys(chromedp.ID("message"), "how much is in Checking?"),
		chromedp.Submit(chromedp.ID("message")),
		chromedp.WaitVisible(chromedp.CSS(`ol.chat`)),
	)
	// The answer arrives by the page's own refresh, not by the test's.
	c.WaitFor(`document.querySelector("li.message.assistant .content")?.textContent ?? ""`, "Checking holds $3,141.59.")
	if got := c.Text(`li.message.user .content`); got != "how much is in Checking?" {
		t.Fatalf("question shown as %q", got)
	}
}
