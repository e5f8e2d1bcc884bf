package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"coffer/models"
	"coffer/sso/ssotest"
)

// TestBrowserSSO drives Chromium through single sign-on: a super admin adds
// Dex as an OpenID Connect and as an OAuth 2.0 provider on the admin
// screens; a new user signs in through Dex's own login form and gets an
// account; on the Security page they connect the second provider and
// unlink it again. An invited person joins the family through Dex.
func TestBrowserSSO(t *testing.T) {
	e, base := serveEnv(t)
	dex := ssotest.StartDex(t, ssotest.DexOptions{RedirectURIs: []string{base + "/auth/dex/callback", base + "/auth/dexoauth/callback"}})
	c := superAdminChrome(t, e, base)
	c.addProvider(base, "openid_connect", "dex", "Dex", "issuer",
		chromedp.SendKeys(chromedp.ID("issuer"), dex.Issuer),
		chromedp.SendKeys(chromedp.ID("client_id"), dex.ClientID),
		chromedp.SendKeys(chromedp.ID("client_secret"), dex.ClientSecret),
		chromedp.SetValue(chromedp.ID("scopes"), "openid email profile groups"),
	)
	if got := c.text(`#callback-dex`); got != base+"/auth/dex/callback" {
		t.Fatalf("callback URL shown: %q", got)
	}
	c.addProvider(base, "oauth2", "dexoauth", "Dex OAuth", "authorization_url",
		chromedp.SendKeys(chromedp.ID("authorization_url"), dex.AuthURL),
		chromedp.SendKeys(chromedp.ID("token_url"), dex.TokenURL),
		chromedp.SendKeys(chromedp.ID("userinfo_url"), dex.UserinfoURL),
		chromedp.SendKeys(chromedp.ID("client_id"), dex.ClientID),
		chromedp.SendKeys(chromedp.ID("client_secret"), dex.ClientSecret),
		chromedp.SetValue(chromedp.ID("scopes"), "openid email profile groups"),
	)

	// Alice is invited to the family as a member and joins through Dex
	// from the invitation's page, although her groups map to nothing here.
	link, _ := invite(t, e, "alice@example.com", models.RoleMember)
	a := newChrome(t)
	a.run("join by invitation through Dex",
		chromedp.Navigate(base+link),
		chromedp.WaitVisible(`//button[normalize-space()="Continue with Dex"]`),
		chromedp.Click(`//button[normalize-space()="Continue with Dex"]`),
		chromedp.WaitVisible(chromedp.ID("login")),
		chromedp.SendKeys(chromedp.ID("login"), "alice@example.com"),
		chromedp.SendKeys(chromedp.ID("password"), "alice-password"),
		chromedp.Click(chromedp.ID("submit-login")),
		chromedp.WaitVisible(chromedp.CSS(`header form`)),
	)
	a.shoot("16-joined-by-invitation-sso")
	alice, err := e.store.UserByEmail(t.Context(), "alice@example.com")
	if err != nil || alice.FamilyID != e.alpha.Family.ID || alice.Role != models.RoleMember {
		t.Fatalf("alice after joining: %+v, %v", alice, err)
	}

	// A new person signs in with Dex, in a browser of their own.
	u := newChrome(t)
	u.run("follow the Dex button", ssoButton(base, "dex")...)
	u.run("sign in with Dex",
		chromedp.WaitVisible(chromedp.ID("login")),
		chromedp.SendKeys(chromedp.ID("login"), "bob@example.com"),
		chromedp.SendKeys(chromedp.ID("password"), "bob-password"),
		chromedp.Click(chromedp.ID("submit-login")),
		chromedp.WaitVisible(chromedp.CSS(`header form`)),
	)
	bob, err := e.store.UserByEmail(t.Context(), "bob@example.com")
	if err != nil || bob.Role != models.RoleAdmin {
		t.Fatalf("bob after JIT: %+v, %v", bob, err)
	}

	// Connected accounts: Dex is listed; connect Dex OAuth too.
	u.run("open the Security page",
		chromedp.Navigate(base+"/settings/security"),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/settings/security/connect/dexoauth"] button`)),
	)
	if page := u.text(`main`); !strings.Contains(page, "Dex") || !strings.Contains(page, "Add another sign-in method before disconnecting this one.") {
		t.Fatalf("security page: %s", page)
	}
	u.run("connect Dex OAuth", chromedp.Click(chromedp.CSS(`form[action="/settings/security/connect/dexoauth"] button`)))
	// Dex may remember the sign-in and skip its form; while its page loads,
	// a step can find a node that is gone a moment later, so try again.
	for attempt := 0; ; attempt++ {
		waitFor(t, u, `document.querySelector('#login') ? 'login' : document.querySelector('#connect') ? 'connect' : ''`, "login", "connect")
		if at, _ := chromedp.Run(u.ctx, chromedp.Evaluate[bool](`!!document.querySelector('#connect')`)); at {
			break
		}
		err := chromedp.Do(u.ctx,
			chromedp.WaitVisible(chromedp.ID("login")),
			chromedp.SendKeys(chromedp.ID("login"), "bob@example.com"),
			chromedp.SendKeys(chromedp.ID("password"), "bob-password"),
			chromedp.Click(chromedp.ID("submit-login")),
		)
		if err == nil {
			break
		}
		if attempt == 2 {
			u.fail("sign in at Dex again", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	u.run("confirm the link",
		chromedp.WaitVisible(chromedp.ID("connect")),
		chromedp.Click(chromedp.ID("connect")),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
	)
	if msg := u.text(`.flash`); !strings.Contains(msg, "Dex OAuth is connected to your account.") {
		t.Fatalf("after connecting: %q", msg)
	}
	u.run("unlink Dex OAuth",
		chromedp.WaitVisible(`//button[text()="Unlink Dex OAuth"]`),
		chromedp.Click(`//button[text()="Unlink Dex OAuth"]`),
	)
	waitFor(t, u, `(document.querySelector('.flash') || {}).textContent || ''`, "Disconnected.")
	idents, _ := e.store.UserIdentities(t.Context(), bob.ID)
	if len(idents) != 1 || idents[0].Provider.Name != "dex" {
		t.Fatalf("identities after unlink: %+v", idents)
	}
}

// waitFor polls expr in the page until it yields one of want.
func waitFor(t *testing.T, c *chrome, expr string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := chromedp.Run(c.ctx, chromedp.Evaluate[string](expr))
		for _, w := range want {
			if err == nil && got == w {
				return
			}
		}
		if time.Now().After(deadline) {
			c.fail("waiting for "+strings.Join(want, " or "), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBrowserSAML adds a SAML provider on the admin screen and signs in
// through samlidp's login form, in Chromium.
func TestBrowserSAML(t *testing.T) {
	e, base := serveEnv(t)
	idp := ssotest.StartSAMLIdP(t)
	idp.AddUser("carol", "pw", "carol@example.org", "staff")
	c := superAdminChrome(t, e, base)
	c.addProvider(base, "saml", "corp", "Corp SAML", "idp_entity_id",
		chromedp.SendKeys(chromedp.ID("idp_entity_id"), idp.EntityID),
		chromedp.SendKeys(chromedp.ID("idp_sso_url"), idp.SSOURL),
		chromedp.SetValue(chromedp.ID("idp_certificates"), idp.CertPEM),
		chromedp.SetValue(chromedp.ID("name_id_format"), "email"),
		chromedp.SetValue(chromedp.ID("subject_source"), "email_attribute"),
		chromedp.SendKeys(chromedp.ID("group_attribute"), "eduPersonAffiliation"),
	)
	p := providerNamed(t, e, "corp")
	if got := c.text(`#callback-corp`); got != base+"/auth/saml/"+p.ID.String()+"/callback" {
		t.Fatalf("ACS URL shown: %q", got)
	}
	md := e.browser(t).get("/auth/saml/" + p.ID.String() + "/metadata")
	idp.RegisterSP("coffer", md.body)

	u := newChrome(t)
	u.run("follow the Corp SAML button", ssoButton(base, "corp")...)
	u.run("reach the IdP's form", chromedp.WaitVisible(chromedp.CSS(`input[name=user]`)))
	ssoURL, err := chromedp.Run(u.ctx, chromedp.Evaluate[string](`location.href`))
	if err != nil {
		u.fail("read the IdP URL", err)
	}
	u.run("sign in at the IdP",
		chromedp.SendKeys(chromedp.CSS(`input[name=user]`), "carol"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "pw"),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
	)
	waitFor(t, u, `location.pathname`, "/login")
	// samlidp's form only opens its session; the request, sent again, is
	// answered with the form that posts the assertion back to us.
	u.run("back through the IdP to the service",
		chromedp.Navigate(ssoURL),
		chromedp.WaitVisible(chromedp.CSS(`header form`)),
	)
	carol, err := e.store.UserByEmail(t.Context(), "carol@example.org")
	if err != nil {
		t.Fatalf("no account after the SAML sign-in: %v", err)
	}
	if idents, _ := e.store.UserIdentities(t.Context(), carol.ID); len(idents) != 1 || idents[0].Provider.Name != "corp" {
		t.Fatalf("identities: %+v", idents)
	}
}

// superAdminChrome is a Chromium signed in as a new super admin of alpha.
func superAdminChrome(t *testing.T, e *env, base string) *chrome {
	t.Helper()
	root := newSuperAdmin(t, e, e.alpha.Family)
	c := newChrome(t)
	c.signIn(base, root.Email)
	return c
}

// addProvider adds a provider of strategy on the admin screen: name and
// label, then fields; first is the field the form is waited for and
// submitted from. It waits for the provider's callback URL.
func (c *chrome) addProvider(base, strategy, name, label, first string, fields ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	steps := append([]chromedp.Action[chromedp.Void]{
		chromedp.Navigate(base + "/admin/sso_providers/new?strategy=" + strategy),
		chromedp.WaitVisible(chromedp.ID(first)),
		chromedp.SendKeys(chromedp.ID("name"), name),
		chromedp.SendKeys(chromedp.ID("label"), label),
	}, fields...)
	c.run("add "+label+" as a "+strategy+" provider",
		append(steps, chromedp.Submit(chromedp.ID(first)), chromedp.WaitVisible(chromedp.ID("callback-"+name)))...)
}

// ssoButton are the steps that open the login page and follow the
// sign-in button of provider name.
func ssoButton(base, name string) []chromedp.Action[chromedp.Void] {
	button := chromedp.CSS(`a[href^="/auth/` + name + `?"]`)
	return []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(base + "/sessions/new"), chromedp.WaitVisible(button), chromedp.Click(button),
	}
}

// signIn signs in with the password every test member has.
func (c *chrome) signIn(base, email string) {
	c.t.Helper()
	c.run("sign in as "+email,
		chromedp.Navigate(base+"/sessions/new"),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.SendKeys(chromedp.ID("password"), "correct horse battery"),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.CSS(`header form`)),
	)
}
