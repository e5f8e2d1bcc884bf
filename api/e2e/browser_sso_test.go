package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/sso/ssotest"
)

// TestBrowserSSO drives Chromium through single sign-on: a super admin adds
// Dex as an OpenID Connect and as an OAuth 2.0 provider on the admin
// screens; a new user signs in through Dex's own login form and gets an
// account; on the Security page they connect the second provider and
// unlink it again. An invited person joins the family through Dex.
func TestBrowserSSO(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	dex := ssotest.StartDex(t, ssotest.DexOptions{RedirectURIs: []string{base + "/auth/dex/callback", base + "/auth/dexoauth/callback"}})
	c := superAdminChrome(t, e, base)
	c.AddProvider(base, "openid_connect", "dex", "Dex", "issuer",
		chromedp.SendKeys(chromedp.ID("issuer"), dex.Issuer),
		chromedp.SendKeys(chromedp.ID("client_id"), dex.ClientID),
		chromedp.SendKeys(chromedp.ID("client_secret"), dex.ClientSecret),
		chromedp.SetValue(chromedp.ID("scopes"), "openid email profile groups"),
	)
	if got := c.Text(`#callback-dex`); got != base+"/auth/dex/callback" {
		t.Fatalf("callback URL shown: %q", got)
	}
	c.AddProvider(base, "oauth2", "dexoauth", "Dex OAuth", "authorization_url",
		chromedp.SendKeys(chromedp.ID("authorization_url"), dex.AuthURL),
		chromedp.SendKeys(chromedp.ID("token_url"), dex.TokenURL),
		chromedp.SendKeys(chromedp.ID("userinfo_url"), dex.UserinfoURL),
		chromedp.SendKeys(chromedp.ID("client_id"), dex.ClientID),
		chromedp.SendKeys(chromedp.ID("client_secret"), dex.ClientSecret),
		chromedp.SetValue(chromedp.ID("scopes"), "openid email profile groups"),
	)

	// Alice is invited to the family as a member and joins through Dex
	// from the invitation's page, although her groups map to nothing here.
	link, _ := apitest.Invite(t, e, "alice@example.com", models.RoleMember)
	a := apitest.NewChrome(t)
	a.Run("join by invitation through Dex",
		chromedp.Navigate(base+link),
		chromedp.WaitVisible(`//button[normalize-space()="Continue with Dex"]`),
		chromedp.Click(`//button[normalize-space()="Continue with Dex"]`),
		chromedp.WaitVisible(chromedp.ID("login")),
		chromedp.SendKeys(chromedp.ID("login"), "alice@example.com"),
		chromedp.SendKeys(chromedp.ID("password"), "alice-password"),
		chromedp.Click(chromedp.ID("submit-login")),
		chromedp.WaitReady(chromedp.CSS(`header form`)),
	)
	a.Shoot("16-joined-by-invitation-sso")
	alice, err := e.Store.UserByEmail(t.Context(), "alice@example.com")
	if err != nil || alice.FamilyID != e.Alpha.Family.ID || alice.Role != models.RoleMember {
		t.Fatalf("alice after joining: %+v, %v", alice, err)
	}

	// A new person signs in with Dex, in a browser of their own.
	u := apitest.NewChrome(t)
	u.Run("follow the Dex button", ssoButton(base, "dex")...)
	u.Run("sign in with Dex",
		chromedp.WaitVisible(chromedp.ID("login")),
		chromedp.SendKeys(chromedp.ID("login"), "bob@example.com"),
		chromedp.SendKeys(chromedp.ID("password"), "bob-password"),
		chromedp.Click(chromedp.ID("submit-login")),
		chromedp.WaitReady(chromedp.CSS(`header form`)),
	)
	bob, err := e.Store.UserByEmail(t.Context(), "bob@example.com")
	if err != nil || bob.Role != models.RoleAdmin {
		t.Fatalf("bob after JIT: %+v, %v", bob, err)
	}

	// Connected accounts: Dex is listed; connect Dex OAuth too.
	u.Run("open the Security page",
		chromedp.Navigate(base+"/settings/security"),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/settings/security/connect/dexoauth"] button`)),
	)
	if page := u.Text(`main`); !strings.Contains(page, "Dex") || !strings.Contains(page, "Add another sign-in method before disconnecting this one.") {
		t.Fatalf("security page: %s", page)
	}
	u.Run("connect Dex OAuth", chromedp.Click(chromedp.CSS(`form[action="/settings/security/connect/dexoauth"] button`)))
	// Dex may remember the sign-in and skip its form; while its page loads,
	// a step can find a node that is gone a moment later, so try again.
	for attempt := 0; ; attempt++ {
		u.WaitFor(`document.querySelector('#login') ? 'login' : document.querySelector('#connect') ? 'connect' : ''`, "login", "connect")
		if at, _ := chromedp.Run(u.Ctx, chromedp.Evaluate[bool](`!!document.querySelector('#connect')`)); at {
			break
		}
		err := chromedp.Do(u.Ctx,
			chromedp.WaitVisible(chromedp.ID("login")),
			chromedp.SendKeys(chromedp.ID("login"), "bob@example.com"),
			chromedp.SendKeys(chromedp.ID("password"), "bob-password"),
			chromedp.Click(chromedp.ID("submit-login")),
		)
		if err == nil {
			break
		}
		if attempt == 2 {
			u.Fail("sign in at Dex again", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	u.Run("confirm the link",
		chromedp.WaitVisible(chromedp.ID("connect")),
		chromedp.Click(chromedp.ID("connect")),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
	)
	if msg := u.Text(`.flash`); !strings.Contains(msg, "Dex OAuth is connected to your account.") {
		t.Fatalf("after connecting: %q", msg)
	}
	u.Run("unlink Dex OAuth",
		chromedp.WaitVisible(`//button[text()="Unlink Dex OAuth"]`),
		chromedp.Click(`//button[text()="Unlink Dex OAuth"]`),
	)
	u.WaitFor(`(document.querySelector('.flash') || {}).textContent || ''`, "Disconnected.")
	idents, _ := e.Store.UserIdentities(t.Context(), bob.FamilyID, bob.ID)
	if len(idents) != 1 || idents[0].Provider.Name != "dex" {
		t.Fatalf("identities after unlink: %+v", idents)
	}
}

// TestBrowserSAML adds a SAML provider on the admin screen and signs in
// through samlidp's login form, in Chromium.
func TestBrowserSAML(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	idp := ssotest.StartSAMLIdP(t)
	idp.AddUser("carol", "pw", "carol@example.org", "staff")
	c := superAdminChrome(t, e, base)
	c.AddProvider(base, "saml", "corp", "Corp SAML", "idp_entity_id",
		chromedp.SendKeys(chromedp.ID("idp_entity_id"), idp.EntityID),
		chromedp.SendKeys(chromedp.ID("idp_sso_url"), idp.SSOURL),
		chromedp.SetValue(chromedp.ID("idp_certificates"), idp.CertPEM),
		chromedp.SetValue(chromedp.ID("name_id_format"), "email"),
		chromedp.SetValue(chromedp.ID("subject_source"), "email_attribute"),
		chromedp.SendKeys(chromedp.ID("group_attribute"), "eduPersonAffiliation"),
	)
	p := apitest.ProviderNamed(t, e, "corp")
	if got := c.Text(`#callback-corp`); got != base+"/auth/saml/"+p.ID.String()+"/callback" {
		t.Fatalf("ACS URL shown: %q", got)
	}
	md := e.Browser(t).Get("/auth/saml/" + p.ID.String() + "/metadata")
	idp.RegisterSP("coffer", md.Body)

	u := apitest.NewChrome(t)
	u.Run("follow the Corp SAML button", ssoButton(base, "corp")...)
	u.Run("reach the IdP's form", chromedp.WaitVisible(chromedp.CSS(`input[name=user]`)))
	ssoURL, err := chromedp.Run(u.Ctx, chromedp.Evaluate[string](`location.href`))
	if err != nil {
		u.Fail("read the IdP URL", err)
	}
	u.Run("sign in at the IdP",
		chromedp.SendKeys(chromedp.CSS(`input[name=user]`), "carol"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "pw"),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
	)
	u.WaitFor(`location.pathname`, "/login")
	// samlidp's form only opens its session; the request, sent again, is
	// answered with the form that posts the assertion back to us.
	u.Run("back through the IdP to the service",
		chromedp.Navigate(ssoURL),
		chromedp.WaitReady(chromedp.CSS(`header form`)),
	)
	carol, err := e.Store.UserByEmail(t.Context(), "carol@example.org")
	if err != nil {
		t.Fatalf("no account after the SAML sign-in: %v", err)
	}
	if idents, _ := e.Store.UserIdentities(t.Context(), carol.FamilyID, carol.ID); len(idents) != 1 || idents[0].Provider.Name != "corp" {
		t.Fatalf("identities: %+v", idents)
	}
}

// superAdminChrome is a Chromium signed in as a new super admin of alpha.
func superAdminChrome(t *testing.T, e *apitest.Env, base string) *apitest.Chrome {
	t.Helper()
	root := apitest.NewSuperAdmin(t, e, e.Alpha.Family)
	c := apitest.NewChrome(t)
	c.SignIn(base, root.Email)
	return c
}

// ssoButton are the steps that open the login page and follow the
// sign-in button of provider name.
func ssoButton(base, name string) []chromedp.Action[chromedp.Void] {
	button := chromedp.CSS(`a[href^="/auth/` + name + `?"]`)
	return []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(base + "/sessions/new"), chromedp.WaitVisible(button), chromedp.Click(button),
	}
}
