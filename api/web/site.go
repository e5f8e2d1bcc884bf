// Package web is the browser plumbing that the screen packages share:
// signed-in sessions, CSRF on every form, roles, the page layout and its
// rendering, flash messages and mail. It holds no routes of its own.
package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/semaphore"

	"coffer/api/httperr"
	"coffer/models"
	"coffer/models/secret"
)

//go:embed templates/*.html
var baseFiles embed.FS

const (
	cookieSession = "session"
	cookieCSRF    = "csrf"
	cookieFlash   = "flash"
	localSession  = "session"
	localCSRF     = "csrf_token"
)

// Page is what every screen template receives.
type Page struct {
	Nav   string // the main navigation's current section
	Title string
	User  *models.User
	// CSRF is the forms' token: the CSRF token with a one-time nonce of
	// this page (formonce.go). CSRFHeader is the bare token, for the
	// page's script.
	CSRF       string
	CSRFHeader string
	Flash      string
	Error      string
	Data       any
	// Refresh reloads the page after this many seconds when scripts do
	// not run (a meta refresh in noscript), for a page that waits on
	// background work; its script must do the reloading itself. 0: never.
	Refresh int
}

// Options configure the browser screens and sign-in.
type Options struct {
	Secret        []byte // signs CSRF tokens; at least 32 bytes
	Origin        string // scheme://host[:port] of APP_URL: forms must come from it
	SecureCookies bool   // APP_URL is https
	// Development serves the loopback aliases of APP_URL as APP_URL itself
	// (a laptop's browser may say 127.0.0.1 or localhost).
	Development   bool
	SessionIdle   time.Duration `env:"SESSION_IDLE_TIMEOUT" default:"168h"`
	SessionMaxAge time.Duration `env:"SESSION_MAX_AGE" default:"720h"`
	LocalLogin    bool          `env:"AUTH_LOCAL_LOGIN_ENABLED" default:"true"`
	AdminOverride bool          `env:"AUTH_LOCAL_ADMIN_OVERRIDE_ENABLED" default:"false"`
	// SignupEnabled lets anyone create a new family; main's default is on
	// in development, off in production.
	SignupEnabled bool `env:"AUTH_SIGNUP_ENABLED"`
	Argon2        secret.Argon2Params
	// HashMemoryMiB is the memory that the argon2id hashes and checks of
	// one process may take at once; more wait their turn (Hasher).
	HashMemoryMiB int `env:"PASSWORD_HASH_MEMORY_MIB" default:"256" min:"1" max:"1048576"`
	// HashSlots is that bound, weighted in KiB, which main builds once per
	// process from HashMemoryMiB; nil: NewSite builds one.
	HashSlots          *semaphore.Weighted
	MaxFailuresAccount int           `env:"LOGIN_MAX_FAILURES_ACCOUNT" default:"5" min:"1" max:"1000"`
	MaxFailuresIP      int           `env:"LOGIN_MAX_FAILURES_IP" default:"20" min:"1" max:"100000"`
	LockoutWindow      time.Duration `env:"LOGIN_LOCKOUT_WINDOW" default:"15m"`
	// TrustedProxies are the addresses (IPs or CIDRs) of the proxies in
	// front, whose X-Forwarded-For entries are believed (see ClientAddr);
	// empty: the header is ignored and the socket peer is the client.
	TrustedProxies []string `env:"TRUSTED_PROXIES"`
	// Redis keeps the one-time tokens of rendered forms (formonce.go);
	// nil: forms carry none. main passes the web processes' client.
	Redis redis.UniversalClient
	// AdminRateLimit is the requests per minute one IP may make under
	// /admin/ that change something or export (page views are free); 0 turns the limit off.
	AdminRateLimit int `env:"RATE_LIMIT_ADMIN_PER_MINUTE" default:"10" min:"0" max:"1000000"`
}

// Site holds what every screen shares: the session store, the form secret
// and the layout. Screen packages keep one and render through it.
type Site struct {
	log     *slog.Logger
	store   *models.Store
	opts    Options
	proxies []netip.Prefix // Options.TrustedProxies
	now     func() time.Time
	errs    *template.Template
	assets  assets
	hasher  *Hasher
}

// NewSite checks the options and parses the shared layout.
func NewSite(store *models.Store, o Options, now func() time.Time, log *slog.Logger) (*Site, error) {
	if len(o.Secret) < 32 {
		return nil, errors.New("api: Web.Secret must be at least 32 bytes")
	}
	proxies, err := ParseProxies(o.TrustedProxies)
	if err != nil {
		return nil, err
	}
	s := &Site{log: log, store: store, opts: o, proxies: proxies, now: now}
	budget := int64(max(o.HashMemoryMiB, 1)) << 10
	if o.HashSlots == nil {
		o.HashSlots = semaphore.NewWeighted(budget)
	}
	s.hasher = newHasher(o.Argon2, o.HashSlots, budget)
	if s.assets, err = loadAssets(); err != nil {
		return nil, err
	}
	pages, err := s.Parse(nil, nil, "error")
	if err != nil {
		return nil, err
	}
	s.errs = pages.m["error"]
	return s, nil
}

// Hasher hashes and checks passwords within the process's memory bound.
func (s *Site) Hasher() *Hasher { return s.hasher }

// Options returns the options the site was built with.
func (s *Site) Options() Options { return s.opts }

// Pages are one screen package's templates, rendered through the site.
type Pages struct {
	site *Site
	m    map[string]*template.Template
}

// Render writes the named page; see Site.Render.
func (p Pages) Render(c *fiber.Ctx, status int, name string, page Page) error {
	return p.site.Render(c, status, p.m[name], name, page)
}

// RenderFragment writes one block of the named page (a table row, say)
// with data, for the page's script to put in place of the old one; the
// page and the fragment are drawn by the same template.
func (p Pages) RenderFragment(c *fiber.Ctx, status int, name, block string, data any) error {
	var b strings.Builder
	if err := p.m[name].ExecuteTemplate(&b, block, data); err != nil {
		return err
	}
	return p.site.send(c, status, b.String())
}

// Parse builds each named page from the shared layout and fsys's
// templates/NAME.html (fsys nil: this package's own), with extra template
// functions beside the shared ones.
func (s *Site) Parse(fsys fs.FS, extra template.FuncMap, names ...string) (Pages, error) {
	funcs := template.FuncMap{
		"metadata": func(m map[string]any) string { b, _ := json.Marshal(m); return string(b) },
		"list":     func(s ...string) []string { return s },
		"asset":    s.assets.path,
		"plain":    Plain,
		"say":      Say,
		"fieldErr": fieldErr,
		"invalid":  invalid,
	}
	for k, v := range extra {
		funcs[k] = v
	}
	pages := Pages{site: s, m: map[string]*template.Template{}}
	for _, name := range names {
		t, err := template.New(name).Funcs(funcs).ParseFS(baseFiles, "templates/layout.html")
		if err == nil {
			if fsys == nil {
				_, err = t.ParseFS(baseFiles, "templates/"+name+".html")
			} else {
				_, err = t.ParseFS(fsys, "templates/"+name+".html")
			}
		}
		if err != nil {
			return Pages{}, fmt.Errorf("api: templates: %w", err)
		}
		pages.m[name] = t
	}
	return pages, nil
}

// RenderError writes the error page with this status and title.
func (s *Site) RenderError(c *fiber.Ctx, status int, title string) error {
	return s.Render(c, status, s.errs, "error", Page{Title: title})
}

// Render writes a screen with the signed-in user, the CSRF token and the
// flash message of the previous redirect.
func (h *Site) Render(c *fiber.Ctx, status int, t *template.Template, name string, p Page) error {
	p.CSRFHeader, _ = c.Locals(localCSRF).(string)
	p.CSRF = h.formToken(c, p.CSRFHeader)
	if s := SessionOf(c); s != nil && p.User == nil {
		p.User = s.User
	}
	if f := c.Cookies(cookieFlash); f != "" && p.Flash == "" {
		if msg, err := url.QueryUnescape(f); err == nil {
			p.Flash = msg
		}
		c.Cookie(&fiber.Cookie{Name: cookieFlash, Path: "/", Expires: time.Unix(0, 0), HTTPOnly: true, SameSite: "Lax"})
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, name+".html", p); err != nil {
		return err
	}
	return h.send(c, status, b.String())
}

// send writes HTML with the headers every screen carries.
func (h *Site) send(c *fiber.Ctx, status int, html string) error {
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set("Cache-Control", "no-store")
	c.Set("X-Frame-Options", "DENY")
	c.Set(fiber.HeaderContentSecurityPolicy, contentSecurityPolicy)
	return c.Status(status).SendString(html)
}

// Redirect answers 303 to path with a message for the next screen.
func (h *Site) Redirect(c *fiber.Ctx, path, flash string) error {
	if flash != "" {
		c.Cookie(&fiber.Cookie{Name: cookieFlash, Value: url.QueryEscape(flash), Path: "/", HTTPOnly: true,
			SameSite: "Lax", Secure: h.opts.SecureCookies, MaxAge: 60})
	}
	return c.Redirect(path, fiber.StatusSeeOther)
}

var roleRank = map[string]int{models.RoleMember: 1, models.RoleAdmin: 2, models.RoleSuperAdmin: 3}

// RequireRole lets through signed-in users of at least this role.
func (h *Site) RequireRole(role string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		s := SessionOf(c)
		if s == nil {
			return c.Redirect("/sessions/new?return_to="+url.QueryEscape(c.OriginalURL()), fiber.StatusFound)
		}
		if roleRank[s.User.Role] < roleRank[role] {
			return httperr.Forbidden("You are not authorized to access this area.")
		}
		return c.Next()
	}
}

// SessionOf is the request's signed-in session, or nil.
func SessionOf(c *fiber.Ctx) *models.Session {
	s, _ := c.Locals(localSession).(*models.Session)
	return s
}

// LoadSession reads the session cookie on browser routes. A session that
// ended (expired, idle, its user suspended or gone) is cleared.
func (h *Site) LoadSession(c *fiber.Ctx) error {
	token := c.Cookies(cookieSession)
	if token == "" || len(token) > 100 {
		return c.Next()
	}
	s, err := h.store.SessionByToken(c.UserContext(), token, h.opts.SessionIdle)
	switch {
	case errors.Is(err, models.ErrNotFound):
		h.ClearSessionCookie(c)
	case err != nil:
		return err
	case s.User == nil || s.User.Status != models.UserActive:
		if err := h.store.DeleteSession(c.UserContext(), s.FamilyID, s.ID); err != nil {
			return err
		}
		h.ClearSessionCookie(c)
	default:
		c.Locals(localSession, s)
		if h.now().Sub(s.LastSeenAt) > time.Minute {
			if err := h.store.TouchSession(c.UserContext(), s.FamilyID, s.ID); err != nil {
				return err
			}
		}
	}
	return c.Next()
}

// SetSessionCookie gives the browser its session, and a new CSRF cookie
// with it: no form token from before the sign-in (which a page planted
// before it could have read) works after it.
func (h *Site) SetSessionCookie(c *fiber.Ctx, token string) {
	c.Cookie(&fiber.Cookie{Name: cookieSession, Value: token, Path: "/", HTTPOnly: true, SameSite: "Lax", Secure: h.opts.SecureCookies})
	h.newCSRFCookie(c, token)
}

// ClearSessionCookie ends the browser's session cookie.
func (h *Site) ClearSessionCookie(c *fiber.Ctx) {
	c.Cookie(&fiber.Cookie{Name: cookieSession, Path: "/", Expires: time.Unix(0, 0), HTTPOnly: true, SameSite: "Lax", Secure: h.opts.SecureCookies})
}

// SignedIn sends visitors without a session to the login page.
func (h *Site) SignedIn(c *fiber.Ctx) error {
	if SessionOf(c) == nil {
		return c.Redirect("/sessions/new?return_to="+url.QueryEscape(c.OriginalURL()), fiber.StatusFound)
	}
	return c.Next()
}

// CSRF protects forms with a signed double-submit token: a random cookie,
// and in each form an HMAC of it and of the session cookie under the
// server secret (FormToken), so a token is good only for the session it
// was given in; the cookie is replaced at sign-in (SetSessionCookie).
// Nothing is kept on the server, so any web process can check any form.
// A POST also has to come from our own origin when the browser says where
// it comes from.
func (h *Site) CSRF(c *fiber.Ctx) error {
	want, err := h.IssueCSRF(c)
	if err != nil {
		return err
	}
	if c.Method() == fiber.MethodGet || c.Method() == fiber.MethodHead {
		return c.Next()
	}
	got := c.FormValue("csrf_token")
	if got == "" {
		got = c.Get("X-CSRF-Token")
	}
	got, nonce := splitFormToken(got)
	origin := c.Get(fiber.HeaderOrigin)
	if origin != "" && !h.ownOrigin(origin) || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return httperr.Forbidden(httperr.MsgBadCSRF)
	}
	if nonce != "" {
		return h.once(c, nonce) // a rendered form's one-time token (formonce.go)
	}
	return c.Next()
}

// IssueCSRF makes sure the browser has a CSRF cookie and gives the page
// the matching form token.
func (h *Site) IssueCSRF(c *fiber.Ctx) (string, error) {
	cookie := c.Cookies(cookieCSRF)
	if len(cookie) != 43 {
		return h.newCSRFCookie(c, boundSession(c)), nil
	}
	want := FormToken(h.opts.Secret, cookie, boundSession(c))
	c.Locals(localCSRF, want)
	return want, nil
}

// newCSRFCookie gives the browser a new CSRF cookie and the page the form
// token for it and the session cookie session.
func (h *Site) newCSRFCookie(c *fiber.Ctx, session string) string {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // never fails (crypto/rand since Go 1.24)
	cookie := base64.RawURLEncoding.EncodeToString(raw)
	c.Cookie(&fiber.Cookie{Name: cookieCSRF, Value: cookie, Path: "/", HTTPOnly: true, SameSite: "Lax", Secure: h.opts.SecureCookies})
	want := FormToken(h.opts.Secret, cookie, session)
	c.Locals(localCSRF, want)
	return want
}

// CSRFExempt serves a cross-site POST that carries no form token (the
// SAML ACS). A page it renders gets a token when the browser sent its CSRF
// cookie; a new cookie is never set here, since the browser may have left
// the old one behind (SameSite) and other tabs' forms still use it.
func (h *Site) CSRFExempt(c *fiber.Ctx) error {
	if cookie := c.Cookies(cookieCSRF); len(cookie) == 43 {
		c.Locals(localCSRF, FormToken(h.opts.Secret, cookie, boundSession(c)))
	}
	return c.Next()
}

// SameOrigin refuses writes that a browser says come from another site,
// for screens that cannot carry our CSRF token (the job dashboard's own
// scripts); the SameSite=Lax session cookie already stays off cross-site
// writes.
func (h *Site) SameOrigin(c *fiber.Ctx) error {
	if c.Method() != fiber.MethodGet && c.Method() != fiber.MethodHead {
		if !h.ownOrigin(c.Get(fiber.HeaderOrigin)) {
			return httperr.Forbidden(httperr.MsgBadCSRF)
		}
	}
	return c.Next()
}

// FormToken is the CSRF form token of a browser's CSRF cookie and its
// session cookie ("" before sign-in), under the server secret. The
// session's cookie is in it so that a token leaked from one session (or
// from before sign-in) is refused in another.
func FormToken(secret []byte, csrfCookie, sessionCookie string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("csrf:" + csrfCookie + "\x00" + sessionCookie))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// boundSession is the session cookie a form token is bound to: the one
// LoadSession found a live session by, else none (so that a browser whose
// session ended, and whose cookie LoadSession cleared, gets forms that
// work without it).
func boundSession(c *fiber.Ctx) string {
	if SessionOf(c) == nil {
		return ""
	}
	return c.Cookies(cookieSession)
}

// SafeReturnTo keeps a return path only when it is a plain path on this
// site, also after percent-decoding; anything else becomes "/".
func SafeReturnTo(raw string) string {
	if raw == "" || len(raw) > 1024 {
		return "/"
	}
	decoded, err := url.PathUnescape(raw)
	if err != nil {
		return "/"
	}
	for _, s := range []string{raw, decoded} {
		if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/\\") {
			return "/"
		}
		for _, r := range s {
			if r < 0x20 || r == 0x7f {
				return "/"
			}
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return "/"
	}
	return raw
}

// MayUsePassword reports whether u can sign in with a password here.
func (h *Site) MayUsePassword(u *models.User) bool {
	return u.PasswordHash != nil && (h.opts.LocalLogin || (h.opts.AdminOverride && u.Role == models.RoleSuperAdmin))
}
