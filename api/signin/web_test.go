package signin_test

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/models"
)

func TestSignInCreateKeyAndUseIt(t *testing.T) {
	e := apitest.NewEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	b := e.Browser(t)

	if r := b.Get("/"); r.Status != 302 || r.Header.Get("Location") != "/sessions/new?return_to=%2F" {
		t.Fatalf("anonymous home: %d %s", r.Status, r.Header.Get("Location"))
	}
	if r := b.Get("/sessions/new"); r.Status != 200 || !strings.Contains(string(r.Body), `name="password"`) {
		t.Fatalf("login page: %d", r.Status)
	}
	// No CSRF token: refused, nothing happens.
	r := b.Send("POST", "/sessions", url.Values{"email": {e.Alpha.User.Email}, "password": {"correct horse battery"}}, nil)
	if r.Status != 403 || !strings.Contains(string(r.Body), "Invalid or missing CSRF token") {
		t.Fatalf("no csrf: %d %s", r.Status, r.Body)
	}
	// A form posted from another site is refused even with a token.
	r = b.Send("POST", "/sessions", url.Values{"email": {e.Alpha.User.Email}, "password": {"correct horse battery"}, "csrf_token": {b.CSRF}},
		map[string]string{"Origin": "https://evil.example"})
	if r.Status != 403 {
		t.Fatalf("cross-origin: %d", r.Status)
	}

	r = b.Login(e.Alpha.User.Email, "wrong password!")
	if r.Status != 422 || !strings.Contains(string(r.Body), "Invalid email or password.") {
		t.Fatalf("wrong password: %d %s", r.Status, r.Body)
	}
	if n := apitest.AuditCount(t, e, models.EventLoginFailed, "bad_credentials"); n != 1 {
		t.Errorf("%d bad_credentials records", n)
	}
	if r := b.Login("a\x00b@example.com", "whatever it is"); r.Status != 422 {
		t.Errorf("NUL in the email: %d", r.Status)
	}

	r = b.Login(strings.ToUpper(e.Alpha.User.Email), "correct horse battery")
	if r.Status != 303 || r.Header.Get("Location") != "/settings/api_keys" {
		t.Fatalf("login: %d %s %s", r.Status, r.Header.Get("Location"), r.Body)
	}
	if apitest.AuditCount(t, e, models.EventLogin, "") != 1 {
		t.Error("no login record")
	}
	if r := b.Get("/"); r.Status != 200 || !strings.Contains(string(r.Body), e.Alpha.User.Email) {
		t.Fatalf("home: %d", r.Status)
	}

	// Create a key on the screen, then use it on the API.
	b.Get("/settings/api_keys")
	r = b.Post("/settings/api_keys", url.Values{"name": {"script"}, "scope": {"read_write"}, "expires_in_days": {"30"}})
	if r.Status != 201 {
		t.Fatalf("create key: %d %s", r.Status, r.Body)
	}
	key := regexp.MustCompile(`id="new-key-value">(cof_[0-9a-f]{64})<`).FindSubmatch(r.Body)
	if key == nil {
		t.Fatalf("key not shown: %s", r.Body)
	}
	if api := e.Do("GET", "/api/v1/accounts", string(key[1]), nil); api.Status != 200 {
		t.Fatalf("new key on the API: %d %s", api.Status, api.Body)
	}
	if r := b.Post("/settings/api_keys", url.Values{"name": {""}, "scope": {"admin"}}); r.Status != 422 {
		t.Errorf("bad key form: %d", r.Status)
	}
	// The list shows the key without its secret; revoking it stops it.
	list := b.Get("/settings/api_keys")
	if strings.Contains(string(list.Body), string(key[1])) {
		t.Fatal("the list shows the whole key")
	}
	keys, _ := e.Store.APIKeys(t.Context(), e.Alpha.Family.ID, e.Alpha.User.ID)
	var id string
	for _, k := range keys {
		if k.Name == "script" {
			id = k.ID.String()
		}
	}
	if r := b.Post("/settings/api_keys/"+id+"/revoke", nil); r.Status != 303 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/accounts", string(key[1]), nil), 401, "unauthorized")
	// Another user's key cannot be revoked from this session.
	other, _ := e.Store.APIKeys(t.Context(), e.Beta.Family.ID, e.Beta.User.ID)
	if r := b.Post("/settings/api_keys/"+other[0].ID.String()+"/revoke", nil); r.Status != 404 {
		t.Errorf("revoke another family's key: %d", r.Status)
	}

	// Suspension ends the session and the keys at once.
	if _, err := e.Store.DB().NewUpdate().Table("users").Set("status = 'suspended'").Where("id = ?", e.Alpha.User.ID).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r := b.Get("/"); r.Status != 302 {
		t.Errorf("suspended user's session still works: %d", r.Status)
	}
	m := apitest.WantError(t, e.Do("GET", "/api/v1/accounts", e.Alpha.Key, nil), 401, "unauthorized")
	if m["message"] != "Account has been deactivated" {
		t.Errorf("message %v", m["message"])
	}
	if r := b.Login(e.Alpha.User.Email, "correct horse battery"); r.Status != 403 || !strings.Contains(string(r.Body), "suspended") {
		t.Errorf("suspended login: %d", r.Status)
	}
}

func TestLogout(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	b.Get("/")
	if r := b.Post("/sessions/logout", nil); r.Status != 303 {
		t.Fatalf("logout: %d", r.Status)
	}
	if r := b.Get("/sessions/new"); !strings.Contains(string(r.Body), "You have signed out.") {
		t.Error("no signed-out message")
	}
	if r := b.Get("/"); r.Status != 302 {
		t.Errorf("after logout: %d", r.Status)
	}
	if n, _ := e.Store.CountUserSessions(t.Context(), e.Alpha.User.FamilyID, e.Alpha.User.ID); n != 0 {
		t.Errorf("%d sessions left", n)
	}
	if apitest.AuditCount(t, e, models.EventLogout, "") != 1 {
		t.Error("no logout record")
	}
}

func TestLockout(t *testing.T) {
	e := apitest.NewEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	b := e.Browser(t)
	for i := 0; i < 5; i++ {
		if r := b.Login(e.Alpha.User.Email, "wrong password!"); r.Status != 422 {
			t.Fatalf("failure %d: %d", i+1, r.Status)
		}
	}
	r := b.Login(e.Alpha.User.Email, "correct horse battery")
	if r.Status != 429 || !strings.Contains(string(r.Body), "Too many failed sign-in attempts. Try again in 15 minutes.") {
		t.Fatalf("6th attempt: %d %s", r.Status, r.Body)
	}
	if apitest.AuditCount(t, e, models.EventLoginFailed, "locked") != 1 {
		t.Error("no locked record")
	}
	// The failure that reached the limit restarted the window: the lockout
	// lasts all of it.
	var keyTTL time.Duration
	for _, k := range e.RDB.Keys(context.Background(), "login:fail:acct:*").Val() {
		if ttl := e.RDB.PTTL(context.Background(), k).Val(); ttl > keyTTL {
			keyTTL = ttl
		}
	}
	if keyTTL < 14*time.Minute {
		t.Errorf("lockout lasts %v", keyTTL)
	}
	// Another account from the same address is not locked yet.
	apitest.SetPassword(t, e, e.Beta.User, "correct horse battery")
	if r := b.Login(e.Beta.User.Email, "correct horse battery"); r.Status != 303 {
		t.Errorf("other account: %d", r.Status)
	}
	t.Cleanup(func() { e.RDB.Del(context.Background(), "login:fail:ip:"+b.IP) })
}

func TestLocalLoginPolicies(t *testing.T) {
	t.Run("disabled", func(t *testing.T) {
		e := apitest.NewEnv(t, func(o *api.Options) { o.Web.LocalLogin = false })
		apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
		b := e.Browser(t)
		if r := b.Get("/sessions/new"); strings.Contains(string(r.Body), `name="password"`) {
			t.Error("the password form is shown")
		}
		r := b.Login(e.Alpha.User.Email, "correct horse battery")
		if r.Status != 403 || !strings.Contains(string(r.Body), "Password sign-in is disabled. Use single sign-on.") {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if apitest.AuditCount(t, e, models.EventLoginFailed, "local_login_disabled") != 1 {
			t.Error("not audited")
		}
	})
	t.Run("override", func(t *testing.T) {
		e := apitest.NewEnv(t, func(o *api.Options) { o.Web.LocalLogin = false; o.Web.AdminOverride = true })
		apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
		b := e.Browser(t)
		if r := b.Get("/sessions/new"); !strings.Contains(string(r.Body), "Administrator sign-in") {
			t.Error("no administrator form")
		}
		// A wrong password says the same for everyone; the role is checked after it.
		if r := b.Login(e.Alpha.User.Email, "wrong password!"); r.Status != 422 {
			t.Errorf("wrong password: %d", r.Status)
		}
		if r := b.Login(e.Alpha.User.Email, "correct horse battery"); r.Status != 403 ||
			!strings.Contains(string(r.Body), "Password sign-in is limited to super administrators.") {
			t.Errorf("admin (not super): %d", r.Status)
		}
		if _, err := e.Store.DB().NewUpdate().Table("users").Set("role = 'super_admin'").Where("id = ?", e.Alpha.User.ID).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		if r := b.Login(e.Alpha.User.Email, "correct horse battery"); r.Status != 303 {
			t.Errorf("super admin: %d", r.Status)
		}
		logs, _, _ := e.Store.AuditLogs(t.Context(), models.AuditFilter{EventType: models.EventLogin}, models.Page{Number: 1, Size: 5})
		if len(logs) != 1 || logs[0].Metadata["override"] != true {
			t.Errorf("override login record: %+v", logs)
		}
	})
}
