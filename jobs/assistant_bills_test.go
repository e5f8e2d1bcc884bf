package jobs_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"coffer/jobs/assistant/assistanttest"
	"coffer/models"
	"coffer/models/civil"
)

// TestAssistantAnswersUpcomingBills: "what is due?" is answered with the
// figures get_upcoming_bills gave the model (the fake OpenAI peer), and
// "will we make it?" with get_forecast's lowest point.
func TestAssistantAnswersUpcomingBills(t *testing.T) {
	e := newAssistant(t, func(n int, r *assistanttest.Request) assistanttest.Reply {
		last := r.Last()
		var question string
		for _, m := range r.Messages {
			if m.Role == "user" {
				question = m.Text()
			}
		}
		if last.Role != "tool" {
			if question == "will we make it?" {
				return assistanttest.Reply{Calls: []assistanttest.Call{{Name: "get_forecast", Arguments: `{"days": 20}`}}}
			}
			return assistanttest.Reply{Calls: []assistanttest.Call{{Name: "get_upcoming_bills", Arguments: `{"days": 30}`}}}
		}
		var res struct {
			Upcoming []struct {
				Name, Date      string
				FormattedAmount string `json:"formatted_amount"`
			}
			Lowest struct{ Date, Balance string }
		}
		if err := json.Unmarshal([]byte(last.Text()), &res); err != nil {
			return assistanttest.Reply{Content: "tool result unreadable: " + err.Error()}
		}
		if len(res.Upcoming) > 0 {
			u := res.Upcoming[0]
			return assistanttest.Reply{Content: u.Name + " of " + u.FormattedAmount + " on " + u.Date + "."}
		}
		return assistanttest.Reply{Content: "Lowest " + res.Lowest.Balance + " on " + res.Lowest.Date + "."}
	})
	e.setBalance(t, 2_000_0000, "Salary") // $2,000.00
	due := time.Now().UTC().AddDate(0, 0, 3)
	f := e.fam
	if err := e.store.CreateRecurringTransaction(context.Background(), &models.RecurringTransaction{FamilyID: f.Family.ID,
		AccountID: &f.Account.ID, Name: "Rent", Amount: 1_500_0000, Currency: "USD", Cadence: "monthly", ExpectedDay: due.Day(),
		NextDate: civil.DateOf(due), Status: models.RecurringActive}); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"what is due?":     "Rent of $1,500.00 on " + string(civil.DateOf(due)) + ".",
		"will we make it?": "Lowest $500.00 on " + string(civil.DateOf(due)) + ".",
	} {
		c, m := e.ask(t, q)
		if err := e.reply(c, m); err != nil {
			t.Fatal(err)
		}
		ms, _ := e.messages(t, c)
		if len(ms) != 2 || ms[1].Content != want {
			t.Fatalf("%q: answer %q, want %q", q, ms[len(ms)-1].Content, want)
		}
	}
}
