package e2e_test

import (
	"strings"
	"testing"

	"coffer/api/apitest"
	"github.com/chromedp/chromedp"
)

// TestBrowserEnhancements drives the screens' script in Chromium: the
// account filter and the search apply without a navigation, the address
// follows, and back, forward and reload show the same list; a category is
// changed in its row and kept; a refusal (the row changed meanwhile) shows
// in the row.
func TestBrowserEnhancements(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	l := apitest.NewSmallLedger(t, e)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	c := apitest.NewChrome(t)
	c.Run("desktop size", chromedp.EmulateViewport(1280, 900))
	c.SignIn(base, e.Alpha.User.Email)

	names := `[...document.querySelectorAll("#transactions tbody td:nth-child(3) a")].map(a => a.textContent).join(",")`
	// The marker lives as long as the page: a navigation would lose it.
	mark := chromedp.Evaluate[chromedp.Void](`window.__marker = "still here"`)
	samePage := func() {
		t.Helper()
		c.WaitFor(`window.__marker || "a new page"`, "still here")
	}
	c.Run("open the list", chromedp.Navigate(base+"/transactions"), chromedp.WaitVisible(`#transactions`), mark)
	c.WaitFor(names, "Coffee,Corner market")

	// Choose the card in the account filter, by keyboard.
	visa := "?account_id=" + l.Card.ID.String()
	c.Run("filter by the card", chromedp.Click(`#filters details summary`), chromedp.SendKeys(`#f-account`, "Visa"))
	c.WaitFor(names, "Coffee")
	c.WaitFor(`location.search`, visa)
	c.WaitFor(`document.getElementById("announce").textContent`, "1 transaction found.")
	samePage()
	c.Shoot("13-transactions-live-filter")

	// Back and forward stay on the page and bring the filter along.
	c.Run("back", chromedp.Evaluate[chromedp.Void](`history.back()`))
	c.WaitFor(names, "Coffee,Corner market")
	c.WaitFor(`location.search + "|" + document.getElementById("f-account").value`, "|")
	c.Run("forward", chromedp.Evaluate[chromedp.Void](`history.forward()`))
	c.WaitFor(names, "Coffee")
	c.WaitFor(`location.search + "|" + document.getElementById("f-account").value`, visa+"|"+l.Card.ID.String())
	samePage()

	// A reload is a new page with the same list.
	c.Run("reload", chromedp.Reload(), chromedp.WaitVisible(`#transactions`))
	c.WaitFor(`(window.__marker || "a new page") + "|" + document.getElementById("f-account").value`, "a new page|"+l.Card.ID.String())
	c.WaitFor(names, "Coffee")

	// A filter that does not parse is reported beside its field.
	c.Run("a bad amount", mark, chromedp.SendKeys(`#f-min`, "lots"))
	c.WaitFor(`(document.querySelector("#f-min + .field-error") || {}).textContent || ""`, "Use a positive amount such as 12.50.")
	samePage()

	// Typing in the search narrows the list once the typing stops.
	c.Run("search", chromedp.Navigate(base+"/transactions"), chromedp.WaitVisible(`#transactions`),
		mark, chromedp.SendKeys(`#q`, "market"))
	c.WaitFor(names, "Corner market")
	c.WaitFor(`location.search + "|" + (document.activeElement && document.activeElement.id)`, "?q=market|q")
	samePage()

	// The account register's search works the same way.
	c.Run("the card's register", chromedp.Navigate(base+"/accounts/"+l.Card.ID.String()), chromedp.WaitVisible(`#register`),
		mark, chromedp.SendKeys(`#q`, "nothing like it"))
	c.WaitFor(`document.querySelector("#register-results").textContent.trim()`, "No transactions match this search.")
	c.WaitFor(`location.search`, "?q=nothing+like+it")
	samePage()
	c.Run("back to the list", chromedp.Navigate(base+"/transactions?q=market"), chromedp.WaitVisible(`#transactions`), mark)

	// Change the market run's category in its row.
	cell := "#tx-" + l.Market.ID.String() + ` td[data-inline-edit]`
	c.Run("open the category", chromedp.Click(cell+` button.inline-edit`), chromedp.WaitVisible(cell+` select`))
	c.WaitFor(`document.activeElement.tagName`, "SELECT")
	c.Run("choose Groceries", chromedp.SendKeys(cell+` select`, "Groceries"))
	c.Shoot("14-inline-edit")
	c.Run("save", chromedp.Click(cell+` .inline-edit-box button:not(.secondary)`))
	c.WaitFor(`document.querySelector("`+cell+`").textContent.trim()`, "Groceries")
	c.WaitFor(`document.activeElement.className + "|" + document.getElementById("announce").textContent`, "link inline-edit|Saved.")
	samePage()
	c.Run("reload", chromedp.Reload(), chromedp.WaitVisible(`#transactions`))
	c.WaitFor(`document.querySelector("`+cell+`").textContent.trim()`, "Groceries")
	if saved := apitest.Stored(t, e, l.Market.ID); saved.CategoryID == nil || *saved.CategoryID != l.Groceries.ID {
		t.Fatalf("saved: %+v", saved)
	}

	// Someone else files it under Fun meanwhile: the row says so, in place,
	// and shows what is stored now.
	tx := apitest.Stored(t, e, l.Market.ID)
	tx.CategoryID = &l.Fun.ID
	if _, err := e.Store.UpdateTransaction(t.Context(), tx, []string{"category_id"}, nil); err != nil {
		t.Fatal(err)
	}
	c.Run("edit the stale row", mark,
		chromedp.Click(cell+` button.inline-edit`), chromedp.WaitVisible(cell+` select`),
		chromedp.SendKeys(cell+` select`, "Uncategorized"), chromedp.Click(cell+` .inline-edit-box button:not(.secondary)`))
	c.WaitFor(`(document.querySelector("`+cell+` .field-error") || {}).textContent || ""`,
		"This transaction was changed meanwhile. This is how it is saved now; change it again if you need to.")
	if got := c.Text(cell + ` button.inline-edit`); strings.TrimSpace(got) != "Fun" {
		t.Fatalf("the refused row shows %q", got)
	}
	samePage()
	c.Shoot("15-inline-edit-refused")
	if kept := apitest.Stored(t, e, l.Market.ID); kept.CategoryID == nil || *kept.CategoryID != l.Fun.ID || len(kept.Tags) != 1 {
		t.Fatalf("after the refusal: %+v", kept)
	}
}
