package screens

import (
	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
)

// recurringShown is how many recurring transactions the screen lists.
const recurringShown = 100

type recurringData struct {
	Suggested []models.RecurringTransaction
	Others    []models.RecurringTransaction
}

// listRecurring is the household's recurring transactions: the detector's
// suggestions to confirm or dismiss first, then the others, to end.
func (h *Handler) listRecurring(c *fiber.Ctx) error {
	rows, _, err := h.store.RecurringTransactions(c.UserContext(), web.SessionOf(c).User.FamilyID,
		models.RecurringFilter{}, models.Page{Number: 1, Size: recurringShown})
	if err != nil {
		return err
	}
	var d recurringData
	for _, r := range rows {
		if r.Status == models.RecurringSuggested {
			d.Suggested = append(d.Suggested, r)
		} else {
			d.Others = append(d.Others, r)
		}
	}
	return h.pages.Render(c, fiber.StatusOK, "recurring", web.Page{Nav: "recurring", Title: "Recurring", Data: d})
}

// recurringActions are the screen's buttons: the status each sets and
// what the flash says.
var recurringActions = map[string]struct{ status, flash string }{
	"confirm": {models.RecurringActive, "Confirmed: it is now a recurring transaction."},
	"dismiss": {models.RecurringEnded, "Dismissed: it will not be suggested again."},
	"end":     {models.RecurringEnded, "Ended."},
}

// setRecurringStatus is the confirm, dismiss and end buttons.
func (h *Handler) setRecurringStatus(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	a, ok := recurringActions[c.FormValue("action")]
	if !ok {
		return httperr.BadRequest("Unknown action")
	}
	if err := h.store.SetRecurringStatus(c.UserContext(), web.SessionOf(c).User.FamilyID, id, a.status); err != nil {
		return err
	}
	return h.site.Redirect(c, "/recurring", a.flash)
}
