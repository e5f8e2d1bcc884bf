package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"

	"coffer/api/apitest"
)

// TestBrowserTOTP sets up an authenticator app in headless Chromium, on a
// phone's screen and a desktop's: the setup screen with its QR code and
// key, the first code, the recovery codes; then signs out and in again
// through the code step. Each screen is saved for review and must not
// scroll sideways.
func TestBrowserTOTP(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	c := apitest.NewChrome(t)
	narrow := func(what string) {
		t.Helper()
		wide, err := chromedp.Run(c.Ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
		if err != nil || wide {
			c.Fail(what+" scrolls sideways", err)
		}
	}
	c.Run("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	c.SignIn(base, e.Alpha.User.Email)
	c.Run("open the setup",
		chromedp.Navigate(base+"/settings/security"),
		chromedp.WaitVisible(`#two-step`),
		chromedp.Click(`a[href="/settings/security/totp/new"]`),
		chromedp.WaitVisible(`svg.qr`),
	)
	narrow("setup at 390 px")
	c.Shoot("totp-setup-390")
	c.Run("desktop", chromedp.EmulateViewport(1280, 900), chromedp.WaitVisible(`svg.qr`))
	c.Shoot("totp-setup-1280")
	loaded, err := chromedp.Run(c.Ctx, chromedp.Evaluate[bool](`document.querySelector("svg.qr path").getAttribute("d").length > 1000`))
	if err != nil || !loaded {
		c.Fail("the QR code does not load", err)
	}
	secret := strings.ReplaceAll(c.Text(`#totp-secret`), " ", "")
	first, err := totp.GenerateCode(secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c.Run("confirm with the first code",
		chromedp.SendKeys(`#code`, first),
		chromedp.Submit(`#code`),
		chromedp.WaitVisible(`#recovery-codes`),
	)
	if n := strings.Count(c.Text(`#recovery-codes`), "-"); n != 10 {
		t.Fatalf("recovery codes: %d", n)
	}
	c.Run("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	narrow("recovery codes at 390 px")
	c.Shoot("totp-recovery-390")

	c.Run("sign out and in with the password",
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(base+"/settings/security"),
		chromedp.WaitVisible(`.who form`),
		chromedp.Submit(`.who form`),
		chromedp.WaitVisible(`#email`),
		chromedp.SendKeys(`#email`, e.Alpha.User.Email),
		chromedp.SendKeys(`#password`, "correct horse battery"),
		chromedp.Submit(`#password`),
		chromedp.WaitVisible(`#code`),
	)
	c.Shoot("totp-code-1280")
	c.Run("a wrong code on a phone",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.SendKeys(`#code`, "000000"), chromedp.Submit(`#code`), chromedp.WaitVisible(`#code-error`))
	narrow("code step at 390 px")
	c.Shoot("totp-code-390")
	next, err := totp.GenerateCode(secret, time.Now().Add(30*time.Second)) // the first code's step is spent
	if err != nil {
		t.Fatal(err)
	}
	c.Run("the right code signs in",
		chromedp.SendKeys(`#code`, next),
		chromedp.Submit(`#code`),
		chromedp.WaitReady(`header form`),
	)
}
