package signin_test

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"coffer/api/apitest"
	"coffer/models"
)

// A passkey through Chromium's virtual authenticator, end to end: added on
// the security screen (the first second factor, so ten recovery codes come
// with it), then the password sign-in asks for it and a touch signs in;
// the sign counter moves; the answer the browser sent cannot be used again;
// a recovery code still works for the app's sign-in; removing it asks for
// the password. Screens at phone and desktop width.
func TestPasskeyEnrolAndSignIn(t *testing.T) {
	e, base := apitest.ServeLocalhost(t)
	ctx := t.Context()
	u := e.Alpha.User
	apitest.SetPassword(t, e, u, totpPassword)
	c := apitest.NewChrome(t)
	if _, err := chromedp.Call(c.Ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	_, err := chromedp.Call(c.Ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
		Options: &webauthn.VirtualAuthenticatorOptions{Protocol: webauthn.AuthenticatorProtocolCtap2,
			Transport: webauthn.AuthenticatorTransportInternal, HasResidentKey: true, HasUserVerification: true,
			IsUserVerified: true, AutomaticPresenceSimulation: true}})
	if err != nil {
		t.Fatal(err)
	}
	c.SignIn(base, u.Email)
	c.Run("add a passkey",
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(base+"/settings/security/passkeys/new"),
		chromedp.WaitVisible(chromedp.ID("name")),
		chromedp.SetValue(chromedp.ID("name"), "Laptop"),
	)
	c.Shoot("passkey_new_390")
	c.Run("create it", chromedp.Click(chromedp.CSS(`form[data-passkey] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("recovery-codes")))
	codes := strings.Fields(c.Text("#recovery-codes"))
	if len(codes) != 10 {
		t.Fatalf("recovery codes: %q", codes)
	}
	keys, err := e.Store.UserPasskeys(ctx, u.FamilyID, u.ID)
	if err != nil || len(keys) != 1 || keys[0].Name != "Laptop" || keys[0].LastUsedAt != nil {
		t.Fatalf("passkeys: %+v %v", keys, err)
	}
	if m := auditMeta(t, e, models.EventSecondFactorEnabled); len(m) != 1 || m[0]["method"] != "passkey" {
		t.Fatalf("audit: %v", m)
	}
	c.Run("security screen", chromedp.Navigate(base+"/settings/security"), chromedp.WaitVisible(chromedp.ID("passkeys")))
	c.Shoot("security_passkeys_390")
	c.Run("desktop", chromedp.EmulateViewport(1280, 900), chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("passkeys")))
	c.Shoot("security_passkeys_1280")

	// Sign out and in again: the password, then the passkey. The script
	// keeps what it sends, so the test can send it once more.
	c.Run("sign out and in", chromedp.Click(chromedp.CSS(`form[action="/sessions/logout"] button`)),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), u.Email),
		chromedp.SendKeys(chromedp.ID("password"), totpPassword),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.ID("use-passkey")),
	)
	c.Shoot("two_factor_passkey_1280")
	c.Run("phone", chromedp.EmulateViewport(390, 844), chromedp.WaitVisible(chromedp.ID("use-passkey")))
	c.Shoot("two_factor_passkey_390")
	_, err = chromedp.Run(c.Ctx, chromedp.Evaluate[bool](`(() => {
		const submit = HTMLFormElement.prototype.submit;
		HTMLFormElement.prototype.submit = function () {
			sessionStorage.setItem('sent', JSON.stringify(Object.fromEntries(new FormData(this))));
			submit.call(this);
		};
		return true;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	c.Run("touch the passkey", chromedp.Click(chromedp.ID("use-passkey")), chromedp.WaitReady(chromedp.CSS(`header form`)))
	if got := auditMeta(t, e, models.EventLogin); len(got) == 0 || got[0]["second_factor"] != "passkey" {
		t.Fatalf("login audit: %v", got)
	}
	keys, _ = e.Store.UserPasskeys(ctx, u.FamilyID, u.ID)
	if len(keys) != 1 || keys[0].LastUsedAt == nil || keys[0].Credential == "" {
		t.Fatalf("after sign-in: %+v", keys)
	}

	// The same answer again, after a new password step: refused, counted.
	// Then a recovery code on that step signs in.
	signOutAndIn := func(what string, then chromedp.Action[chromedp.Void]) {
		c.Run(what, chromedp.EmulateViewport(1280, 900), chromedp.Click(chromedp.CSS(`form[action="/sessions/logout"] button`)),
			chromedp.WaitVisible(chromedp.ID("email")),
			chromedp.SendKeys(chromedp.ID("email"), u.Email),
			chromedp.SendKeys(chromedp.ID("password"), totpPassword),
			chromedp.Submit(chromedp.ID("password")), then)
	}
	signOutAndIn("password step again", chromedp.WaitVisible(chromedp.ID("use-passkey")))
	_, err = chromedp.Run(c.Ctx, chromedp.Evaluate[bool](`(() => {
		const f = document.querySelector('form[data-passkey]');
		const sent = JSON.parse(sessionStorage.getItem('sent'));
		f.elements.passkey_session.value = sent.passkey_session;
		f.elements.assertion.value = sent.assertion;
		HTMLFormElement.prototype.submit.call(f);
		return true;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	c.WaitFor(`String(document.body.innerText.includes('could not be checked'))`, "true")
	if n := apitest.AuditCount(t, e, models.EventSecondFactorFailed, ""); n != 1 {
		t.Fatalf("failed tries audited: %d", n)
	}
	c.Run("recovery code", chromedp.SendKeys(chromedp.ID("code"), codes[0]), chromedp.Submit(chromedp.ID("code")),
		chromedp.WaitReady(chromedp.CSS(`header form`)))

	// The app's sign-in: the passkey's owner has no app code, so it asks
	// for a second factor, and a recovery code passes.
	ip := e.Browser(t).IP
	body := map[string]any{"email": u.Email, "password": totpPassword, "device": apitest.Phone}
	if m := e.DoFrom(ip, "POST", "/api/v1/auth/login", body).WantJSON(t, 401); m["mfa_required"] != true {
		t.Fatalf("app sign-in without code: %v", m)
	}
	body["otp_code"] = codes[1]
	e.DoFrom(ip, "POST", "/api/v1/auth/login", body).WantJSON(t, 200)

	// Removing it asks for the password; then sign-in is the password alone
	// and the recovery codes are gone with the last second factor.
	c.Run("remove: wrong password", chromedp.Navigate(base+"/settings/security"),
		chromedp.WaitVisible(chromedp.ID("confirm-"+keys[0].ID.String())),
		chromedp.SendKeys(chromedp.ID("confirm-"+keys[0].ID.String()), "not it"),
		chromedp.Submit(chromedp.ID("confirm-"+keys[0].ID.String())))
	// The refused page has the same form; wait for its message, not the
	// form, or the next step types into the page being replaced.
	c.WaitFor(`String(document.body.innerText.includes('not your password or a current code'))`, "true")
	if keys, _ := e.Store.UserPasskeys(ctx, u.FamilyID, u.ID); len(keys) != 1 {
		t.Fatal("a wrong password removed the passkey")
	}
	c.Run("remove", chromedp.SendKeys(chromedp.ID("confirm-"+keys[0].ID.String()), totpPassword),
		chromedp.Submit(chromedp.ID("confirm-"+keys[0].ID.String())),
		chromedp.WaitNotPresent(chromedp.ID("passkeys")))
	if left, _ := e.Store.RecoveryCodesLeft(ctx, u.FamilyID, u.ID); left != 0 {
		t.Fatalf("recovery codes left after the last factor: %d", left)
	}
	if m := auditMeta(t, e, models.EventSecondFactorRemoved); len(m) != 1 || m[0]["method"] != "passkey" {
		t.Fatalf("removal audit: %v", m)
	}
	signOutAndIn("password alone after removal", chromedp.WaitReady(chromedp.CSS(`header form`)))
}
