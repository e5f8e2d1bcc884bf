package e2e_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"coffer/api/apitest"
	"coffer/models"
)

// TestBrowserHousehold is a new family's first hour, in Chromium with
// plain forms: sign up, add two accounts, add and edit transactions, set
// a budget, see the dashboard and the reports change, invite a member who
// joins. Every screen is saved as a screenshot.
func TestBrowserHousehold(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	c := apitest.NewChrome(t)
	run, text := c.Run, c.Text
	month := time.Now().UTC().Format("2006-01")
	today := time.Now().UTC().Format("2006-01-02")

	run("sign up",
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(base+"/registrations/new"),
		chromedp.WaitVisible(chromedp.CSS(`#family`)),
		chromedp.SendKeys(chromedp.CSS(`#family`), "The Parkers"),
		chromedp.SendKeys(chromedp.CSS(`#email`), "pat@parkers.example"),
		chromedp.SendKeys(chromedp.CSS(`#password`), "correct horse battery"),
		chromedp.Submit(chromedp.CSS(`#password`)),
		chromedp.WaitVisible(chromedp.CSS(`#welcome`)),
	)
	c.Shoot("01-dashboard-empty")

	for _, a := range []struct{ name, kind, opening string }{{"Joint checking", "depository", "2500"}, {"Visa", "credit_card", "400"}} {
		run("add account "+a.name,
			chromedp.Navigate(base+"/accounts/new"),
			chromedp.WaitVisible(chromedp.CSS(`#name`)),
			chromedp.SendKeys(chromedp.CSS(`#name`), a.name),
			chromedp.SetValue(chromedp.CSS(`#account_type`), a.kind),
			chromedp.SendKeys(chromedp.CSS(`#opening_balance`), a.opening),
			chromedp.Submit(chromedp.CSS(`#name`)),
			chromedp.WaitVisible(chromedp.CSS(`#register-card`)),
		)
	}
	run("accounts", chromedp.Navigate(base+"/accounts"), chromedp.WaitVisible(chromedp.CSS(`table`)))
	if body := text(`main`); !strings.Contains(body, "$400.00 owed") || !strings.Contains(body, "$2,500.00") {
		t.Fatalf("accounts: %s", body)
	}
	c.Shoot("02-accounts")

	run("add a category", chromedp.Navigate(base+"/categories"), chromedp.WaitVisible(chromedp.CSS(`#name`)),
		chromedp.SendKeys(chromedp.CSS(`#name`), "Groceries"), chromedp.Submit(chromedp.CSS(`#name`)), chromedp.WaitVisible(chromedp.CSS(`#labels`)))
	c.Shoot("03-categories")

	for _, tx := range []struct{ name, kind, amount string }{{"Salary", "income", "3000"}, {"Corner market", "expense", "82.40"}} {
		run("add "+tx.name,
			chromedp.Navigate(base+"/transactions/new"),
			chromedp.WaitVisible(chromedp.CSS(`#amount`)),
			chromedp.SetValue(chromedp.CSS(`#account_id`), accountID(t, e, "Joint checking")),
			chromedp.Click(chromedp.CSS(`#type-`+tx.kind)),
			chromedp.SendKeys(chromedp.CSS(`#amount`), tx.amount),
			chromedp.SendKeys(chromedp.CSS(`#name`), tx.name),
			chromedp.Submit(chromedp.CSS(`#amount`)),
			chromedp.WaitVisible(chromedp.CSS(`#transactions`)),
		)
	}
	c.Shoot("04-transactions")

	// Edit: the market run was groceries, and a little more.
	run("edit a transaction",
		chromedp.Click(chromedp.CSS(`#transactions tbody tr:first-child td:nth-child(3) a`)),
		chromedp.WaitVisible(chromedp.CSS(`#amount`)),
	)
	c.Shoot("05-transaction-form")
	run("save the edit",
		chromedp.SetValue(chromedp.CSS(`#amount`), "92.40"),
		chromedp.SetValue(chromedp.CSS(`#category_id`), categoryID(t, e, "Groceries")),
		chromedp.Submit(chromedp.CSS(`#amount`)),
		chromedp.WaitVisible(chromedp.CSS(`#transactions`)),
	)
	if body := text(`#transactions`); !strings.Contains(body, "$92.40") || !strings.Contains(body, "Groceries") || !strings.Contains(body, "+$3,000.00") {
		t.Fatalf("after edit: %s", body)
	}

	run("set a budget",
		chromedp.Navigate(base+"/budgets"),
		chromedp.WaitVisible(chromedp.CSS(`#budgeted_spending`)),
		chromedp.SendKeys(chromedp.CSS(`#budgeted_spending`), "1500"),
		chromedp.SendKeys(chromedp.CSS(`#budget input[inputmode=decimal]`), "400"),
		chromedp.Submit(chromedp.CSS(`#budgeted_spending`)),
		chromedp.WaitVisible(chromedp.CSS(`p.flash`)),
	)
	if body := text(`#budget`); !strings.Contains(body, "$307.60") {
		t.Fatalf("budget: %s", body)
	}
	c.Shoot("06-budget")

	run("dashboard", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`#net-worth`)))
	// 2,500 + 3,000 − 92.40 in checking, less 400 owed on the card.
	if worth := text(`#net-worth .figure`); worth != "$5,007.60" {
		t.Fatalf("net worth: %q", worth)
	}
	if spending := text(`#spending`); !strings.Contains(spending, "Groceries") {
		t.Fatalf("spending by category: %s", spending)
	}
	c.Shoot("07-dashboard")

	run("reports", chromedp.Navigate(base+"/reports"), chromedp.WaitVisible(chromedp.CSS(`#cash-flow svg`)))
	if body := text(`#income-statement`); !strings.Contains(body, "$3,000.00") || !strings.Contains(body, "$92.40") {
		t.Fatalf("income statement: %s", body)
	}
	c.Shoot("08-reports")

	run("invite", chromedp.Navigate(base+"/settings/members"), chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), "sam@parkers.example"), chromedp.Submit(chromedp.CSS(`#email`)), chromedp.WaitVisible(chromedp.CSS(`#invitation-link`)))
	c.Shoot("09-members")
	link := strings.TrimSpace(text(`#invitation-link`))
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/invitations/[A-Za-z0-9_-]+$`).MatchString(link) {
		t.Fatalf("invitation link: %q", link)
	}

	// The invited person, in a fresh browser at phone width, joins.
	sam := apitest.NewChrome(t)
	sam.Run("join",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS(`#password`)),
	)
	sam.Shoot("10-invitation-phone")
	sam.Run("choose a password",
		chromedp.SendKeys(chromedp.CSS(`#password`), "another good password"),
		chromedp.SendKeys(chromedp.CSS(`#password_confirmation`), "another good password"),
		chromedp.Submit(chromedp.CSS(`#password`)),
		chromedp.WaitVisible(chromedp.CSS(`#net-worth`)),
	)
	if worth := sam.Text(`#net-worth .figure`); worth != "$5,007.60" {
		t.Fatalf("the new member's dashboard: %q", worth)
	}
	sam.Shoot("11-dashboard-phone")
	// On a phone the navigation is one line with a menu.
	top, err := chromedp.Run(sam.Ctx, chromedp.Evaluate[float64](`document.querySelector("main").getBoundingClientRect().top`))
	if err != nil {
		sam.Fail("measure the header", err)
	}
	if top > 80 {
		t.Fatalf("the content starts %.0f px down on a phone", top)
	}
	sam.Run("open the menu", chromedp.Click(chromedp.CSS(`details.menu summary`)), chromedp.WaitVisible(chromedp.CSS(`details.menu a[href="/settings/members"]`)))
	sam.Shoot("11b-menu-phone")
	sam.Run("transactions on a phone", chromedp.Navigate(base+"/transactions?from="+month+"-01&to="+today), chromedp.WaitVisible(chromedp.CSS(`#transactions`)))
	// A transaction is at most two lines: what and how much, then when,
	// where and under what.
	lines, err := chromedp.Run(sam.Ctx, chromedp.Evaluate[[]float64](`[...document.querySelectorAll("#transactions tbody tr")].map(r =>
		r.getBoundingClientRect().height / parseFloat(getComputedStyle(r.querySelector("td:nth-child(3)")).lineHeight))`))
	if err != nil {
		sam.Fail("measure the rows", err)
	}
	for i, n := range lines {
		if !(n <= 2.6) { // NaN too: a line height that is not a length
			t.Fatalf("row %d is %.1f lines on a phone", i+1, n)
		}
	}
	if len(lines) == 0 {
		t.Fatal("no rows on the phone")
	}
	sam.Shoot("12-transactions-phone")
}

// parkers is the family the test signed up.
func parkers(t *testing.T, e *apitest.Env) uuid.UUID {
	t.Helper()
	users, _, err := e.Store.Users(t.Context(), models.UserFilter{Query: "pat@parkers.example"}, models.Page{Number: 1, Size: 1})
	if err != nil || len(users) != 1 {
		t.Fatalf("the new family: %v %v", users, err)
	}
	return users[0].FamilyID
}

func accountID(t *testing.T, e *apitest.Env, name string) string {
	t.Helper()
	accounts, _, err := e.Store.Accounts(t.Context(), parkers(t, e), models.Page{Number: 1, Size: 10})
	return idNamed(t, accounts, err, name, func(a models.Account) (string, string) { return a.Name, a.ID.String() })
}

func categoryID(t *testing.T, e *apitest.Env, name string) string {
	t.Helper()
	cats, _, err := e.Store.Categories(t.Context(), parkers(t, e), models.Page{Number: 1, Size: 10})
	return idNamed(t, cats, err, name, func(c models.Category) (string, string) { return c.Name, c.ID.String() })
}

// idNamed is the id of the row called name.
func idNamed[T any](t *testing.T, rows []T, err error, name string, of func(T) (string, string)) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if n, id := of(r); n == name {
			return id
		}
	}
	t.Fatalf("nothing named %s", name)
	return ""
}
