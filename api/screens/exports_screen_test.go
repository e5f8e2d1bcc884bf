package screens_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hibiken/asynq"

	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/models"
)

// An admin exports the household from its settings screen: the button
// queues an export, the list shows it waiting, then (the job run) a
// download link to the reference's ZIP. Another household's admin gets a
// 404 for that file; a member cannot start one.
func TestExportScreen(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := context.Background()

	if r := b.Get("/settings/family"); r.Status != 200 || !strings.Contains(string(r.Body), "Export all data") ||
		strings.Contains(string(r.Body), "Past exports") {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	if r := b.Post("/settings/family/exports", url.Values{}); r.Status != 303 || r.Header.Get("Location") != "/settings/family#exports" {
		t.Fatalf("export: %d %v", r.Status, r.Header)
	}
	es, _, err := e.Store.FamilyExports(ctx, e.Alpha.Family.ID, models.Page{Number: 1, Size: 5})
	if err != nil || len(es) != 1 || es[0].Status != models.ExportPending {
		t.Fatalf("exports: %+v %v", es, err)
	}
	page := string(b.Get("/settings/family").Body)
	if !strings.Contains(page, "Past exports") || !strings.Contains(page, "Waiting") || strings.Contains(page, "/download") {
		t.Fatalf("pending export: %s", page)
	}
	download := "/settings/family/exports/" + es[0].ID.String() + "/download"
	if r := b.Get(download); r.Status != 303 {
		t.Fatalf("download before it is ready: %d", r.Status)
	}

	task, err := jobs.NewFamilyExportTask(e.Alpha.Family.ID, es[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&jobs.Handlers{Store: e.Store, Log: e.Logger()}).FamilyExport(ctx, asynq.NewTask(task.Type(), task.Payload())); err != nil {
		t.Fatal(err)
	}
	page = string(b.Get("/settings/family").Body)
	if !strings.Contains(page, `href="`+download+`"`) || !strings.Contains(page, "Ready") {
		t.Fatalf("completed export: %s", page)
	}
	r := b.Get(download)
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("download: %d %v", r.Status, r.Header)
	}
	if _, err := zip.NewReader(bytes.NewReader(r.Body), int64(len(r.Body))); err != nil {
		t.Fatalf("not a ZIP: %v", err)
	}

	// Beta's admin, signed in: not Alpha's file.
	apitest.SetPassword(t, e, e.Beta.User, "correct horse battery")
	other := e.Browser(t)
	if r := other.Login(e.Beta.User.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("beta login: %d", r.Status)
	}
	if r := other.Get(download); r.Status != 404 {
		t.Fatalf("beta downloads alpha's export: %d", r.Status)
	}
	if page := string(other.Get("/settings/family").Body); strings.Contains(page, "Past exports") {
		t.Fatalf("beta sees alpha's exports: %s", page)
	}

	member := &models.User{FamilyID: e.Alpha.Family.ID, Email: "kid-export@alpha.example", Role: models.RoleMember, Status: "active"}
	if err := e.Store.CreateUser(ctx, member); err != nil {
		t.Fatal(err)
	}
	apitest.SetPassword(t, e, member, "correct horse battery")
	m := e.Browser(t)
	if r := m.Login(member.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("member login: %d", r.Status)
	}
	if r := m.Post("/settings/family/exports", url.Values{}); r.Status != 403 {
		t.Fatalf("a member exports: %d", r.Status)
	}
	if r := m.Get(download); r.Status != 403 {
		t.Fatalf("a member downloads: %d", r.Status)
	}
}

// The transaction list's "Download CSV" keeps its filters: the file has
// the rows the list finds, every page of them, and no other family's.
func TestTransactionsCSV(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	for _, tx := range []struct{ name, amount, kind string }{{"Coffee beans", "12.50", "expense"}, {"Coffee cup", "3", "expense"},
		{"Salary", "1000", "income"}} {
		if r := b.Post("/transactions", url.Values{"account_id": {e.Alpha.Account.ID.String()}, "date": {"2026-01-05"},
			"type": {tx.kind}, "amount": {tx.amount}, "name": {tx.name}}); r.Status != 303 {
			t.Fatalf("add %s: %d %s", tx.name, r.Status, r.Body)
		}
	}
	page := string(b.Get("/transactions?q=Coffee").Body)
	if !strings.Contains(page, `href="/transactions.csv?q=Coffee"`) {
		t.Fatalf("no CSV link with the filter: %s", page)
	}
	r := b.Get("/transactions.csv?q=Coffee")
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("csv: %d %v", r.Status, r.Header)
	}
	body := string(r.Body)
	if !strings.HasPrefix(body, "date,account_name,amount,name,category,tags,notes,currency\n") ||
		!strings.Contains(body, "2026-01-05,Checking,12.5,Coffee beans,,,,USD\n") || !strings.Contains(body, "Coffee cup") ||
		strings.Contains(body, "Salary") {
		t.Fatalf("csv body:\n%s", body)
	}
	all := string(b.Get("/transactions.csv").Body)
	if !strings.Contains(all, "-1000.0,Salary") || strings.Count(all, "\n") != 4 {
		t.Fatalf("unfiltered csv:\n%s", all)
	}
}

// TestBrowserExportScreen: in Chromium at phone and desktop widths, the
// household's export card with a finished export and one waiting, its
// button pressed (a real form post with its token), and no sideways
// scrolling; saved as screenshots.
func TestBrowserExportScreen(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	ctx := context.Background()
	done, err := e.Store.CreateFamilyExport(ctx, e.Alpha.Family.ID)
	if err != nil {
		t.Fatal(err)
	}
	task, err := jobs.NewFamilyExportTask(e.Alpha.Family.ID, done.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&jobs.Handlers{Store: e.Store, Log: e.Logger()}).FamilyExport(ctx, asynq.NewTask(task.Type(), task.Payload())); err != nil {
		t.Fatal(err)
	}
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	c := apitest.NewChrome(t)
	c.SignIn(base, e.Alpha.User.Email)
	c.Run("export",
		chromedp.Navigate(base+"/settings/family"),
		chromedp.WaitVisible(`#exports button`),
		chromedp.Click(`#exports button`),
		chromedp.WaitVisible(`#exports table`),
	)
	c.WaitFor(`String(document.querySelectorAll('#exports tbody tr').length)`, "2")
	for _, size := range []struct {
		name          string
		width, height int64
	}{{"phone", 390, 844}, {"desktop", 1280, 900}} {
		c.Run("exports at "+size.name,
			chromedp.EmulateViewport(size.width, size.height),
			chromedp.Navigate(base+"/settings/family#exports"),
			chromedp.WaitVisible(`#exports table`),
		)
		if got := c.Text(`#exports a[download="` + done.Filename() + `"]`); got != "Download ZIP" {
			t.Fatalf("%s: download link %q", size.name, got)
		}
		wide, err := chromedp.Run(c.Ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > innerWidth`))
		if err != nil || wide {
			t.Fatalf("%s: the page scrolls sideways (%v)", size.name, err)
		}
		c.ShootView(fmt.Sprintf("family_exports_%s", size.name))
	}
}
