package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"coffer/api/apitest"
	"coffer/models"
)

// TestBrowserSplitEditor splits a 180.00 warehouse receipt into groceries
// and household goods in Chromium, at phone (390 px) and desktop width:
// a row added and one removed with the buttons (each a new page, no
// script needed), a total that does not add up refused beside it, then
// saved; the list shows the parts beneath their parent. No page is wider
// than the window. Every step is saved as a screenshot.
func TestBrowserSplitEditor(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	ctx := context.Background()
	fam := e.Alpha.Family.ID
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	food := &models.Category{FamilyID: fam, Name: "Groceries", Color: "#112233", Icon: "utensils", Classification: "expense"}
	home := &models.Category{FamilyID: fam, Name: "Household goods", Color: "#223344", Icon: "home", Classification: "expense"}
	for _, cat := range []*models.Category{food, home} {
		if err := e.Store.CreateCategory(ctx, cat); err != nil {
			t.Fatal(err)
		}
	}
	c := apitest.NewChrome(t)
	c.SignIn(base, e.Alpha.User.Email)

	for _, width := range []int{390, 1280} {
		tx, _, err := e.Store.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: e.Alpha.Account.ID,
			Date: "2026-01-10", Amount: 180_0000, Currency: "USD", Name: fmt.Sprintf("Warehouse store %d", width), CategoryID: &food.ID}, nil)
		if err != nil {
			t.Fatal(err)
		}
		shot := func(step string) { c.Shoot(fmt.Sprintf("split-%d-%s", width, step)) }
		fits := func(what string) {
			t.Helper()
			c.WaitFor(`String(document.documentElement.scrollWidth <= window.innerWidth)`, "true")
			_ = what
		}
		remaining := `document.getElementById("split-total").textContent.trim()`

		c.Run("open the editor from the edit screen",
			chromedp.EmulateViewport(int64(width), 900),
			chromedp.Navigate(base+"/transactions/"+tx.ID.String()+"/edit"),
			chromedp.WaitVisible(`#split-note, a[href^="/transactions/`+tx.ID.String()+`/split"]`),
			chromedp.Click(`a[href^="/transactions/`+tx.ID.String()+`/split"]`),
			chromedp.WaitVisible(`#split-rows`),
		)
		c.WaitFor(remaining, "Every amount is allocated.")
		fits("the editor")
		shot("1-editor")

		// The receipt: 120.00 of groceries, 60.00 of household goods.
		c.Run("type the parts",
			chromedp.SetValue(`#name_0`, "Food"),
			chromedp.SetValue(`#amount_0`, "120.00"),
			chromedp.SetValue(`#name_1`, "Cleaning things"),
			chromedp.SetValue(`#category_1`, home.ID.String()),
			chromedp.SetValue(`#amount_1`, "50"),
			chromedp.Click(`button[value="add"]`),
			chromedp.WaitVisible(`#name_2`),
		)
		c.WaitFor(`document.getElementById("name_1").value + "|" + document.getElementById("amount_0").value`, "Cleaning things|120.00")
		c.WaitFor(remaining, "$10.00 left to allocate.")
		fits("three rows")
		shot("2-row-added")

		c.Run("remove the empty row", chromedp.Click(`button[value="remove_2"]`), chromedp.WaitNotPresent(`#name_2`))
		c.WaitFor(remaining, "$10.00 left to allocate.")

		c.Run("save a split that does not add up", chromedp.Click(`#split-form .actions button[value="save"]`),
			chromedp.WaitVisible(`#split-total.field-error`))
		c.WaitFor(`document.querySelector("#split-total + .field-error").textContent`,
			"Splits must add up to the transaction's amount of $180.00: they add up to $170.00, $10.00 short.")
		if got := apitest.Stored(t, e, tx.ID); got.IsSplitParent() {
			t.Fatal("a split that does not add up was saved")
		}
		fits("the refusal")
		shot("3-refused")

		c.Run("correct and save",
			chromedp.SetValue(`#amount_1`, "60"),
			chromedp.Click(`#split-form .actions button[value="save"]`),
			chromedp.WaitVisible(`#transactions`),
		)
		got := apitest.Stored(t, e, tx.ID)
		if !got.IsSplitParent() || len(got.Splits) != 2 || got.Splits[1].Amount != 60_0000 || *got.Splits[1].CategoryID != home.ID {
			t.Fatalf("saved split: %+v", got.Splits)
		}
		c.WaitFor(`[...document.querySelectorAll("#tx-`+tx.ID.String()+` ~ tr.split-part td:nth-child(3) a")].slice(0, 2).map(a => a.textContent).join(",")`,
			"Cleaning things,Food", "Food,Cleaning things")
		fits("the list")
		shot("4-list")

		c.Run("the split transaction's edit screen", chromedp.Navigate(base+"/transactions/"+tx.ID.String()+"/edit"),
			chromedp.WaitVisible(`#split-note`))
		if note := c.Text(`#split-note`); !strings.Contains(note, "split into 2 parts") {
			t.Errorf("edit screen note: %s", note)
		}
		fits("the edit screen")
		shot("6-edit")

		c.Run("the register", chromedp.Navigate(base+"/accounts/"+e.Alpha.Account.ID.String()), chromedp.WaitVisible(`#register`))
		if body := c.Text(`#register`); !strings.Contains(body, "Split into the parts below") {
			t.Errorf("register: %s", body)
		}
		fits("the register")
		shot("5-register")
	}
}
