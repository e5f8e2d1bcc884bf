package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
)

//go:embed static
var staticFiles embed.FS

// contentSecurityPolicy lets pages run only our own script files: no
// inline script or event attribute, nothing from elsewhere, no framing.
// Styles may be inline because the layout carries its style sheet.
// form-action is left out: Chromium applies it to the redirects after a
// form too, and single sign-on forms end at the identity provider.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

// asset is one embedded static file.
type asset struct {
	body        []byte
	contentType string
}

// staticTypes are the content types of the files static/ may hold. Not
// mime.TypeByExtension: its first call loads the system's whole table
// (/etc/mime.types) into memory for good, about 0.5 MB that the web
// process would keep for one lookup at start (issue 16).
var staticTypes = map[string]string{
	".js":    "text/javascript; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".ico":   "image/vnd.microsoft.icon",
	".woff2": "font/woff2",
}

// assets serves the files of static/ under names that carry a hash of
// their content (app.js as /static/app.1a2b3c4d5e6f7a8b.js), so browsers
// may keep them for a year and still fetch a changed file at once.
type assets struct {
	paths  map[string]string // file name → versioned path
	byName map[string]asset  // versioned file name → file
}

func loadAssets() (assets, error) {
	a := assets{paths: map[string]string{}, byName: map[string]asset{}}
	err := fs.WalkDir(staticFiles, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := staticFiles.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		name := path.Base(p)
		ext := path.Ext(name)
		versioned := strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:8]) + ext
		a.paths[name] = "/static/" + versioned
		contentType, ok := staticTypes[ext]
		if !ok {
			return fmt.Errorf("web: no content type for static file %q: add its extension to staticTypes", name)
		}
		a.byName[versioned] = asset{body: body, contentType: contentType}
		return nil
	})
	return a, err
}

// path is the versioned path of a static file, for the templates.
func (a assets) path(name string) (string, error) {
	if p, ok := a.paths[name]; ok {
		return p, nil
	}
	return "", fmt.Errorf("web: no static file %q", name)
}

// Static serves a static file by its versioned name; an old or unknown
// name is a 404, never another version.
func (h *Site) Static(c *fiber.Ctx) error {
	a, ok := h.assets.byName[c.Params("name")]
	if !ok {
		return httperr.NotFound()
	}
	c.Set(fiber.HeaderContentType, a.contentType)
	c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	return c.Send(a.body)
}

// Fetched reports whether the request comes from the page's own script
// (static/app.js sets X-Requested-With), which takes a fragment of the
// page in answer where a plain form gets a redirect.
func Fetched(c *fiber.Ctx) bool { return c.Get("X-Requested-With") == "fetch" }
