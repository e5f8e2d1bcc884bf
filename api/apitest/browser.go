package apitest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"coffer/api"
	"coffer/models/modelstest"
	"coffer/sso"
)

// ServeEnv runs a test app on a loopback port, as a browser reaches it.
func ServeEnv(t *testing.T, opts ...func(*api.Options)) (*Env, string) {
	t.Helper()
	return serveAt(t, "127.0.0.1", opts...)
}

// ServeLocalhost is ServeEnv with APP_URL http://localhost:port: a name,
// as WebAuthn needs, still on loopback.
func ServeLocalhost(t *testing.T, opts ...func(*api.Options)) (*Env, string) {
	t.Helper()
	return serveAt(t, "localhost", opts...)
}

func serveAt(t *testing.T, host string, opts ...func(*api.Options)) (*Env, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("http://%s:%d", host, ln.Addr().(*net.TCPAddr).Port)
	opts = append([]func(*api.Options){func(o *api.Options) {
		o.Web.Origin = base
		o.Web.TrustedProxies = nil
		o.SSO.Registry = sso.NewRegistry(o.Store, o.Redis, sso.Options{BaseURL: base, HTTPClient: &http.Client{Timeout: 10 * time.Second}}, o.Logger)
	}}, opts...)
	e := NewEnv(t, opts...)
	go func() { _ = e.App.Listener(ln) }()
	t.Cleanup(func() { _ = e.App.Shutdown() })
	return e, base
}

// Chrome is a headless Chromium (Debian's chromium, installed by
// deploy/test-services.sh) and the steps tests drive it with.
type Chrome struct {
	T   *testing.T
	Ctx context.Context
}

func NewChrome(t *testing.T) *Chrome {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: run deploy/test-services.sh (make test does), or apt-get install chromium")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	// The first action starts the browser, bound to the context it runs
	// in: this one, not a step's shorter one.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &Chrome{T: t, Ctx: ctx}
}

func (c *Chrome) Fail(what string, err error) {
	c.T.Helper()
	page, _ := chromedp.Run(c.Ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.outerHTML`))
	c.T.Fatalf("%s: %v\npage: %s", what, err, page)
}

// Run does steps, each group bounded, so that a stuck step still leaves
// time to show the page it is stuck on.
func (c *Chrome) Run(what string, steps ...chromedp.Action[chromedp.Void]) {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(c.Ctx, 40*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		c.Fail(what, err)
	}
}

func (c *Chrome) Text(sel string) string {
	c.T.Helper()
	s, err := chromedp.Run(c.Ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		c.Fail("read "+sel, err)
	}
	return s
}

// WaitFor polls expr in the page for up to 20 s until it yields one of
// want.
func (c *Chrome) WaitFor(expr string, want ...string) {
	c.T.Helper()
	modelstest.WaitFor(c.T, fmt.Sprintf("%s to be %q", expr, want), 20*time.Second, func() (bool, string) {
		got, err := chromedp.Run(c.Ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			return false, err.Error()
		}
		return slices.Contains(want, got), fmt.Sprintf("%q", got)
	})
}

// screenshotDir is where the household test leaves a picture of each
// screen for people to review (ignored by git).
const screenshotDir = "testdata/screenshots"

// Shoot saves the whole page as name.png, at desktop or phone width.
func (c *Chrome) Shoot(name string) {
	c.T.Helper()
	c.save(name, chromedp.FullScreenshot(100))
}

// ShootView saves what the window shows, for a page too long to save
// whole.
func (c *Chrome) ShootView(name string) {
	c.T.Helper()
	c.save(name, chromedp.CaptureScreenshot())
}

func (c *Chrome) save(name string, shot chromedp.Action[[]byte]) {
	c.T.Helper()
	buf, err := chromedp.Run(c.Ctx, shot)
	if err != nil {
		c.Fail("screenshot "+name, err)
	}
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		c.T.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshotDir, name+".png"), buf, 0o644); err != nil {
		c.T.Fatal(err)
	}
}

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
		chromedp.WaitReady(chromedp.CSS(`header form`)),
	)
}
