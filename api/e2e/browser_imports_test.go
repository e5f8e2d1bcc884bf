package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"coffer/api/apitest"
	"github.com/chromedp/chromedp"
)

// TestBrowserImport imports a CSV in Chromium with plain forms: upload,
// map the columns, check the preview, import, and watch the page (which
// refreshes itself) reach complete once the job has run.
func TestBrowserImport(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	file := filepath.Join(t.TempDir(), "bank.csv")
	if err := os.WriteFile(file, []byte("When;What;How much\n15.01.2024;Rent;-1.234,50\n16.01.2024;Salary;2.000,00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := apitest.NewChrome(t)
	run, text := c.Run, c.Text
	run("sign in and upload",
		chromedp.EmulateViewport(390, 844), // a phone
		chromedp.Navigate(base+"/imports"),
		chromedp.WaitVisible(`#email`),
		chromedp.SendKeys(`#email`, e.Alpha.User.Email),
		chromedp.SendKeys(`#password`, "correct horse battery"),
		chromedp.Submit(`#password`),
		chromedp.WaitVisible(`#file`),
		chromedp.SetUploadFiles(`#file`, []string{file}),
		chromedp.Submit(`#file`),
		chromedp.WaitVisible(`#date_col_label`),
	)
	c.Shoot("imports-01-mapping")
	run("map the columns",
		chromedp.SetValue(`#date_col_label`, "When"),
		chromedp.SetValue(`#amount_col_label`, "How much"),
		chromedp.SetValue(`#name_col_label`, "What"),
		chromedp.SetValue(`#date_format`, "%d.%m.%Y"),
		chromedp.SetValue(`#number_format`, "1.234,56"),
		chromedp.Submit(`#date_format`),
		chromedp.WaitVisible(`form[action$="/publish"] button`),
	)
	c.Shoot("imports-02-preview")
	if got := text(`table tbody tr:first-child td:nth-child(3)`); got != "$1,234.50" {
		t.Fatalf("the preview shows the amount as %q, not as the other screens do", got)
	}
	run("import", chromedp.Click(`form[action$="/publish"] button`))
	// The preview page shows the status too: wait for the page after the
	// post rather than read the one before it.
	// The page reloads itself every 2 s while importing: a read that
	// meets a reload misses, and the next one reads the new page.
	status := func() string {
		ctx, cancel := context.WithTimeout(c.Ctx, 2*time.Second)
		defer cancel()
		s, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#import-status`)))
		return s
	}
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		s := status()
		if s == "Importing" {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("after publish: %q", s)
		}
	}
	loc, err := chromedp.Run(c.Ctx, chromedp.Location())
	if err != nil {
		c.Fail("location", err)
	}
	e.FinishImport(t, e.Alpha.Family.ID.String(), loc[strings.LastIndex(loc, "/")+1:])
	deadline := time.Now().Add(20 * time.Second)
	for status() != "Done" {
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed complete: %q", text(`#import-counts`))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if counts := text(`#import-counts`); !strings.Contains(counts, "2 imported") {
		t.Fatalf("counts: %q", counts)
	}
	c.Shoot("imports-03-complete")
}
