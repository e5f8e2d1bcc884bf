package signin_test

import (
	"regexp"
	"strings"
	"testing"

	"coffer/api/apitest"
)

// The security screen lists where the person is signed in and signs out
// any other session, or all of them; never the one in use, never
// another person's.
func TestSecuritySessions(t *testing.T) {
	e := apitest.NewEnv(t)
	laptop := apitest.SignedInBrowser(t, e)
	phone := e.Browser(t)
	if r := phone.Login(e.Alpha.User.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("second sign-in: %d", r.Status)
	}
	page := string(laptop.Get("/settings/security").Body)
	if !strings.Contains(page, "signed in on 2 browsers") || strings.Count(page, "this browser") != 1 {
		t.Fatalf("sessions: %s", page)
	}
	ends := regexp.MustCompile(`action="(/settings/security/sessions/[0-9a-f-]{36}/end)"`).FindAllStringSubmatch(page, -1)
	if len(ends) != 1 {
		t.Fatalf("end buttons: %v", ends)
	}

	// Beta's admin cannot end alpha's session, by its id or otherwise.
	apitest.SetPassword(t, e, e.Beta.User, "correct horse battery")
	other := e.Browser(t)
	if r := other.Login(e.Beta.User.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("beta sign-in: %d", r.Status)
	}
	other.Get("/settings/security")
	if r := other.Post(ends[0][1], nil); r.Status != 404 {
		t.Fatalf("another person's session: %d", r.Status)
	}
	if r := phone.Get("/settings/security"); r.Status != 200 {
		t.Fatalf("the phone was signed out by another family: %d", r.Status)
	}

	if r := laptop.Post(ends[0][1], nil); r.Status != 303 {
		t.Fatalf("end the phone's session: %d", r.Status)
	}
	if r := phone.Get("/settings/security"); r.Status != 302 {
		t.Fatalf("the ended session still works: %d", r.Status)
	}
	if r := laptop.Get("/settings/security"); r.Status != 200 || !strings.Contains(string(r.Body), "signed in on 1 browser.") {
		t.Fatalf("after ending one: %d %s", r.Status, r.Body)
	}

	// Sign out every other session keeps this one.
	tablet := e.Browser(t)
	if r := tablet.Login(e.Alpha.User.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("third sign-in: %d", r.Status)
	}
	laptop.Get("/settings/security")
	if r := laptop.Post("/settings/security/sessions/others/end", nil); r.Status != 303 {
		t.Fatalf("end the others: %d", r.Status)
	}
	if r := tablet.Get("/settings/security"); r.Status != 302 {
		t.Fatalf("another session survived: %d", r.Status)
	}
	if r := laptop.Get("/settings/security"); r.Status != 200 {
		t.Fatalf("the session in use ended: %d", r.Status)
	}
}
