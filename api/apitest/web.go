package apitest

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"coffer/api/web"
	"coffer/models"
	"coffer/models/secret"
)

// Browser keeps cookies between requests to the app, like a browser would.
type Browser struct {
	T       *testing.T
	IP      string // sent as X-Forwarded-For, so tests never share lockout counters
	E       *Env
	Cookies map[string]string
	CSRF    string // the token of the last form seen
}

func (e *Env) Browser(t *testing.T) *Browser {
	ip := fmt.Sprintf("10.%d.%d.%d", rand.IntN(256), rand.IntN(256), rand.IntN(254)+1)
	return &Browser{T: t, E: e, IP: ip, Cookies: map[string]string{}}
}

var csrfField = regexp.MustCompile(`name="csrf-token" content="([^"]+)"`)

func (b *Browser) Send(method, path string, form url.Values, header map[string]string) Response {
	b.T.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("X-Forwarded-For", b.IP)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if host := header["Host"]; host != "" {
		req.Host = host
	}
	for k, v := range b.Cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := b.E.App.Test(req, -1)
	if err != nil {
		b.T.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	before := b.Cookies["csrf"] + " " + b.Cookies["session"]
	for _, c := range resp.Cookies() {
		if c.MaxAge < 0 || c.Value == "" {
			delete(b.Cookies, c.Name)
		} else {
			b.Cookies[c.Name] = c.Value
		}
	}
	if m := csrfField.FindSubmatch(out); m != nil {
		b.CSRF = string(m[1])
	} else if b.Cookies["csrf"]+" "+b.Cookies["session"] != before {
		// A sign-in or sign-out answers a redirect and changes the
		// cookies the form token is bound to: the token is the one the
		// next page, which the test does not load, would carry.
		b.CSRF = web.FormToken(b.E.Opts.Web.Secret, b.Cookies["csrf"], b.Cookies["session"])
	}
	if resp.StatusCode == 500 {
		b.T.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
	r := Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
	NoLeak(b.T, r)
	return r
}

func (b *Browser) Get(path string) Response { b.T.Helper(); return b.Send("GET", path, nil, nil) }

// Post submits a form with the CSRF token of the last page.
func (b *Browser) Post(path string, form url.Values) Response {
	b.T.Helper()
	if form == nil {
		form = url.Values{}
	}
	if form.Get("csrf_token") == "" {
		form.Set("csrf_token", b.CSRF)
	}
	return b.Send("POST", path, form, nil)
}

func (b *Browser) Login(email, password string) Response {
	b.T.Helper()
	b.Get("/sessions/new")
	return b.Post("/sessions", url.Values{"email": {email}, "password": {password}, "return_to": {"/settings/api_keys"}})
}

func SetPassword(t *testing.T, e *Env, u *models.User, pw string) {
	t.Helper()
	SetPasswordWith(t, e, u, pw, secret.Argon2Params{MemoryKiB: 64, Time: 1, Threads: 1})
}

// SetPasswordWith gives u the password pw, hashed with p.
func SetPasswordWith(t *testing.T, e *Env, u *models.User, pw string, p secret.Argon2Params) {
	t.Helper()
	h, err := secret.HashPassword(pw, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.DB().NewUpdate().Table("users").Set("password_hash = ?", h).Where("id = ?", u.ID).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func AuditCount(t *testing.T, e *Env, event, reason string) int {
	t.Helper()
	logs, _, err := e.Store.AuditLogs(t.Context(), models.AuditFilter{EventType: event}, models.Page{Number: 1, Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range logs {
		if reason == "" || l.Metadata["reason"] == reason {
			n++
		}
	}
	return n
}

// SignedInBrowser is a browser signed in as the alpha family's admin.
func SignedInBrowser(t *testing.T, e *Env) *Browser {
	t.Helper()
	SetPassword(t, e, e.Alpha.User, "correct horse battery")
	b := e.Browser(t)
	if r := b.Login(e.Alpha.User.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("login: %d %s", r.Status, r.Body)
	}
	return b
}

// UploadFile posts a multipart form with the CSRF token of the last page,
// the fields and a file, with the browser's cookies.
func (b *Browser) UploadFile(path string, fields map[string]string, filename string, file []byte) Response {
	b.T.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("csrf_token", b.CSRF)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	fw, _ := w.CreateFormFile("file", filename)
	_, _ = fw.Write(file)
	_ = w.Close()
	req := httptest.NewRequest("POST", path, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("X-Forwarded-For", b.IP)
	for k, v := range b.Cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := b.E.App.Test(req, -1)
	if err != nil {
		b.T.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == 500 {
		b.T.Fatalf("POST %s: 500 %s", path, out)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
}
