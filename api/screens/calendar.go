package screens

import (
	"strings"
	"time"

	ics "github.com/arran4/golang-ical"
	"github.com/gofiber/fiber/v2"

	"coffer/models"
	"coffer/models/civil"
)

// calendarDays is how far ahead the calendar feed reaches.
const calendarDays = 90

// calendarFeed is GET /calendar/<token>.ics, for a calendar app that
// cannot sign in: the secret address is the permission. It answers the
// family's upcoming bills and income for calendarDays as RFC 5545, one
// all-day event per occurrence, whose UID (item and date) stays the same
// from one fetch to the next so that apps update rather than duplicate. A
// wrong, replaced or turned-off token is a 404 like any unknown page.
func (h *Handler) calendarFeed(c *fiber.Ctx) error {
	token, ok := strings.CutSuffix(c.Params("file"), ".ics")
	if !ok || !strings.HasPrefix(token, "cal_") {
		return fiber.ErrNotFound
	}
	ctx := c.UserContext()
	feed, err := h.store.CalendarFeedByToken(ctx, token)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	if h.now != nil {
		now = h.now().UTC()
	}
	up, err := h.store.UpcomingRecurring(ctx, feed.FamilyID, civil.DateOf(now.AddDate(0, 0, calendarDays)), 2000)
	if err != nil {
		return err
	}
	cal := ics.NewCalendarFor("coffer")
	cal.SetMethod(ics.MethodPublish)
	cal.SetXWRCalName("Bills and income")
	cal.SetRefreshInterval("PT12H")
	for _, u := range up {
		e := cal.AddEvent(u.Item.ID.String() + "-" + string(u.Date) + "@coffer")
		e.SetDtStampTime(now)
		day := u.Date.Time()
		e.SetAllDayStartAt(day)
		e.SetAllDayEndAt(day.AddDate(0, 0, 1))
		e.SetSummary(calendarSummary(u.Item))
		desc := u.Item.Cadence
		if u.Item.Account != nil {
			desc += ", from " + u.Item.Account.Name
		}
		e.SetDescription(desc)
		e.SetProperty(ics.ComponentPropertyTransp, "TRANSPARENT")
	}
	c.Set(fiber.HeaderContentType, "text/calendar; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	c.Set("Referrer-Policy", "no-referrer")
	return c.SendString(cal.Serialize())
}

// calendarSummary is an event's title: the name and the amount, income
// with a plus sign, as the screens show it.
func calendarSummary(r *models.RecurringTransaction) string {
	if r.Amount < 0 {
		return r.Name + ": +" + formatMoney(-r.Amount, r.Currency)
	}
	return r.Name + ": " + formatMoney(r.Amount, r.Currency)
}
