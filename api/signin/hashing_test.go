package signin_test

import (
	"bufio"
	"bytes"
	"coffer/api/apitest"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"coffer/api"
	"coffer/models/secret"
)

// procStatusKiB reads a field of /proc/self/status (VmRSS, VmHWM) in KiB.
func procStatusKiB(t *testing.T, field string) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// TestInvitationMadeUpTokensDoNotHash: 16 parallel answers to invitation
// links that do not exist, with the real argon2id memory (64 MiB) and a
// hashing budget large enough not to hide a hash, leave the process's
// peak memory where it was: the token is looked up before the password
// is hashed. On the old code each post hashed first (16 × 64 MiB).
func TestInvitationMadeUpTokensDoNotHash(t *testing.T) {
	e := apitest.NewEnv(t, func(o *api.Options) {
		o.Web.Argon2 = secret.Argon2Params{MemoryKiB: 64 << 10, Time: 1, Threads: 1}
		o.Web.HashMemoryMiB = 4096
	})
	b := e.Browser(t)
	if r := b.Get("/invitations/made-up-token"); r.Status != 404 {
		t.Fatalf("made-up link: %d", r.Status)
	}
	const n = 16
	runtime.GC()
	debug.FreeOSMemory()
	// Writing 5 to clear_refs resets the peak (VmHWM) to the present RSS.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak RSS: %v", err)
	}
	before := procStatusKiB(t, "VmHWM")
	got := postAtOnce(t, b, "/invitations/made-up-token", n, func(i int) url.Values {
		return url.Values{"password": {"a long enough password"}, "password_confirmation": {"a long enough password"}}
	})
	growth := procStatusKiB(t, "VmHWM") - before
	t.Logf("peak RSS grew %d KiB over %d parallel posts (one hash takes 65536 KiB); answers %v", growth, n, got)
	if got[404] != n {
		t.Errorf("answers %v, want %d × 404", got, n)
	}
	if growth >= 32<<10 {
		t.Fatalf("peak RSS grew %d KiB for %d posts with made-up tokens: a password was hashed", growth, n)
	}
}

// TestInvitationRateLimit: a client may answer 20 invitation links an
// hour; the next is 429 with Retry-After and a sentence on the screen,
// before any lookup or hash.
func TestInvitationRateLimit(t *testing.T) {
	e := apitest.NewEnv(t)
	b := e.Browser(t)
	b.Get("/invitations/made-up-token")
	form := func() url.Values {
		return url.Values{"password": {"a long enough password"}, "password_confirmation": {"a long enough password"}}
	}
	for i := range 20 {
		if r := b.Post("/invitations/made-up-token", form()); r.Status != 404 {
			t.Fatalf("post %d: %d", i+1, r.Status)
		}
	}
	r := b.Post("/invitations/made-up-token", form())
	wantScreenLimit(t, r, "Too many requests from your address")
	// Another client is not affected.
	o := e.Browser(t)
	o.Get("/invitations/made-up-token")
	if r := o.Post("/invitations/made-up-token", form()); r.Status != 404 {
		t.Fatalf("another client: %d", r.Status)
	}
}

// wantScreenLimit checks a screen's 429: Retry-After and the sentence.
func wantScreenLimit(t *testing.T, r apitest.Response, sentence string) {
	t.Helper()
	if r.Status != 429 || r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), sentence) {
		t.Fatalf("want 429 with Retry-After and %q, got %d (Retry-After %q): %s", sentence, r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("a screen's refusal is %q, want HTML", ct)
	}
}

// TestRegistrationRateLimit: the sign-up form and the app's sign-up share
// 10 new families an hour per client; the 11th is refused before its
// password is hashed: a screen with the sentence, the API an
// ErrorResponse, both 429 with Retry-After.
func TestRegistrationRateLimit(t *testing.T) {
	e := apitest.NewEnv(t)
	b := e.Browser(t)
	b.Get("/registrations/new")
	email := "reg-" + e.Alpha.Family.ID.String()[:8] + "@example.com"
	form := func() url.Values {
		return url.Values{"family": {"Limited"}, "currency": {"USD"}, "email": {email}, "password": {"correct horse battery"}}
	}
	if r := b.Post("/registrations", form()); r.Status != 303 {
		t.Fatalf("first registration: %d %s", r.Status, r.Body)
	}
	for i := range 4 {
		b.Get("/registrations/new")
		if r := b.Post("/registrations", form()); r.Status != 422 { // the email is taken
			t.Fatalf("registration %d: %d", i+2, r.Status)
		}
	}
	phone := map[string]any{"device_id": "d1", "device_name": "Phone", "device_type": "ios", "os_version": "17", "app_version": "1.0"}
	signup := func(n int) map[string]any {
		return map[string]any{"user": map[string]any{"email": "app" + strconv.Itoa(n) + "-" + email, "password": "Another horse 9!"}, "device": phone}
	}
	for i := range 5 {
		if r := e.DoFrom(b.IP, "POST", "/api/v1/auth/signup", signup(i)); r.Status != 201 {
			t.Fatalf("app signup %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	r := e.DoFrom(b.IP, "POST", "/api/v1/auth/signup", signup(99))
	if apitest.WantError(t, r, 429, "rate_limited"); r.Header.Get("Retry-After") == "" {
		t.Fatal("app signup 429 without Retry-After")
	}
	if _, err := e.Store.UserByEmail(t.Context(), "app99-"+email); err == nil {
		t.Fatal("the refused signup made an account")
	}
	b.Get("/registrations/new")
	wantScreenLimit(t, b.Post("/registrations", form()), "Too many requests from your address")
	// Another client still registers.
	o := e.Browser(t)
	o.Get("/registrations/new")
	if r := o.Post("/registrations", url.Values{"family": {"Other"}, "currency": {"USD"}, "email": {"other-" + email}, "password": {"correct horse battery"}}); r.Status != 303 {
		t.Fatalf("another client: %d", r.Status)
	}
}

// TestChangePasswordLockout: guesses of the current password count
// toward the sign-in lockout; past LOGIN_MAX_FAILURES_ACCOUNT (5) even the
// right one is refused with 429, Retry-After and a sentence, and the
// password stays as it was. On the old code the sixth (right) guess
// changed it.
func TestChangePasswordLockout(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	b.Get("/settings/security")
	for i := range 5 {
		r := b.Post("/settings/security/password", url.Values{"current_password": {"wrong guess number " + strconv.Itoa(i)}, "new_password": {"a brand new password"}})
		if r.Status != 422 {
			t.Fatalf("guess %d: %d", i+1, r.Status)
		}
	}
	r := b.Post("/settings/security/password", url.Values{"current_password": {"correct horse battery"}, "new_password": {"a brand new password"}})
	wantScreenLimit(t, r, "Too many wrong passwords")
	u, err := e.Store.UserByID(t.Context(), e.Alpha.User.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := secret.CheckPassword(*u.PasswordHash, "correct horse battery", secret.DefaultArgon2); !ok {
		t.Fatal("the password changed while locked")
	}
}

// TestPasswordHashingBounded: 16 parallel sign-ins, each checking a
// password with the real argon2id memory (64 MiB), under a hashing budget
// of 64 MiB, raise the process's peak memory by a few hashes' worth, not
// 16: the checks wait their turn. Unbounded, the same posts took 1 GiB.
func TestPasswordHashingBounded(t *testing.T) {
	e := apitest.NewEnv(t, func(o *api.Options) {
		o.Web.Argon2 = secret.Argon2Params{MemoryKiB: 64 << 10, Time: 1, Threads: 1}
		o.Web.HashMemoryMiB = 64
	})
	b := e.Browser(t)
	b.Get("/sessions/new")
	const n = 16
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak RSS: %v", err)
	}
	before := procStatusKiB(t, "VmHWM")
	got := postAtOnce(t, b, "/sessions", n, func(i int) url.Values {
		return url.Values{"email": {"nobody-" + strconv.Itoa(i) + "-" + e.Alpha.User.Email}, "password": {"a long enough password"}}
	})
	growth := procStatusKiB(t, "VmHWM") - before
	t.Logf("peak RSS grew %d KiB over %d parallel sign-ins (one hash takes 65536 KiB); answers %v", growth, n, got)
	if got[422] != n {
		t.Errorf("answers %v, want %d × 422", got, n)
	}
	// A few hashes' worth (the one running, the one before it not yet
	// collected), times the race detector's shadow memory under -race,
	// where two overlapping hashes measured 490 MiB: unbounded, the 16
	// take 1 GiB, three times that under -race.
	if growth >= raceShadow*400<<10 {
		t.Fatalf("peak RSS grew %d KiB for %d sign-ins with a 64 MiB hashing budget", growth, n)
	}
}
