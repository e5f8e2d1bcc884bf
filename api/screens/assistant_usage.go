package screens

import (
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/jobs/assistant"
	"coffer/models"
)

// usageDays is how far back the usage screen lists chats.
const usageDays = 30

type usageData struct {
	// TodayKnown is false when the day's count could not be read (Redis
	// away): the page still shows the chats.
	TodayKnown  bool
	TokensToday int
	DailyTokens int // 0: no limit
	Percent     int // of the daily budget used, at most 100
	Since       time.Time
	Chats       []models.ChatUsage
	Total       models.ChatUsage // the sums of Chats
}

// assistantUsage shows a family's admins what the assistant cost: tokens
// of today against the daily budget, and of each chat over the last 30
// days, whoever owns it.
func (h *Handler) assistantUsage(c *fiber.Ctx) error {
	ctx, u := c.UserContext(), web.SessionOf(c).User
	now := h.now()
	d := usageData{DailyTokens: h.assistantDailyTokens, Since: now.UTC().AddDate(0, 0, -usageDays)}
	var err error
	if d.TokensToday, err = assistant.Usage(ctx, h.redis, u.FamilyID, now); err != nil {
		h.log.Warn("assistant usage", "request_id", httperr.RequestID(c), "error", err)
	} else {
		d.TodayKnown = true
	}
	if d.DailyTokens > 0 {
		d.Percent = min(100, int(int64(d.TokensToday)*100/int64(d.DailyTokens)))
	}
	if d.Chats, err = h.store.AssistantUsage(ctx, u.FamilyID, d.Since); err != nil {
		return err
	}
	for _, ch := range d.Chats {
		d.Total.Answers += ch.Answers
		d.Total.PromptTokens += ch.PromptTokens
		d.Total.CompletionTokens += ch.CompletionTokens
	}
	return h.pages.Render(c, fiber.StatusOK, "assistant_usage", web.Page{Nav: "chats", Title: "Assistant usage", Data: d})
}

// thousands writes n with a comma between each group of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
