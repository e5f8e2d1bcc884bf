package screens_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"coffer/api/apitest"
)

const sureExport = "../../models/importfile/testdata/sure/export.zip"

func accountCount(t *testing.T, e *apitest.Env) int {
	t.Helper()
	n, err := e.Store.DB().NewSelect().Table("accounts").Where("family_id = ?", e.Alpha.Family.ID).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// TestRestoreScreens walks the restore without JavaScript: check the
// file (what it holds, nothing written), refuse a bad one with its line,
// then restore it.
func TestRestoreScreens(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	zip, err := os.ReadFile(sureExport)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b.Get("/imports").Body)
	if !strings.Contains(page, `action="/imports/restore"`) || !strings.Contains(page, `<label for="restore_file">`) {
		t.Fatalf("imports page has no restore form: %s", page)
	}
	before := accountCount(t, e)

	r := b.UploadFile("/imports/restore", map[string]string{"action": "check"}, "sure.zip", zip)
	body := string(r.Body)
	if r.Status != 200 || !strings.Contains(body, "Nothing has been written yet") ||
		!strings.Contains(body, `<td data-label="Kind">Transactions</td><td data-label="Records">6</td>`) ||
		!strings.Contains(body, `<td data-label="Kind">Accounts</td><td data-label="Records">2</td>`) ||
		!strings.Contains(body, "2 daily balances are not kept") || !strings.Contains(body, `name="action" value="restore"`) {
		t.Fatalf("check: %d %s", r.Status, body)
	}
	if accountCount(t, e) != before {
		t.Fatal("the check wrote accounts")
	}

	bad := []byte(strings.Replace(string(mustRead(t, "all.ndjson")), `"amount":"120.5"`, `"amount":"12o.5"`, 1))
	r = b.UploadFile("/imports/restore", map[string]string{"action": "restore"}, "all.ndjson", bad)
	if r.Status != 422 || !strings.Contains(string(r.Body), "line 11: Transaction: amount must be a decimal amount") ||
		!strings.Contains(string(r.Body), "Nothing was written") {
		t.Fatalf("bad file: %d %s", r.Status, r.Body)
	}
	if accountCount(t, e) != before {
		t.Fatal("a refused file wrote accounts")
	}

	r = b.UploadFile("/imports/restore", map[string]string{"action": "restore"}, "sure.zip", zip)
	if r.Status != 303 || r.Header.Get("Location") != "/imports" {
		t.Fatalf("restore: %d %s", r.Status, r.Body)
	}
	page = string(b.Get("/imports").Body)
	if !strings.Contains(page, "Restoring…") || !strings.Contains(page, `http-equiv="refresh"`) {
		t.Fatalf("imports page while restoring: %s", page)
	}
	rs, err := e.Store.Restores(context.Background(), e.Alpha.Family.ID, 1)
	if err != nil || len(rs) != 1 {
		t.Fatalf("restores: %v %v", rs, err)
	}
	if _, err := e.Store.RunRestore(context.Background(), e.Alpha.Family.ID, rs[0].ID); err != nil {
		t.Fatal(err)
	}
	page = string(b.Get("/imports").Body)
	if !strings.Contains(page, "Restored: 2 accounts, 8 transactions") || strings.Contains(page, `http-equiv="refresh"`) {
		t.Fatalf("imports page once restored: %s", page)
	}
	if accountCount(t, e) != before+2 {
		t.Errorf("accounts: %d, were %d", accountCount(t, e), before)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../models/importfile/testdata/sure", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBrowserRestorePreflight checks the export in Chromium and shoots
// the preflight at phone and desktop widths.
func TestBrowserRestorePreflight(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	abs, err := filepath.Abs(sureExport)
	if err != nil {
		t.Fatal(err)
	}
	c := apitest.NewChrome(t)
	c.SignIn(base, e.Alpha.User.Email)
	for _, w := range []struct {
		name          string
		width, height int64
	}{{"phone", 390, 844}, {"desktop", 1280, 900}} {
		c.Run(w.name,
			chromedp.EmulateViewport(w.width, w.height),
			chromedp.Navigate(base+"/imports"),
			chromedp.WaitVisible(chromedp.ID("restore_file")),
			chromedp.SetUploadFiles(chromedp.ID("restore_file"), []string{abs}),
			chromedp.Click(chromedp.CSS(`form[action="/imports/restore"] button`)),
			chromedp.WaitVisible(chromedp.ID("restore_file")),
			chromedp.WaitReady(chromedp.CSS(`form[action="/imports/restore"] input[value=restore]`)),
		)
		if got := c.Text("main"); !strings.Contains(got, "Nothing has been written yet") || !strings.Contains(got, "Transactions") {
			t.Fatalf("%s: %q", w.name, got)
		}
		c.Shoot("restore-preflight-" + w.name)
	}
}
