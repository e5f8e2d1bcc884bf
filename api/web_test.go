package api_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"coffer/api"
	"coffer/models"
	"coffer/models/secret"
)

// browser keeps cookies between requests to the app, like a browser would.
type browser struct {
	t       *testing.T
	ip      string // sent as X-Forwarded-For, so tests never share lockout counters
	e       *env
	cookies map[string]string
	csrf    string // the token of the last form seen
}

func (e *env) browser(t *testing.T) *browser {
	ip := fmt.Sprintf("10.%d.%d.%d", rand.IntN(256), rand.IntN(256), rand.IntN(254)+1)
	return &browser{t: t, e: e, ip: ip, cookies: map[string]string{}}
}

var csrfField = regexp.MustCompile(`name="csrf-token" content="([^"]+)"`)

func (b *browser) send(method, path string, form url.Values, header map[string]string) response {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("X-Forwarded-For", b.ip)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if host := header["Host"]; host != "" {
		req.Host = host
	}
	for k, v := range b.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := b.e.app.Test(req, -1)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	for _, c := range resp.Cookies() {
		if c.MaxAge < 0 || c.Value == "" {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c.Value
		}
	}
	if m := csrfField.FindSubmatch(out); m != nil {
		b.csrf = string(m[1])
	}
	if resp.StatusCode == 500 {
		b.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
	r := response{status: resp.StatusCode, header: resp.Header, body: out}
	noLeak(b.t, r)
	return r
}

func (b *browser) get(path string) response { b.t.Helper(); return b.send("GET", path, nil, nil) }

// post submits a form with the CSRF token of the last page.
func (b *browser) post(path string, form url.Values) response {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if form.Get("csrf_token") == "" {
		form.Set("csrf_token", b.csrf)
	}
	return b.send("POST", path, form, nil)
}

func (b *browser) login(email, password string) response {
	b.t.Helper()
	b.get("/sessions/new")
	return b.post("/sessions", url.Values{"email": {email}, "password": {password}, "return_to": {"/settings/api_keys"}})
}

func setPassword(t *testing.T, e *env, u *models.User, pw string) {
	t.Helper()
	setPasswordWith(t, e, u, pw, secret.Argon2Params{MemoryKiB: 64, Time: 1, Threads: 1})
}

// setPasswordWith gives u the password pw, hashed with p.
func setPasswordWith(t *testing.T, e *env, u *models.User, pw string, p secret.Argon2Params) {
	t.Helper()
	h, err := secret.HashPassword(pw, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.DB().NewUpdate().Table("users").Set("password_hash = ?", h).Where("id = ?", u.ID).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func auditCount(t *testing.T, e *env, event, reason string) int {
	t.Helper()
	logs, _, err := e.store.AuditLogs(t.Context(), models.AuditFilter{EventType: event}, models.Page{Number: 1, Size: 100})
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

func TestSignInCreateKeyAndUseIt(t *testing.T) {
	e := newEnv(t)
	setPassword(t, e, e.alpha.User, "correct horse battery")
	b := e.browser(t)

	if r := b.get("/"); r.status != 302 || r.header.Get("Location") != "/sessions/new?return_to=%2F" {
		t.Fatalf("anonymous home: %d %s", r.status, r.header.Get("Location"))
	}
	if r := b.get("/sessions/new"); r.status != 200 || !strings.Contains(string(r.body), `name="password"`) {
		t.Fatalf("login page: %d", r.status)
	}
	// No CSRF token: refused, nothing happens.
	r := b.send("POST", "/sessions", url.Values{"email": {e.alpha.User.Email}, "password": {"correct horse battery"}}, nil)
	if r.status != 403 || !strings.Contains(string(r.body), "Invalid or missing CSRF token") {
		t.Fatalf("no csrf: %d %s", r.status, r.body)
	}
	// A form posted from another site is refused even with a token.
	r = b.send("POST", "/sessions", url.Values{"email": {e.alpha.User.Email}, "password": {"correct horse battery"}, "csrf_token": {b.csrf}},
		map[string]string{"Origin": "https://evil.example"})
	if r.status != 403 {
		t.Fatalf("cross-origin: %d", r.status)
	}

	r = b.login(e.alpha.User.Email, "wrong password!")
	if r.status != 422 || !strings.Contains(string(r.body), "Invalid email or password.") {
		t.Fatalf("wrong password: %d %s", r.status, r.body)
	}
	if n := auditCount(t, e, models.EventLoginFailed, "bad_credentials"); n != 1 {
		t.Errorf("%d bad_credentials records", n)
	}
	if r := b.login("a\x00b@example.com", "whatever it is"); r.status != 422 {
		t.Errorf("NUL in the email: %d", r.status)
	}

	r = b.login(strings.ToUpper(e.alpha.User.Email), "correct horse battery")
	if r.status != 303 || r.header.Get("Location") != "/settings/api_keys" {
		t.Fatalf("login: %d %s %s", r.status, r.header.Get("Location"), r.body)
	}
	if auditCount(t, e, models.EventLogin, "") != 1 {
		t.Error("no login record")
	}
	if r := b.get("/"); r.status != 200 || !strings.Contains(string(r.body), e.alpha.User.Email) {
		t.Fatalf("home: %d", r.status)
	}

	// Create a key on the screen, then use it on the API.
	b.get("/settings/api_keys")
	r = b.post("/settings/api_keys", url.Values{"name": {"script"}, "scope": {"read_write"}, "expires_in_days": {"30"}})
	if r.status != 201 {
		t.Fatalf("create key: %d %s", r.status, r.body)
	}
	key := regexp.MustCompile(`id="new-key-value">(cof_[0-9a-f]{64})<`).FindSubmatch(r.body)
	if key == nil {
		t.Fatalf("key not shown: %s", r.body)
	}
	if api := e.do("GET", "/api/v1/accounts", string(key[1]), nil); api.status != 200 {
		t.Fatalf("new key on the API: %d %s", api.status, api.body)
	}
	if r := b.post("/settings/api_keys", url.Values{"name": {""}, "scope": {"admin"}}); r.status != 422 {
		t.Errorf("bad key form: %d", r.status)
	}
	// The list shows the key without its secret; revoking it stops it.
	list := b.get("/settings/api_keys")
	if strings.Contains(string(list.body), string(key[1])) {
		t.Fatal("the list shows the whole key")
	}
	keys, _ := e.store.APIKeys(t.Context(), e.alpha.Family.ID, e.alpha.User.ID)
	var id string
	for _, k := range keys {
		if k.Name == "script" {
			id = k.ID.String()
		}
	}
	if r := b.post("/settings/api_keys/"+id+"/revoke", nil); r.status != 303 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	wantError(t, e.do("GET", "/api/v1/accounts", string(key[1]), nil), 401, "unauthorized")
	// Another user's key cannot be revoked from this session.
	other, _ := e.store.APIKeys(t.Context(), e.beta.Family.ID, e.beta.User.ID)
	if r := b.post("/settings/api_keys/"+other[0].ID.String()+"/revoke", nil); r.status != 404 {
		t.Errorf("revoke another family's key: %d", r.status)
	}

	// Suspension ends the session and the keys at once.
	if _, err := e.store.DB().NewUpdate().Table("users").Set("status = 'suspended'").Where("id = ?", e.alpha.User.ID).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r := b.get("/"); r.status != 302 {
		t.Errorf("suspended user's session still works: %d", r.status)
	}
	m := wantError(t, e.do("GET", "/api/v1/accounts", e.alpha.Key, nil), 401, "unauthorized")
	if m["message"] != "Account has been deactivated" {
		t.Errorf("message %v", m["message"])
	}
	if r := b.login(e.alpha.User.Email, "correct horse battery"); r.status != 403 || !strings.Contains(string(r.body), "suspended") {
		t.Errorf("suspended login: %d", r.status)
	}
}

func TestLogout(t *testing.T) {
	e := newEnv(t)
	b := signedInBrowser(t, e)
	b.get("/")
	if r := b.post("/sessions/logout", nil); r.status != 303 {
		t.Fatalf("logout: %d", r.status)
	}
	if r := b.get("/sessions/new"); !strings.Contains(string(r.body), "You have signed out.") {
		t.Error("no signed-out message")
	}
	if r := b.get("/"); r.status != 302 {
		t.Errorf("after logout: %d", r.status)
	}
	if n, _ := e.store.CountUserSessions(t.Context(), e.alpha.User.ID); n != 0 {
		t.Errorf("%d sessions left", n)
	}
	if auditCount(t, e, models.EventLogout, "") != 1 {
		t.Error("no logout record")
	}
}

func TestLockout(t *testing.T) {
	e := newEnv(t)
	setPassword(t, e, e.alpha.User, "correct horse battery")
	b := e.browser(t)
	for i := 0; i < 5; i++ {
		if r := b.login(e.alpha.User.Email, "wrong password!"); r.status != 422 {
			t.Fatalf("failure %d: %d", i+1, r.status)
		}
	}
	r := b.login(e.alpha.User.Email, "correct horse battery")
	if r.status != 429 || !strings.Contains(string(r.body), "Too many failed sign-in attempts. Try again in 15 minutes.") {
		t.Fatalf("6th attempt: %d %s", r.status, r.body)
	}
	if auditCount(t, e, models.EventLoginFailed, "locked") != 1 {
		t.Error("no locked record")
	}
	// The failure that reached the limit restarted the window: the lockout
	// lasts all of it.
	var keyTTL time.Duration
	for _, k := range e.rdb.Keys(context.Background(), "login:fail:acct:*").Val() {
		if ttl := e.rdb.PTTL(context.Background(), k).Val(); ttl > keyTTL {
			keyTTL = ttl
		}
	}
	if keyTTL < 14*time.Minute {
		t.Errorf("lockout lasts %v", keyTTL)
	}
	// Another account from the same address is not locked yet.
	setPassword(t, e, e.beta.User, "correct horse battery")
	if r := b.login(e.beta.User.Email, "correct horse battery"); r.status != 303 {
		t.Errorf("other account: %d", r.status)
	}
	t.Cleanup(func() { e.rdb.Del(context.Background(), "login:fail:ip:"+b.ip) })
}

func TestLocalLoginPolicies(t *testing.T) {
	t.Run("disabled", func(t *testing.T) {
		e := newEnv(t, func(o *api.Options) { o.Web.LocalLogin = false })
		setPassword(t, e, e.alpha.User, "correct horse battery")
		b := e.browser(t)
		if r := b.get("/sessions/new"); strings.Contains(string(r.body), `name="password"`) {
			t.Error("the password form is shown")
		}
		r := b.login(e.alpha.User.Email, "correct horse battery")
		if r.status != 403 || !strings.Contains(string(r.body), "Password sign-in is disabled. Use single sign-on.") {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if auditCount(t, e, models.EventLoginFailed, "local_login_disabled") != 1 {
			t.Error("not audited")
		}
	})
	t.Run("override", func(t *testing.T) {
		e := newEnv(t, func(o *api.Options) { o.Web.LocalLogin = false; o.Web.AdminOverride = true })
		setPassword(t, e, e.alpha.User, "correct horse battery")
		b := e.browser(t)
		if r := b.get("/sessions/new"); !strings.Contains(string(r.body), "Administrator sign-in") {
			t.Error("no administrator form")
		}
		// A wrong password says the same for everyone; the role is checked after it.
		if r := b.login(e.alpha.User.Email, "wrong password!"); r.status != 422 {
			t.Errorf("wrong password: %d", r.status)
		}
		if r := b.login(e.alpha.User.Email, "correct horse battery"); r.status != 403 ||
			!strings.Contains(string(r.body), "Password sign-in is limited to super administrators.") {
			t.Errorf("admin (not super): %d", r.status)
		}
		if _, err := e.store.DB().NewUpdate().Table("users").Set("role = 'super_admin'").Where("id = ?", e.alpha.User.ID).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		if r := b.login(e.alpha.User.Email, "correct horse battery"); r.status != 303 {
			t.Errorf("super admin: %d", r.status)
		}
		logs, _, _ := e.store.AuditLogs(t.Context(), models.AuditFilter{EventType: models.EventLogin}, models.Page{Number: 1, Size: 5})
		if len(logs) != 1 || logs[0].Metadata["override"] != true {
			t.Errorf("override login record: %+v", logs)
		}
	})
}
