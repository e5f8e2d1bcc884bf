package signin_test

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/models"
)

const totpPassword = "correct horse battery"

// totpEnv is an env on a clock the test moves (the app's and the
// store's), alpha's admin with the password totpPassword.
func totpEnv(t *testing.T) (*apitest.Env, *atomic.Int64) {
	t.Helper()
	skew := new(atomic.Int64)
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	e := apitest.NewEnv(t, func(o *api.Options) { o.Clock = clock })
	e.Store.Now = func() time.Time { return clock().UTC() }
	apitest.SetPassword(t, e, e.Alpha.User, totpPassword)
	return e, skew
}

func now(skew *atomic.Int64) time.Time { return time.Now().Add(time.Duration(skew.Load())) }

func code(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCode(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var (
	secretText = regexp.MustCompile(`id="totp-secret">([A-Z2-7 ]+)</code>`)
	sealedText = regexp.MustCompile(`name="totp_enrol" value="([^"]+)"`)
	recoveryRe = regexp.MustCompile(`<li><code>([a-z2-7]{5}-[a-z2-7]{5})</code></li>`)
)

// setup reads the secret and the sealed setup from a setup screen.
func setup(t *testing.T, r apitest.Response) (secret, sealed string) {
	t.Helper()
	page := string(r.Body)
	s, m := secretText.FindStringSubmatch(page), sealedText.FindStringSubmatch(page)
	if r.Status != 200 || s == nil || m == nil || !strings.Contains(page, `<svg class="qr"`) ||
		!strings.Contains(page, `<label for="code">`) {
		t.Fatalf("setup screen: %d %s", r.Status, page)
	}
	return strings.ReplaceAll(s[1], " ", ""), m[1]
}

// enrol sets up an authenticator app through the security screen of a
// signed-in browser, at the step of at; it returns the secret and the
// recovery codes.
func enrol(t *testing.T, b *apitest.Browser, at time.Time) (string, []string) {
	t.Helper()
	secret, sealed := setup(t, b.Get("/settings/security/totp/new"))
	r := b.Post("/settings/security/totp", url.Values{"totp_enrol": {sealed}, "code": {code(t, secret, at)}})
	codes := recoveryRe.FindAllStringSubmatch(string(r.Body), -1)
	if r.Status != 200 || len(codes) != 10 {
		t.Fatalf("confirm: %d %s", r.Status, r.Body)
	}
	out := make([]string, len(codes))
	for i, c := range codes {
		out[i] = c[1]
	}
	return secret, out
}

// passwordStep signs in with the password and expects the code step.
func passwordStep(t *testing.T, e *apitest.Env, email string) *apitest.Browser {
	t.Helper()
	b := e.Browser(t)
	r := b.Login(email, totpPassword)
	if r.Status != 303 || r.Header.Get("Location") != "/sessions/two_factor" || b.Cookies["session"] != "" {
		t.Fatalf("password step: %d %s %v", r.Status, r.Header.Get("Location"), b.Cookies)
	}
	if r := b.Get("/sessions/two_factor"); r.Status != 200 || !strings.Contains(string(r.Body), `<label for="code">Code from your app, or a recovery code</label>`) {
		t.Fatalf("code step: %d %s", r.Status, r.Body)
	}
	return b
}

func auditMeta(t *testing.T, e *apitest.Env, event string) []map[string]any {
	t.Helper()
	logs, _, err := e.Store.AuditLogs(t.Context(), models.AuditFilter{EventType: event}, models.Page{Number: 1, Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := []map[string]any{}
	for _, l := range logs {
		out = append(out, l.Metadata)
	}
	return out
}

// Enrolment on the security screen: the QR code and the key, confirmed by
// a first code; the secret is stored sealed and only then; ten recovery
// codes shown once. A password sign-in then asks for a code on a second
// screen; a code is taken once per time step, a recovery code once; the
// second factor is removed with the password.
func TestTOTPEnrolAndSignIn(t *testing.T) {
	e, skew := totpEnv(t)
	ctx := t.Context()
	u := e.Alpha.User
	b := apitest.SignedInBrowser(t, e)
	if page := string(b.Get("/settings/security").Body); !strings.Contains(page, "Set up an authenticator app") {
		t.Fatalf("security screen: %s", page)
	}

	// A wrong first code stores nothing.
	secret, sealed := setup(t, b.Get("/settings/security/totp/new"))
	if len(secret) < 16 {
		t.Fatalf("secret %q", secret)
	}
	wrong := code(t, secret, now(skew).Add(-10*time.Minute))
	if r := b.Post("/settings/security/totp", url.Values{"totp_enrol": {sealed}, "code": {wrong}}); r.Status != 422 ||
		!strings.Contains(string(r.Body), "That code is not right") {
		t.Fatalf("wrong first code: %d %s", r.Status, r.Body)
	}
	if _, err := e.Store.UserTOTP(ctx, u.FamilyID, u.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("stored before confirmation: %v", err)
	}
	// Another person's sealed setup is refused (a fresh one is offered).
	other := e.Browser(t)
	apitest.SetPassword(t, e, e.Beta.User, totpPassword)
	if r := other.Login(e.Beta.User.Email, totpPassword); r.Status != 303 {
		t.Fatalf("beta sign-in: %d", r.Status)
	}
	other.Get("/settings/security")
	if r := other.Post("/settings/security/totp", url.Values{"totp_enrol": {sealed}, "code": {code(t, secret, now(skew))}}); r.Status != 422 {
		t.Fatalf("another person's setup: %d", r.Status)
	}

	enrolledAt := now(skew)
	secret, codes := enrol(t, b, enrolledAt)
	row, err := e.Store.UserTOTP(ctx, u.FamilyID, u.ID)
	if err != nil || !strings.HasPrefix(row.SecretEnc, "enc:v1:") || strings.Contains(row.SecretEnc, secret) {
		t.Fatalf("stored secret: %+v %v", row, err)
	}
	if page := string(b.Get("/settings/security").Body); !strings.Contains(page, "10 of 10 recovery codes left") {
		t.Fatalf("security screen after: %s", page)
	}
	if n := len(auditMeta(t, e, models.EventSecondFactorEnabled)); n != 1 {
		t.Fatalf("second_factor_enabled records: %d", n)
	}

	// The password alone gives no session.
	p := passwordStep(t, e, u.Email)
	if r := p.Get("/settings/security"); r.Status != 302 {
		t.Fatalf("signed in after the password alone: %d", r.Status)
	}
	// The code that confirmed the setup is spent: a replay in its window is refused.
	if r := p.Post("/sessions/two_factor", url.Values{"code": {code(t, secret, enrolledAt)}}); r.Status != 422 || p.Cookies["session"] != "" {
		t.Fatalf("replayed code: %d %s", r.Status, r.Body)
	}
	skew.Add(int64(30 * time.Second))
	c := code(t, secret, now(skew))
	r := p.Post("/sessions/two_factor", url.Values{"code": {c}})
	if r.Status != 303 || r.Header.Get("Location") != "/settings/api_keys" || p.Cookies["session"] == "" {
		t.Fatalf("right code: %d %s %s", r.Status, r.Header.Get("Location"), r.Body)
	}
	if r := p.Get("/settings/security"); r.Status != 200 {
		t.Fatalf("signed in: %d", r.Status)
	}
	// The same code again, in another browser, within its window: refused.
	q := passwordStep(t, e, u.Email)
	if r := q.Post("/sessions/two_factor", url.Values{"code": {c}}); r.Status != 422 {
		t.Fatalf("code used twice: %d", r.Status)
	}
	logins := auditMeta(t, e, models.EventLogin)
	if len(logins) == 0 || logins[0]["second_factor"] != "totp" {
		t.Fatalf("login record: %v", logins)
	}

	// A recovery code works once, typed in any case and spacing.
	if r := q.Post("/sessions/two_factor", url.Values{"code": {" " + strings.ToUpper(codes[3]) + " "}}); r.Status != 303 {
		t.Fatalf("recovery code: %d %s", r.Status, r.Body)
	}
	again := passwordStep(t, e, u.Email)
	if r := again.Post("/sessions/two_factor", url.Values{"code": {codes[3]}}); r.Status != 422 {
		t.Fatalf("recovery code twice: %d", r.Status)
	}
	if used := auditMeta(t, e, models.EventRecoveryCodeUsed); len(used) != 1 || used[0]["codes_left"] != float64(9) {
		t.Fatalf("recovery_code_used: %v", used)
	}
	if n := len(auditMeta(t, e, models.EventSecondFactorFailed)); n != 3 {
		t.Fatalf("second_factor_failed records: %d", n)
	}

	// Removal asks for the password (or a code).
	if page := string(b.Get("/settings/security").Body); !strings.Contains(page, "9 of 10 recovery codes left") {
		t.Fatalf("codes left: %s", page)
	}
	if r := b.Post("/settings/security/totp/remove", url.Values{"confirm": {"not my password at all"}}); r.Status != 422 {
		t.Fatalf("remove with a wrong password: %d", r.Status)
	}
	b.Get("/settings/security")
	if r := b.Post("/settings/security/totp/remove", url.Values{"confirm": {totpPassword}}); r.Status != 303 {
		t.Fatalf("remove: %d %s", r.Status, r.Body)
	}
	if _, err := e.Store.UserTOTP(ctx, u.FamilyID, u.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("still set up: %v", err)
	}
	if n := len(auditMeta(t, e, models.EventSecondFactorRemoved)); n != 1 {
		t.Fatalf("second_factor_removed records: %d", n)
	}
	if r := e.Browser(t).Login(u.Email, totpPassword); r.Status != 303 || r.Header.Get("Location") != "/settings/api_keys" {
		t.Fatalf("sign-in after removal: %d %s", r.Status, r.Header.Get("Location"))
	}

	// Set up again, and remove with a current code.
	b.Get("/settings/security")
	skew.Add(int64(30 * time.Second))
	secret, _ = enrol(t, b, now(skew))
	skew.Add(int64(30 * time.Second))
	b.Get("/settings/security")
	if r := b.Post("/settings/security/totp/remove", url.Values{"confirm": {code(t, secret, now(skew))}}); r.Status != 303 {
		t.Fatalf("remove with a code: %d %s", r.Status, r.Body)
	}
}

// Wrong codes count toward the sign-in lockout of the account, as wrong
// passwords do: after the limit the code step and the password step are
// both refused for the window.
func TestTOTPLockout(t *testing.T) {
	e, skew := totpEnv(t)
	b := apitest.SignedInBrowser(t, e)
	secret, _ := enrol(t, b, now(skew))
	p := passwordStep(t, e, e.Alpha.User.Email)
	bad := code(t, secret, now(skew).Add(-time.Hour))
	for i := range 5 { // MaxFailuresAccount
		if i == 3 {
			// The password typed again (from another address) forgives
			// none of the wrong codes.
			p = passwordStep(t, e, e.Alpha.User.Email)
		}
		if r := p.Post("/sessions/two_factor", url.Values{"code": {bad}}); r.Status != 422 {
			t.Fatalf("wrong code %d: %d", i+1, r.Status)
		}
	}
	skew.Add(int64(30 * time.Second))
	if r := p.Post("/sessions/two_factor", url.Values{"code": {code(t, secret, now(skew))}}); r.Status != 429 || p.Cookies["session"] != "" {
		t.Fatalf("right code while locked: %d", r.Status)
	}
	if r := e.Browser(t).Login(e.Alpha.User.Email, totpPassword); r.Status != 429 {
		t.Fatalf("password while locked: %d", r.Status)
	}
	if n := len(auditMeta(t, e, models.EventSecondFactorFailed)); n != 5 {
		t.Fatalf("second_factor_failed records: %d", n)
	}
}
