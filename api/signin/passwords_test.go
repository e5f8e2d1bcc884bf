package signin_test

import (
	"bufio"
	"net"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"coffer/api"
	"coffer/api/apitest"
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
	e := apitest.NewEnv(t)
	b := e.Browser(t)
	b.Get("/registrations/new")
	email := "new-" + e.Alpha.Family.ID.String()[:8] + "@example.com"
	r := b.Post("/registrations", url.Values{"family": {"The Newcomers"}, "currency": {"eur"}, "email": {email}, "password": {"correct horse battery"}})
	if r.Status != 303 {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	if r := b.Get("/"); r.Status != 200 || !strings.Contains(string(r.Body), email) {
		t.Fatalf("after registration: %d", r.Status)
	}
	u, err := e.Store.UserByEmail(t.Context(), email)
	if err != nil || u.Role != models.RoleAdmin {
		t.Fatalf("user: %+v %v", u, err)
	}
	if f, _ := e.Store.Family(t.Context(), u.FamilyID); f.Currency != "EUR" || f.Name != "The Newcomers" {
		t.Errorf("family: %+v", f)
	}
	other := e.Browser(t)
	other.Get("/registrations/new")
	if r := other.Post("/registrations", url.Values{"family": {"x"}, "currency": {"USD"}, "email": {strings.ToUpper(email)}, "password": {"correct horse battery"}}); r.Status != 422 {
		t.Errorf("duplicate email: %d", r.Status)
	}
	if r := other.Post("/registrations", url.Values{"family": {""}, "currency": {"XYZ"}, "email": {"nope"}, "password": {"short"}}); r.Status != 422 ||
		!strings.Contains(string(r.Body), "The password must be 12 to 256 characters long.") {
		t.Errorf("bad form: %d", r.Status)
	}
	off := apitest.NewEnv(t, func(o *api.Options) { o.Web.LocalLogin = false })
	ob := off.Browser(t)
	if r := ob.Get("/registrations/new"); r.Status != 403 {
		t.Errorf("registration with local login off: %d", r.Status)
	}
}

func TestPasswordReset(t *testing.T) {
	addr, mails := smtpServer(t)
	e := apitest.NewEnv(t, func(o *api.Options) {
		o.Mail = api.MailOptions{SMTPURL: "smtp://" + addr, From: "coffer <no-reply@example.com>"}
	})
	signedIn := apitest.SignedInBrowser(t, e)

	b := e.Browser(t)
	b.Get("/password/forgot")
	done := "If an account exists for that email"
	if r := b.Post("/password/forgot", url.Values{"email": {"nobody@example.com"}}); r.Status != 303 {
		t.Fatalf("unknown email: %d", r.Status)
	}
	if r := b.Get("/sessions/new"); !strings.Contains(string(r.Body), done) {
		t.Error("unknown email: no notice")
	}
	if r := b.Post("/password/forgot", url.Values{"email": {e.Alpha.User.Email}}); r.Status != 303 {
		t.Fatalf("reset request: %d", r.Status)
	}
	var mail string
	select {
	case mail = <-mails:
	case <-time.After(10 * time.Second):
		t.Fatal("no mail arrived")
	}
	link := regexp.MustCompile(`/password/reset\?token=([A-Za-z0-9_-]+)`).FindStringSubmatch(mail)
	if link == nil || !strings.Contains(mail, "To: "+e.Alpha.User.Email) {
		t.Fatalf("mail: %s", mail)
	}
	if r := b.Get("/password/reset?token=" + link[1]); r.Status != 200 {
		t.Fatalf("reset form: %d", r.Status)
	}
	if r := b.Post("/password/reset", url.Values{"token": {link[1]}, "password": {"a brand new password"}}); r.Status != 303 {
		t.Fatalf("reset: %d %s", r.Status, r.Body)
	}
	// The link works once; every session ended; the new password works.
	if r := b.Post("/password/reset", url.Values{"token": {link[1]}, "password": {"another new password"}}); r.Status != 303 || r.Header.Get("Location") != "/password/forgot" {
		t.Errorf("second use: %d %s", r.Status, r.Header.Get("Location"))
	}
	if r := signedIn.Get("/"); r.Status != 302 {
		t.Errorf("old session after reset: %d", r.Status)
	}
	if r := b.Login(e.Alpha.User.Email, "a brand new password"); r.Status != 303 {
		t.Errorf("new password: %d", r.Status)
	}
	select {
	case m := <-mails:
		t.Errorf("unexpected mail: %s", m)
	default:
	}
}

func TestChangePassword(t *testing.T) {
	e := apitest.NewEnv(t)
	other := apitest.SignedInBrowser(t, e)
	b := e.Browser(t)
	b.Login(e.Alpha.User.Email, "correct horse battery")
	b.Get("/settings/security")
	if r := b.Post("/settings/security/password", url.Values{"current_password": {"wrong one here"}, "new_password": {"a brand new password"}}); r.Status != 422 ||
		!strings.Contains(string(r.Body), "Your current password is not correct.") {
		t.Fatalf("wrong current: %d", r.Status)
	}
	if r := b.Post("/settings/security/password", url.Values{"current_password": {"correct horse battery"}, "new_password": {"a brand new password"}}); r.Status != 303 {
		t.Fatalf("change: %d %s", r.Status, r.Body)
	}
	if r := b.Get("/settings/security"); r.Status != 200 || !strings.Contains(string(r.Body), "1 browser") {
		t.Errorf("this session should remain alone: %d", r.Status)
	}
	if r := other.Get("/"); r.Status != 302 {
		t.Errorf("the other session survived: %d", r.Status)
	}
}
