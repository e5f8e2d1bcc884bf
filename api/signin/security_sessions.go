package signin

import (
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
)

// sessionRow is one place a person is signed in, as the security screen
// lists it.
type sessionRow struct {
	ID                   uuid.UUID
	Current              bool
	Device, IP, Method   string
	SignedIn, LastActive time.Time
}

func newSessionRow(s models.Session, current uuid.UUID) sessionRow {
	r := sessionRow{ID: s.ID, Current: s.ID == current, Device: "Unknown browser", IP: "unknown address",
		SignedIn: s.CreatedAt, LastActive: s.LastSeenAt}
	if s.UserAgent != nil {
		r.Device = deviceOf(*s.UserAgent)
	}
	if s.IP != nil {
		r.IP = *s.IP
	}
	switch s.Method {
	case models.MethodSSO:
		r.Method = "single sign-on"
	case models.MethodOverride:
		r.Method = "password (administrator override)"
	default:
		r.Method = "password"
	}
	return r
}

// deviceOf names a browser and its system from a User-Agent header in a
// few words ("Firefox on Windows"); the header itself is the client's
// say-so, so the words only help a person recognise a session.
func deviceOf(ua string) string {
	browser := "A browser"
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"Chrome/", "Chrome"},
		{"Safari/", "Safari"}, {"curl/", "curl"},
	} {
		if strings.Contains(ua, b.token) {
			browser = b.name
			break
		}
	}
	for _, s := range []struct{ token, name string }{
		{"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Android", "Android"}, {"Windows", "Windows"},
		{"Mac OS X", "macOS"}, {"CrOS", "ChromeOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, s.token) {
			return browser + " on " + s.name
		}
	}
	return browser
}

// endSession signs one of the person's other sessions out.
func (h *Handler) endSession(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	s := web.SessionOf(c)
	if id == s.ID {
		return h.site.Redirect(c, "/settings/security", "This is the session you are using; sign out to end it.")
	}
	if err := h.store.DeleteUserSession(c.UserContext(), s.FamilyID, s.UserID, id); err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/security", "That session is signed out.")
}

// endOtherSessions signs every session of the person out but this one.
func (h *Handler) endOtherSessions(c *fiber.Ctx) error {
	s := web.SessionOf(c)
	if err := h.store.DeleteUserSessions(c.UserContext(), s.FamilyID, s.UserID, s.ID); err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/security", "Every other session is signed out.")
}
