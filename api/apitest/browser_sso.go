package apitest

import (
	"github.com/chromedp/chromedp"
)

// AddProvider adds a provider of strategy on the admin screen: name and
// label, then fields; first is the field the form is waited for and
// submitted from. It waits for the provider's callback URL.
func (c *Chrome) AddProvider(base, strategy, name, label, first string, fields ...chromedp.Action[chromedp.Void]) {
	c.T.Helper()
	steps := append([]chromedp.Action[chromedp.Void]{
		chromedp.Navigate(base + "/admin/sso_providers/new?strategy=" + strategy),
		chromedp.WaitVisible(chromedp.ID(first)),
		chromedp.SendKeys(chromedp.ID("name"), name),
		chromedp.SendKeys(chromedp.ID("label"), label),
	}, fields...)
	c.Run("add "+label+" as a "+strategy+" provider",
		append(steps, chromedp.Submit(chromedp.ID(first)), chromedp.WaitVisible(chromedp.ID("callback-"+name)))...)
}

// SignIn signs in with the password every test member has.
func (c *Chrome) SignIn(base, email string) {
	c.T.Helper()
	c.Run("sign in as "+email,
		chromedp.Navigate(base+"/sessions/new"),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.SendKeys(chromedp.ID("password"), "correct horse battery"),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.CSS(`header form`)),
	)
}
