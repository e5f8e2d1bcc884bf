package jobs

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"coffer/jobs/mail"
	"coffer/models"
	"coffer/models/money"
)

// composeNotification writes an outbox row's email from its facts: plain
// text whose links are absolute (APP_URL) and open screens that work
// without JavaScript.
func (h *Handlers) composeNotification(n *models.Notification) (mail.Message, error) {
	var d map[string]any
	if err := json.Unmarshal([]byte(n.Data), &d); err != nil {
		return mail.Message{}, err
	}
	link := func(path string) string { return strings.TrimRight(h.AppURL, "/") + path }
	var subject string
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	switch n.Kind {
	case models.NotifyBillDue:
		subject = fmt.Sprintf("Bill due %s: %s", str(d, "due_date"), str(d, "name"))
		line("%s, %s, is due on %s.", str(d, "name"), amount(d, "amount", str(d, "currency")), str(d, "due_date"))
		line("")
		line("Your recurring bills: %s", link("/recurring"))
	case models.NotifyBillMissed:
		name := cmp.Or(str(d, "name"), "A bill")
		subject = "Bill missed: " + name
		line("%s was expected%s and has not come in.", name, prefixed(" on ", cmp.Or(str(d, "expected_date"), str(d, "due_date"), str(d, "date"))))
		if str(d, "amount") != "" {
			line("Expected amount: %s", amount(d, "amount", str(d, "currency")))
		}
		line("")
		line("Your recurring bills: %s", link("/recurring"))
	case models.NotifyLargeTransaction:
		subject = fmt.Sprintf("Large transaction: %s, %s", amount(d, "amount", str(d, "currency")), str(d, "name"))
		line("%s: %s on %s.", str(d, "name"), amount(d, "amount", str(d, "currency")), str(d, "date"))
		if acc, ok := d["account"].(map[string]any); ok {
			line("Account: %s", str(acc, "name"))
		}
		if cat, ok := d["category"].(map[string]any); ok {
			line("Category: %s", str(cat, "name"))
		}
		line("")
		line("See it: %s", link("/transactions/"+str(d, "id")+"/edit"))
	case models.NotifyBudgetExceeded:
		subject = fmt.Sprintf("Over budget: %s", str(d, "category"))
		cur := str(d, "currency")
		line("%s has spent %s this month, over its budget of %s.", str(d, "category"), amount(d, "spent", cur), amount(d, "budgeted", cur))
		line("")
		line("Your budget: %s", link("/budgets?month="+str(d, "month")))
	case models.NotifyConnection:
		subject = fmt.Sprintf("Bank connection needs attention: %s", str(d, "name"))
		line("The bank connection %s could not sync.", str(d, "name"))
		if m := cmp.Or(str(d, "status_message"), str(d, "error")); m != "" {
			line("%s", m)
		}
		line("")
		line("Look at it, reconnect or sync again: %s", link("/settings/connections"))
	case models.NotifyDigest:
		subject = fmt.Sprintf("Your week, %s to %s", str(d, "from"), str(d, "to"))
		h.writeDigest(&b, d, link)
	case models.NotifyWebhookDisabled:
		subject = "Webhook switched off: " + str(d, "url")
		line("Every delivery to the webhook endpoint %s failed for three days, so it was switched off.", str(d, "url"))
		if desc := str(d, "description"); desc != "" {
			line("Description: %s", desc)
		}
		line("")
		line("Fix the receiver, then switch it on again: %s", link("/settings/webhooks/"+str(d, "endpoint_id")))
	default:
		return mail.Message{}, fmt.Errorf("unknown kind %q", n.Kind)
	}
	line("")
	line("--")
	if n.Kind == models.NotifyWebhookDisabled {
		line("You are told because you administer this family on coffer.")
	} else {
		line("Choose what coffer emails you about: %s", link("/settings/notifications"))
	}
	return mail.Message{Subject: subject, Body: b.String()}, nil
}

// writeDigest is the weekly digest's body.
func (h *Handlers) writeDigest(b *strings.Builder, d map[string]any, link func(string) string) {
	line := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	cur := str(d, "currency")
	line("Spending from %s to %s: %s", str(d, "from"), str(d, "to"), amount(d, "spent", cur))
	cats, _ := d["categories"].([]any)
	for _, c := range cats {
		c, _ := c.(map[string]any)
		s := fmt.Sprintf("  %s: %s", str(c, "category"), amount(c, "spent", cur))
		if str(c, "budgeted_month") != "" {
			s += fmt.Sprintf(" (this month %s of %s budgeted)", amount(c, "spent_month", cur), amount(c, "budgeted_month", cur))
		}
		line("%s", s)
	}
	line("Budget: %s", link("/budgets?month="+str(d, "to")[:min(7, len(str(d, "to")))]))
	line("")
	bills, _ := d["bills"].([]any)
	if len(bills) == 0 {
		line("No bills due in the coming week.")
	} else {
		line("Bills due in the coming week:")
		for _, x := range bills {
			x, _ := x.(map[string]any)
			line("  %s  %s: %s", str(x, "due_date"), str(x, "name"), amount(x, "amount", str(x, "currency")))
		}
	}
	line("Recurring bills: %s", link("/recurring"))
	line("")
	sug, splits := str(d, "suggested_recurring"), str(d, "splits_to_review")
	if sug == "0" && splits == "0" {
		line("Nothing waits for your review.")
	} else {
		line("Waiting for your review:")
		if sug != "0" {
			line("  %s recurring transactions suggested: %s", sug, link("/recurring"))
		}
		if splits != "0" {
			line("  %s split transactions whose amount changed: %s", splits, link("/transactions"))
		}
	}
}

// str is d[key] as text ("" when missing).
func str(d map[string]any, key string) string {
	switch v := d[key].(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return fmt.Sprint(int64(v))
	default:
		return fmt.Sprint(v)
	}
}

// amount is d[key], a decimal string, as display money in cur.
func amount(d map[string]any, key, cur string) string {
	a, err := money.ParseAmount(str(d, key))
	c, ok := money.LookupCurrency(cur)
	if err != nil || !ok {
		return strings.TrimSpace(str(d, key) + " " + cur)
	}
	return a.Format(c)
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}
