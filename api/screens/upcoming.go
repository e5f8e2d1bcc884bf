package screens

import (
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"

	"coffer/api/web"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// upcomingDays is how far /upcoming looks ahead; missedDays how far back
// it lists missed occurrences ("last month").
const (
	upcomingDays = 30
	missedDays   = 31
	upcomingMax  = 500
)

// upcomingTotal is what the coming days take out and bring in, in one
// currency.
type upcomingTotal struct {
	Currency string
	Out, In  money.Amount
}

type upcomingData struct {
	To       civil.Date
	Upcoming []models.Upcoming
	Totals   []upcomingTotal
	Missed   []models.RecurringOccurrence
	PaidLate []models.RecurringOccurrence // missed, then paid by a payment that came late
	// FeedOn: the user has a calendar address; FeedURL is a new one, shown
	// once, right after it was made.
	FeedOn  bool
	FeedURL string
}

// upcoming is the next 30 days of the family's bills and income,
// projected from each active recurring transaction's next date and
// cadence, with last month's missed ones and the user's calendar feed.
func (h *Handler) upcoming(c *fiber.Ctx) error {
	return h.upcomingPage(c, fiber.StatusOK, "", "")
}

func (h *Handler) upcomingPage(c *fiber.Ctx, status int, feedURL, flash string) error {
	ctx := c.UserContext()
	u := web.SessionOf(c).User
	today := time.Now().UTC()
	if h.now != nil {
		today = h.now().UTC()
	}
	d := upcomingData{To: civil.DateOf(today.AddDate(0, 0, upcomingDays)), FeedURL: feedURL}
	var err error
	if d.Upcoming, err = h.store.UpcomingRecurring(ctx, u.FamilyID, d.To, upcomingMax); err != nil {
		return err
	}
	for _, up := range d.Upcoming {
		d.Totals = addTotal(d.Totals, up.Item.Currency, up.Item.Amount)
	}
	past, err := h.store.RecurringOccurrences(ctx, u.FamilyID, models.OccurrenceFilter{DueFrom: civil.DateOf(today.AddDate(0, 0, -missedDays))})
	if err != nil {
		return err
	}
	for _, o := range past {
		switch {
		case o.Status == models.OccurrenceMissed:
			d.Missed = append(d.Missed, o)
		case o.Late():
			d.PaidLate = append(d.PaidLate, o)
		}
	}
	switch _, err := h.store.CalendarFeedOf(ctx, u.FamilyID, u.ID); {
	case err == nil:
		d.FeedOn = true
	case !errors.Is(err, models.ErrNotFound):
		return err
	}
	return h.pages.Render(c, status, "upcoming", web.Page{Nav: "upcoming", Title: "Upcoming", Data: d, Flash: flash})
}

func addTotal(ts []upcomingTotal, currency string, a money.Amount) []upcomingTotal {
	i := 0
	for i < len(ts) && ts[i].Currency != currency {
		i++
	}
	if i == len(ts) {
		ts = append(ts, upcomingTotal{Currency: currency})
	}
	if a < 0 {
		ts[i].In -= a
	} else {
		ts[i].Out += a
	}
	return ts
}

// newCalendarFeed makes the user a new calendar address, which replaces
// (and so revokes) the old one, and shows it once.
func (h *Handler) newCalendarFeed(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	token, err := h.store.NewCalendarFeed(c.UserContext(), u.FamilyID, u.ID)
	if err != nil {
		return err
	}
	// Rendered directly, not after a redirect: the address must not pass
	// through a cookie or a URL.
	url := h.site.Options().Origin + "/calendar/" + token + ".ics"
	return h.upcomingPage(c, fiber.StatusCreated, url, "Your new calendar address is below; any older one no longer works.")
}

// deleteCalendarFeed turns the user's calendar feed off.
func (h *Handler) deleteCalendarFeed(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	if err := h.store.DeleteCalendarFeed(c.UserContext(), u.FamilyID, u.ID); err != nil {
		return err
	}
	return h.site.Redirect(c, "/upcoming", "The calendar feed is off: its address no longer works.")
}
