package api_test

import (
	"bufio"
	"net"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"coffer/api"
	"coffer/models"
)

// smtpServer is a minimal SMTP peer on loopback that hands every message
// it receives to a channel.
func smtpServer(t *testing.T) (addr string, mails <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan string, 10)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func(conn net.Conn) {
				defer conn.Close()
				r := bufio.NewReader(conn)
				say := func(s string) { _, _ = conn.Write([]byte(s + "\r\n")) }
				say("220 test ESMTP")
				var data strings.Builder
				inData := false
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if inData {
						if line == ".\r\n" {
							inData = false
							ch <- data.String()
							say("250 OK")
							continue
						}
						data.WriteString(line)
						continue
					}
					switch cmd := strings.ToUpper(strings.TrimSpace(line)); {
					case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
						say("250 test")
					case cmd == "DATA":
						inData = true
						say("354 go ahead")
					case cmd == "QUIT":
						say("221 bye")
						return
					default:
						say("250 OK")
					}
				}
			}(conn)
		}
	}()
	return ln.Addr().String(), ch
}

func TestRegistration(t *testing.T) {
	e := newEnv(t)
	b := e.browser(t)
	b.get("/registrations/new")
	email := "new-" + e.alpha.Family.ID.String()[:8] + "@example.com"
	r := b.post("/registrations", url.Values{"family": {"The Newcomers"}, "currency": {"eur"}, "email": {email}, "password": {"correct horse battery"}})
	if r.status != 303 {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	if r := b.get("/"); r.status != 200 || !strings.Contains(string(r.body), email) {
		t.Fatalf("after registration: %d", r.status)
	}
	u, err := e.store.UserByEmail(t.Context(), email)
	if err != nil || u.Role != models.RoleAdmin {
		t.Fatalf("user: %+v %v", u, err)
	}
	if f, _ := e.store.Family(t.Context(), u.FamilyID); f.Currency != "EUR" || f.Name != "The Newcomers" {
		t.Errorf("family: %+v", f)
	}
	other := e.browser(t)
	other.get("/registrations/new")
	if r := other.post("/registrations", url.Values{"family": {"x"}, "currency": {"USD"}, "email": {strings.ToUpper(email)}, "password": {"correct horse battery"}}); r.status != 422 {
		t.Errorf("duplicate email: %d", r.status)
	}
	if r := other.post("/registrations", url.Values{"family": {""}, "currency": {"XYZ"}, "email": {"nope"}, "password": {"short"}}); r.status != 422 ||
		!strings.Contains(string(r.body), "The password must be 12 to 256 characters long.") {
		t.Errorf("bad form: %d", r.status)
	}
	off := newEnv(t, func(o *api.Options) { o.Web.LocalLogin = false })
	ob := off.browser(t)
	if r := ob.get("/registrations/new"); r.status != 403 {
		t.Errorf("registration with local login off: %d", r.status)
	}
}

func TestPasswordReset(t *testing.T) {
	addr, mails := smtpServer(t)
	e := newEnv(t, func(o *api.Options) {
		o.Mail = api.MailOptions{SMTPURL: "smtp://" + addr, From: "coffer <no-reply@example.com>"}
	})
	signedIn := signedInBrowser(t, e)

	b := e.browser(t)
	b.get("/password/forgot")
	done := "If an account exists for that email"
	if r := b.post("/password/forgot", url.Values{"email": {"nobody@example.com"}}); r.status != 303 {
		t.Fatalf("unknown email: %d", r.status)
	}
	if r := b.get("/sessions/new"); !strings.Contains(string(r.body), done) {
		t.Error("unknown email: no notice")
	}
	if r := b.post("/password/forgot", url.Values{"email": {e.alpha.User.Email}}); r.status != 303 {
		t.Fatalf("reset request: %d", r.status)
	}
	var mail string
	select {
	case mail = <-mails:
	case <-time.After(10 * time.Second):
		t.Fatal("no mail arrived")
	}
	link := regexp.MustCompile(`/password/reset\?token=([A-Za-z0-9_-]+)`).FindStringSubmatch(mail)
	if link == nil || !strings.Contains(mail, "To: "+e.alpha.User.Email) {
		t.Fatalf("mail: %s", mail)
	}
	if r := b.get("/password/reset?token=" + link[1]); r.status != 200 {
		t.Fatalf("reset form: %d", r.status)
	}
	if r := b.post("/password/reset", url.Values{"token": {link[1]}, "password": {"a brand new password"}}); r.status != 303 {
		t.Fatalf("reset: %d %s", r.status, r.body)
	}
	// The link works once; every session ended; the new password works.
	if r := b.post("/password/reset", url.Values{"token": {link[1]}, "password": {"another new password"}}); r.status != 303 || r.header.Get("Location") != "/password/forgot" {
		t.Errorf("second use: %d %s", r.status, r.header.Get("Location"))
	}
	if r := signedIn.get("/"); r.status != 302 {
		t.Errorf("old session after reset: %d", r.status)
	}
	if r := b.login(e.alpha.User.Email, "a brand new password"); r.status != 303 {
		t.Errorf("new password: %d", r.status)
	}
	select {
	case m := <-mails:
		t.Errorf("unexpected mail: %s", m)
	default:
	}
}

func TestChangePassword(t *testing.T) {
	e := newEnv(t)
	other := signedInBrowser(t, e)
	b := e.browser(t)
	b.login(e.alpha.User.Email, "correct horse battery")
	b.get("/settings/security")
	if r := b.post("/settings/security/password", url.Values{"current_password": {"wrong one here"}, "new_password": {"a brand new password"}}); r.status != 422 ||
		!strings.Contains(string(r.body), "Your current password is not correct.") {
		t.Fatalf("wrong current: %d", r.status)
	}
	if r := b.post("/settings/security/password", url.Values{"current_password": {"correct horse battery"}, "new_password": {"a brand new password"}}); r.status != 303 {
		t.Fatalf("change: %d %s", r.status, r.body)
	}
	if r := b.get("/settings/security"); r.status != 200 || !strings.Contains(string(r.body), "1 browser") {
		t.Errorf("this session should remain alone: %d", r.status)
	}
	if r := other.get("/"); r.status != 302 {
		t.Errorf("the other session survived: %d", r.status)
	}
}
