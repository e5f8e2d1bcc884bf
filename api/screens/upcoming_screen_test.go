package screens_test

import (
	"bytes"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"
	"github.com/chromedp/chromedp"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// upcomingBook gives alpha a monthly rent due in five days, a two-weekly
// pay in two days, a gym fee whose last date passed unpaid (recorded
// missed), and beta a bill of its own; it returns the rent.
func upcomingBook(t *testing.T, e *apitest.Env) *models.RecurringTransaction {
	t.Helper()
	ctx := t.Context()
	today := time.Now().UTC()
	day := func(n int) civil.Date { return civil.DateOf(today.AddDate(0, 0, n)) }
	rent := &models.RecurringTransaction{FamilyID: e.Alpha.Family.ID, AccountID: &e.Alpha.Account.ID, Name: "Rent",
		Amount: 15000000, Currency: "USD", Cadence: "monthly", ExpectedDay: day(5).Time().Day(), NextDate: day(5)}
	pay := &models.RecurringTransaction{FamilyID: e.Alpha.Family.ID, Name: "Salary", Amount: -20000000, Currency: "USD",
		Cadence: "biweekly", ExpectedDay: day(2).Time().Day(), NextDate: day(2)}
	gym := &models.RecurringTransaction{FamilyID: e.Alpha.Family.ID, Name: "Gym", Amount: money.Amount(499000), Currency: "USD",
		Cadence: "monthly", ExpectedDay: day(-10).Time().Day(), NextDate: day(-10)}
	theirs := &models.RecurringTransaction{FamilyID: e.Beta.Family.ID, Name: "Theirs", Amount: 100000, Currency: "USD",
		Cadence: "weekly", ExpectedDay: 1, NextDate: day(1)}
	for _, r := range []*models.RecurringTransaction{rent, pay, gym, theirs} {
		if err := e.Store.CreateRecurringTransaction(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := e.Store.MarkMissedRecurring(ctx, e.Alpha.Family.ID); err != nil || n != 1 {
		t.Fatalf("missed %d %v", n, err)
	}
	return rent
}

var feedURL = regexp.MustCompile(`/calendar/(cal_[0-9a-f]+)\.ics`)

// fetchFeed GETs a calendar address without a session and parses it
// back with the library; nil when the answer is not 200.
func fetchFeed(t *testing.T, e *apitest.Env, token string) (*ics.Calendar, int) {
	t.Helper()
	r := e.Browser(t).Get("/calendar/" + token + ".ics") // no session: a calendar app
	if r.Status != 200 {
		return nil, r.Status
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/calendar") {
		t.Fatalf("content type %q", ct)
	}
	cal, err := ics.ParseCalendar(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatalf("parse feed: %v\n%s", err, r.Body)
	}
	return cal, 200
}

// TestUpcomingScreen: /upcoming lists the next 30 days' bills and income
// with their amounts and last month's missed one, and never another
// family's; the calendar address made there answers an RFC 5545 feed of
// 90 days (all-day events, stable UIDs, name and amount in the summary)
// without a session; a new address revokes the old, turning it off
// revokes it, and a wrong token is a 404.
func TestUpcomingScreen(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	rent := upcomingBook(t, e)

	page := string(b.Get("/upcoming").Body)
	for _, want := range []string{`href="/upcoming" aria-current="page"`, "Rent", "$1,500.00", "+$2,000.00", "Salary",
		"Missed in the last month", "Gym", "$49.90", "Your calendar feed is off", ">Make a calendar address<"} {
		if !strings.Contains(page, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	if strings.Contains(page, "Theirs") {
		t.Error("screen shows another family's bill")
	}

	made := b.Post("/upcoming/calendar", url.Values{})
	m := feedURL.FindStringSubmatch(string(made.Body))
	if made.Status != 201 || m == nil {
		t.Fatalf("make an address: %d\n%s", made.Status, made.Body)
	}
	first := m[1]
	cal, status := fetchFeed(t, e, first)
	if status != 200 {
		t.Fatalf("feed: %d", status)
	}
	events := cal.Events()
	uids := map[string]bool{}
	var rentEvent *ics.VEvent
	for _, ev := range events {
		uids[ev.Id()] = true
		summary := ev.GetProperty(ics.ComponentPropertySummary).Value
		if strings.Contains(summary, "Theirs") {
			t.Error("feed shows another family's bill")
		}
		if rentEvent == nil && strings.HasPrefix(summary, "Rent") {
			rentEvent = ev
		}
	}
	// Rent thrice, pay six or seven times, the gym thrice in 90 days.
	if len(events) < 12 || len(uids) != len(events) || rentEvent == nil {
		t.Fatalf("%d events, %d uids, rent %v", len(events), len(uids), rentEvent)
	}
	start := rentEvent.GetProperty(ics.ComponentPropertyDtStart)
	if start.Value != strings.ReplaceAll(string(rent.NextDate), "-", "") || start.ICalParameters["VALUE"][0] != "DATE" ||
		rentEvent.GetProperty(ics.ComponentPropertySummary).Value != "Rent: $1,500.00" {
		t.Fatalf("rent event: %s", rentEvent.Serialize(nil))
	}
	again, _ := fetchFeed(t, e, first)
	for _, ev := range again.Events() {
		if !uids[ev.Id()] {
			t.Fatalf("uid %s changed between fetches", ev.Id())
		}
	}

	page = string(b.Get("/upcoming").Body)
	if strings.Contains(page, first) || !strings.Contains(page, "Your calendar feed is on") {
		t.Fatal("the address is shown again, or the feed is not on")
	}
	m = feedURL.FindStringSubmatch(string(b.Post("/upcoming/calendar", url.Values{}).Body))
	if m == nil || m[1] == first {
		t.Fatal("no new address")
	}
	second := m[1]
	if _, status := fetchFeed(t, e, first); status != 404 {
		t.Fatalf("the replaced address answers %d", status)
	}
	if _, status := fetchFeed(t, e, second); status != 200 {
		t.Fatalf("the new address answers %d", status)
	}
	if r := b.Post("/upcoming/calendar/delete", url.Values{}); r.Status != 303 {
		t.Fatalf("turn off: %d", r.Status)
	}
	for _, bad := range []string{second, "cal_00", "nope", second + "x"} {
		if _, status := fetchFeed(t, e, bad); status != 404 {
			t.Errorf("token %q answers %d", bad, status)
		}
	}
}

// The upcoming screen in Chromium at phone and desktop width, its
// calendar address made by the plain form.
func TestBrowserUpcomingScreen(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	upcomingBook(t, e)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	c := apitest.NewChrome(t)
	c.SignIn(base, e.Alpha.User.Email)
	c.Run("phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+"/upcoming"),
		chromedp.WaitVisible(chromedp.ID("calendar")))
	c.Shoot("upcoming_390")
	c.Run("make an address", chromedp.Click(chromedp.CSS(`form[action="/upcoming/calendar"] button`)),
		chromedp.WaitVisible(chromedp.ID("feed-url")))
	c.Shoot("upcoming_feed_390")
	c.Run("desktop", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(base+"/upcoming"),
		chromedp.WaitVisible(chromedp.ID("calendar")))
	c.Shoot("upcoming_1280")
	// The missed gym fee paid days late leaves the missed list for the
	// paid-late one.
	if _, _, err := e.Store.CreateTransaction(t.Context(), &models.Transaction{FamilyID: e.Alpha.Family.ID,
		AccountID: e.Alpha.Account.ID, Date: civil.DateOf(time.Now().UTC()), Amount: 499000, Currency: "USD", Name: "GYM 123"}, nil); err != nil {
		t.Fatal(err)
	}
	c.Run("paid late", chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+"/upcoming"),
		chromedp.WaitVisible(chromedp.ID("calendar")))
	c.Shoot("upcoming_late_390")
}
