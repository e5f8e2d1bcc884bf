package api_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"coffer/api"
	"coffer/models"
	"coffer/models/secret"
	"coffer/sso/ssotest"
)

// slowArgon2 makes each password check take long enough that parallel
// requests all arrive while the first checks are still running: the race
// a lockout must win.
var slowArgon2 = secret.Argon2Params{MemoryKiB: 8 << 10, Time: 2, Threads: 1}

func slowPasswords(o *api.Options) { o.Web.Argon2 = slowArgon2 }

// postAtOnce sends n form posts from b's cookies and address, all
// released together, and returns how many got each status. forms(i) is
// the i-th form; its CSRF token is b's.
func postAtOnce(t *testing.T, b *browser, path string, n int, form func(i int) url.Values) map[int]int {
	t.Helper()
	reqs := make([]*http.Request, n)
	for i := range reqs {
		f := form(i)
		f.Set("csrf_token", b.csrf)
		req := httptest.NewRequest("POST", path, strings.NewReader(f.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", b.ip)
		for k, v := range b.cookies {
			req.AddCookie(&http.Cookie{Name: k, Value: v})
		}
		reqs[i] = req
	}
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		start   = make(chan struct{})
		counts  = map[int]int{}
		failure error
	)
	for _, req := range reqs {
		wg.Go(func() {
			<-start
			resp, err := b.e.app.Test(req, -1)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failure = err
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			counts[resp.StatusCode]++
		})
	}
	close(start)
	wg.Wait()
	if failure != nil {
		t.Fatal(failure)
	}
	return counts
}

// TestLockoutParallel sends many wrong passwords at once: the lockout
// counts each attempt before its password is checked, so no more than the
// limit are checked and the rest are refused as locked, whatever the
// timing; then even the right password is refused.
func TestLockoutParallel(t *testing.T) {
	t.Run("per account", func(t *testing.T) {
		e := newEnv(t, slowPasswords)
		setPasswordWith(t, e, e.alpha.User, "correct horse battery", slowArgon2)
		b := e.browser(t)
		b.get("/sessions/new")
		got := postAtOnce(t, b, "/sessions", 10, func(int) url.Values {
			return url.Values{"email": {e.alpha.User.Email}, "password": {"wrong password!"}}
		})
		if got[422] != 5 || got[429] != 5 {
			t.Fatalf("statuses %v, want 5 checked (422) and 5 locked (429)", got)
		}
		if n := auditCount(t, e, models.EventLoginFailed, "bad_credentials"); n != 5 {
			t.Errorf("%d passwords checked, want 5", n)
		}
		if r := b.login(e.alpha.User.Email, "correct horse battery"); r.status != 429 {
			t.Fatalf("right password after the lockout: %d", r.status)
		}
	})
	t.Run("per IP", func(t *testing.T) {
		e := newEnv(t, slowPasswords, func(o *api.Options) { o.Web.MaxFailuresIP = 4 })
		b := e.browser(t)
		b.get("/sessions/new")
		got := postAtOnce(t, b, "/sessions", 10, func(i int) url.Values {
			return url.Values{"email": {fmt.Sprintf("nobody-%d-%d@example.com", i, rand.Int())}, "password": {"wrong password!"}}
		})
		if got[422] != 4 || got[429] != 6 {
			t.Fatalf("statuses %v, want 4 checked (422) and 6 locked (429)", got)
		}
		setPassword(t, e, e.beta.User, "correct horse battery")
		if r := b.login(e.beta.User.Email, "correct horse battery"); r.status != 429 {
			t.Fatalf("right password from the locked address: %d", r.status)
		}
	})
	t.Run("SSO link by password", func(t *testing.T) {
		s := newSSOEnv(t, models.StrategyOIDC, slowPasswords)
		setPasswordWith(t, s.env, s.alpha.User, "correct horse battery", slowArgon2)
		u := ssotest.DefaultUser()
		u.Email = s.alpha.User.Email
		s.idp.SetUser(u)
		b := s.browser(t)
		if r := s.ssoLogin(b); r.status != 303 || r.header.Get("Location") != "/auth/link" {
			t.Fatalf("got %d %s", r.status, r.header.Get("Location"))
		}
		b.get("/auth/link")
		got := postAtOnce(t, b, "/auth/link", 10, func(int) url.Values {
			return url.Values{"password": {"wrong password here"}}
		})
		if n := auditCount(t, s.env, models.EventLoginFailed, "link_password_failed"); n > 5 || got[422] > 5 {
			t.Fatalf("%d passwords checked, statuses %v; want at most 5", n, got)
		}
		if r := b.login(s.alpha.User.Email, "correct horse battery"); r.status != 429 {
			t.Fatalf("right password after the lockout: %d", r.status)
		}
		if idents, _ := s.store.UserIdentities(t.Context(), s.alpha.User.ID); len(idents) != 0 {
			t.Fatal("linked")
		}
	})
}

// TestLockoutRightPasswordsDoNotCount: signing in successfully, many
// times from one address, never locks that address.
func TestLockoutRightPasswordsDoNotCount(t *testing.T) {
	e := newEnv(t, func(o *api.Options) { o.Web.MaxFailuresIP = 2 })
	setPassword(t, e, e.alpha.User, "correct horse battery")
	b := e.browser(t)
	for i := range 4 {
		if r := b.login(e.alpha.User.Email, "correct horse battery"); r.status != 303 {
			t.Fatalf("sign-in %d: %d", i+1, r.status)
		}
		b.post("/sessions/logout", nil)
	}
	if r := b.login(e.alpha.User.Email, "wrong password!"); r.status != 422 {
		t.Fatalf("a wrong password after right ones: %d", r.status)
	}
}
