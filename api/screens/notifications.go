package screens

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"coffer/api/web"
	"coffer/models"
)

// notificationsData is the notifications form: what the person chose, as
// typed.
type notificationsData struct {
	Form *form
}

// notificationChecks are the form's checkboxes, by field name.
var notificationChecks = []string{"bill_due", "bill_missed", "large_transaction", "budget_exceeded", "connection_attention", "weekly_digest"}

// notifications shows what the signed-in person is emailed about.
func (h *Handler) notifications(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	p, err := h.store.NotificationPreference(c.UserContext(), u.FamilyID, u.ID)
	if err != nil {
		return err
	}
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	on := map[string]bool{"bill_due": p.BillDue, "bill_missed": p.BillMissed, "large_transaction": p.LargeTransaction,
		"budget_exceeded": p.BudgetExceeded, "connection_attention": p.ConnectionAttention, "weekly_digest": p.WeeklyDigest}
	for _, name := range notificationChecks {
		if on[name] {
			f.Values[name] = "on"
		}
	}
	f.Values["bill_due_days"] = strconv.Itoa(p.BillDueDays)
	if p.LargeAmount > 0 {
		f.Values["large_amount"] = f.amountValue(p.LargeAmount)
	}
	return h.notificationsPage(c, fiber.StatusOK, f)
}

func (h *Handler) notificationsPage(c *fiber.Ctx, status int, f *form) error {
	return h.pages.Render(c, status, "notifications", web.Page{Title: "Notifications",
		Data: notificationsData{Form: f}})
}

// saveNotifications stores the person's choices.
func (h *Handler) saveNotifications(c *fiber.Ctx) error {
	u := web.SessionOf(c).User
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	checked := func(name string) bool {
		if f.value(name) == "" {
			delete(f.Values, name)
			return false
		}
		f.Values[name] = "on"
		return true
	}
	p := &models.NotificationPreference{FamilyID: u.FamilyID, UserID: u.ID, BillDue: checked("bill_due"),
		BillMissed: checked("bill_missed"), LargeTransaction: checked("large_transaction"), BudgetExceeded: checked("budget_exceeded"),
		ConnectionAttention: checked("connection_attention"), WeeklyDigest: checked("weekly_digest")}
	days, err := strconv.Atoi(f.value("bill_due_days"))
	if err != nil || days < 1 || days > 30 {
		f.fail("bill_due_days", "Days before a bill must be a whole number from 1 to 30.")
	}
	p.BillDueDays = days
	if a, ok := f.amount("large_amount", "Amount", p.LargeTransaction); ok {
		p.LargeAmount = a
		if a == 0 && p.LargeTransaction {
			f.fail("large_amount", "Amount must be more than zero.")
		}
	}
	if !f.ok() {
		return h.notificationsPage(c, fiber.StatusUnprocessableEntity, f)
	}
	if err := h.store.SaveNotificationPreference(c.UserContext(), p); err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/notifications", "Your notification choices are saved.")
}
