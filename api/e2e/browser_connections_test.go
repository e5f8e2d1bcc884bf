package e2e_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hibiken/asynq"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/worker"
)

// TestBrowserConnections connects a fake Bridge on the settings screen in
// Chromium while a real worker claims and syncs; then it opens a sync's
// account steps, syncs again and disconnects, deleting the imported rows.
func TestBrowserConnections(t *testing.T) {
	e, base := apitest.ServeEnv(t, func(o *api.Options) { o.SimpleFINAllowHTTP = true })
	fake := bridgetest.New(t)
	data := bridgetest.Generate(11, 2, 40, 20, time.Now())
	fake.SetDataset(data)
	runWorker(t, e)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")

	c := apitest.NewChrome(t)
	c.SignIn(base, e.Alpha.User.Email)
	c.Run("paste a setup token",
		chromedp.Navigate(base+"/settings/connections"),
		chromedp.WaitVisible(chromedp.ID("setup_token")),
		chromedp.SetValue(chromedp.ID("setup_token"), fake.Token("browser")),
		chromedp.SendKeys(chromedp.ID("name"), "Family bank"),
		chromedp.Submit(chromedp.ID("setup_token")),
		chromedp.WaitVisible(chromedp.CSS(`.card h2 .status`)),
	)
	reloadUntil(c, base+"/settings/connections", `(document.querySelector("tbody.sync td:nth-child(3)")||{}).textContent||""`, "Done")
	if got := c.Text(`.card h2 .status`); got != "Active" {
		t.Fatalf("status %q", got)
	}
	c.Run("open the first sync's account steps",
		chromedp.Click(chromedp.CSS(`tbody.sync details summary`)),
		chromedp.WaitVisible(chromedp.CSS(`tr.step`)),
	)
	steps, err := chromedp.Run(c.Ctx, chromedp.Evaluate[string](
		`[...document.querySelectorAll("tbody.sync:first-of-type tr.step")].map(r => r.cells[0].textContent + ":" + r.cells[1].textContent).join(",")`))
	if err != nil {
		c.Fail("read the steps", err)
	}
	if steps != "Account 0:Done,Account 1:Done" && steps != "Account 1:Done,Account 0:Done" {
		t.Fatalf("account steps: %q", steps)
	}
	if n := importedRows(t, e); n != data.Count() {
		t.Fatalf("%d rows imported, want %d", n, data.Count())
	}

	submitAndWait(c, "sync now", `form[action$="/sync"] button`)
	reloadUntil(c, base+"/settings/connections",
		`[...document.querySelectorAll("tbody.sync")].map(b => b.rows[0].cells[2].textContent.split(":")[0]).join(",")`, "Done,Done")
	if n := importedRows(t, e); n != data.Count() {
		t.Fatalf("%d rows after a second sync, want %d", n, data.Count())
	}
	html, err := chromedp.Run(c.Ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if err != nil || strings.Contains(html, "s3cret") {
		t.Fatalf("a credential reached the page (%v)", err)
	}

	c.Run("tick delete", chromedp.Click(chromedp.CSS(`form[action$="/disconnect"] input[name=delete_transactions]`)))
	submitAndWait(c, "disconnect and delete the imported rows", `form[action$="/disconnect"] button`)
	if got := c.Text(`.card h2 .status`); got != "Disconnected" {
		t.Fatalf("after disconnect: %q", got)
	}
	deadline := time.Now().Add(30 * time.Second)
	for importedRows(t, e) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d imported rows left after the purge", importedRows(t, e))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runWorker runs a real asynq worker beside the test app, on its database
// and Redis, talking to fake Bridges on loopback.
func runWorker(t *testing.T, e *apitest.Env) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(apitest.LogWriter{T: t}, nil))
	queue := asynq.NewClientFromRedisClient(e.RDB)
	h := &simplefin.Handlers{Store: e.Store, Queue: queue, Log: log, Redis: e.RDB,
		Bridge:  bridge.NewClient(bridge.Options{AllowHTTP: true, AllowPrivateHosts: true, RetryInitial: time.Millisecond}),
		Options: simplefin.Options{RetryBase: 10 * time.Millisecond}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- worker.Run(ctx, worker.Options{Redis: e.Redis, Handlers: &jobs.Handlers{Store: e.Store, Queue: queue, Log: log}, SimpleFIN: h,
			Logger: log, Concurrency: 4, BalanceSweepCron: "@every 1h"})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

// submitAndWait submits the form of sel and waits for the page it leads
// to, so that the next step cannot cut the request short.
func submitAndWait(c *apitest.Chrome, what, sel string) {
	c.T.Helper()
	c.Run(what, chromedp.Evaluate[chromedp.Void](`document.body.dataset.before = "1"`), chromedp.Submit(chromedp.CSS(sel)))
	c.WaitFor(`document.readyState === "complete" && document.body && !document.body.dataset.before ? "loaded" : ""`, "loaded")
}

// reloadUntil reloads url until expr, evaluated in the page, yields want:
// the page shows what the worker did only when it is loaded again.
func reloadUntil(c *apitest.Chrome, url, expr, want string) {
	c.T.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c.Run("load "+url, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS(`header form`)))
		got, err := chromedp.Run(c.Ctx, chromedp.Evaluate[string](expr))
		if err == nil && got == want {
			return
		}
		if time.Now().After(deadline) {
			c.Fail("waiting for "+want+", last saw "+got, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func importedRows(t *testing.T, e *apitest.Env) int {
	t.Helper()
	n, err := e.Store.DB().NewSelect().Table("transactions").Where("family_id = ?", e.Alpha.Family.ID).
		Where("source = ?", models.SourceSimpleFIN).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}
