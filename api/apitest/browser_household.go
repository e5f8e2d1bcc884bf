package apitest

import (
	"os"
	"path/filepath"

	"github.com/chromedp/chromedp"
)

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
