package signin_test

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
	"coffer/api/apitest"
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
func postAtOnce(t *testing.T, b *apitest.Browser, path string, n int, form func(i int) url.Values) map[int]int {
	t.Helper()
	reqs := make([]*http.Request, n)
	for i := range reqs {
		f := form(i)
		f.Set("csrf_token", b.CSRF)
		req := httptest.NewRequest("POST", path, strings.NewReader(f.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", b.IP)
		for k, v := range b.Cookies {
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
			resp, err := b.E.App.Test(req, -1)
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
		e := apitest.NewEnv(t, slowPasswords)
		apitest.SetPasswordWith(t, e, e.Alpha.User, "correct horse battery", slowArgon2)
		b := e.Browser(t)
		b.Get("/sessions/new")
		got := postAtOnce(t, b, "/sessions", 10, func(int) url.Values {
			return url.Values{"email": {e.Alpha.User.Email}, "password": {"wrong password!"}}
		})
		if got[422] != 5 || got[429] != 5 {
			t.Fatalf("statuses %v, want 5 checked (422) and 5 locked (429)", got)
		}
		if n := apitest.AuditCount(t, e, models.EventLoginFailed, "bad_credentials"); n != 5 {
			t.Errorf("%d passwords checked, want 5", n)
		}
		if r := b.Login(e.Alpha.User.Email, "correct horse battery"); r.Status != 429 {
			t.Fatalf("right password after the lockout: %d", r.Status)
		}
	})
	t.Run("per IP", func(t *testing.T) {
		e := apitest.NewEnv(t, slowPasswords, func(o *api.Options) { o.Web.MaxFailuresIP = 4 })
		b := e.Browser(t)
		b.Get("/sessions/new")
		got := postAtOnce(t, b, "/sessions", 10, func(i int) url.Values {
			return url.Values{"email": {fmt.Sprintf("nobody-%d-%d@example.com", i, rand.Int())}, "password": {"wrong password!"}}
		})
		if got[422] != 4 || got[429] != 6 {
			t.Fatalf("statuses %v, want 4 checked (422) and 6 locked (429)", got)
		}
		apitest.SetPassword(t, e, e.Beta.User, "correct horse battery")
		if r := b.Login(e.Beta.User.Email, "correct horse battery"); r.Status != 429 {
			t.Fatalf("right password from the locked address: %d", r.Status)
		}
	})
	t.Run("SSO link by password", func(t *testing.T) {
		s := apitest.NewSSOEnv(t, models.StrategyOIDC, slowPasswords)
		apitest.SetPasswordWith(t, s.Env, s.Alpha.User, "correct horse battery", slowArgon2)
		u := ssotest.DefaultUser()
		u.Email = s.Alpha.User.Email
		s.IdP.SetUser(u)
		b := s.Browser(t)
		if r := s.SSOLogin(b); r.Status != 303 || r.Header.Get("Location") != "/auth/link" {
			t.Fatalf("got %d %s", r.Status, r.Header.Get("Location"))
		}
		b.Get("/auth/link")
		got := postAtOnce(t, b, "/auth/link", 10, func(int) url.Values {
			return url.Values{"password": {"wrong password here"}}
		})
		if n := apitest.AuditCount(t, s.Env, models.EventLoginFailed, "link_password_failed"); n > 5 || got[422] > 5 {
			t.Fatalf("%d passwords checked, statuses %v; want at most 5", n, got)
		}
		if r := b.Login(s.Alpha.User.Email, "correct horse battery"); r.Status != 429 {
			t.Fatalf("right password after the lockout: %d", r.Status)
		}
		if idents, _ := s.Store.UserIdentities(t.Context(), s.Alpha.User.FamilyID, s.Alpha.User.ID); len(idents) != 0 {
			t.Fatal("linked")
		}
	})
}

// TestLockoutRightPasswordsDoNotCount: signing in successfully, many
// times from one address, never locks that address.
func TestLockoutRightPasswordsDoNotCount(t *testing.T) {
	e := apitest.NewEnv(t, func(o *api.Options) { o.Web.MaxFailuresIP = 2 })
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	b := e.Browser(t)
	for i := range 4 {
		if r := b.Login(e.Alpha.User.Email, "correct horse battery"); r.Status != 303 {
			t.Fatalf("sign-in %d: %d", i+1, r.Status)
		}
		b.Post("/sessions/logout", nil)
	}
	if r := b.Login(e.Alpha.User.Email, "wrong password!"); r.Status != 422 {
		t.Fatalf("a wrong password after right ones: %d", r.Status)
	}
}
