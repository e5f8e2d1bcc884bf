package api

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"coffer/models"
)

//go:embed templates/*.html
var templateFiles embed.FS

const (
	cookieSession = "session"
	cookieCSRF    = "csrf"
	cookieFlash   = "flash"
	localSession  = "session"
	localCSRF     = "csrf_token"
)

// page is what every screen template receives.
type page struct {
	Title string
	User  *models.User
	CSRF  string
	Flash string
	Error string
	Data  any
}

func parseTemplates() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	funcs := template.FuncMap{
		"metadata": func(m map[string]any) string { b, _ := json.Marshal(m); return string(b) },
		"list":     func(s ...string) []string { return s },
		"field":    providerField,
		"groups": func(claims map[string]any) string {
			groups, ok := models.GroupsFromClaim(claims["groups"])
			if !ok {
				return "none recorded"
			}
			return strings.Join(groups, ", ")
		},
	}
	for _, name := range []string{"login", "home", "api_keys", "error", "admin_users", "admin_user", "admin_audit",
		"register", "password_forgot", "password_reset", "security", "link",
		"admin_providers", "admin_provider_form", "admin_provider_test", "admin_provider_delete", "connections"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		pages[name] = t
	}
	return pages, nil
}

// render writes a screen with the signed-in user, the CSRF token and the
// flash message of the previous redirect.
func (h *Handler) render(c *fiber.Ctx, status int, name string, p page) error {
	p.CSRF, _ = c.Locals(localCSRF).(string)
	if s := sessionOf(c); s != nil && p.User == nil {
		p.User = s.User
	}
	if f := c.Cookies(cookieFlash); f != "" && p.Flash == "" {
		if msg, err := url.QueryUnescape(f); err == nil {
			p.Flash = msg
		}
		c.Cookie(&fiber.Cookie{Name: cookieFlash, Path: "/", Expires: time.Unix(0, 0), HTTPOnly: true, SameSite: "Lax"})
	}
	var b strings.Builder
	if err := h.pages[name].ExecuteTemplate(&b, name+".html", p); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set("Cache-Control", "no-store")
	c.Set("X-Frame-Options", "DENY")
	return c.Status(status).SendString(b.String())
}

// redirect answers 303 to path with a message for the next screen.
func (h *Handler) redirect(c *fiber.Ctx, path, flash string) error {
	if flash != "" {
		c.Cookie(&fiber.Cookie{Name: cookieFlash, Value: url.QueryEscape(flash), Path: "/", HTTPOnly: true,
			SameSite: "Lax", Secure: h.web.SecureCookies, MaxAge: 60})
	}
	return c.Redirect(path, fiber.StatusSeeOther)
}

func sessionOf(c *fiber.Ctx) *models.Session {
	s, _ := c.Locals(localSession).(*models.Session)
	return s
}

// loadSession reads the session cookie on browser routes. A session that
// ended (expired, idle, its user suspended or gone) is cleared.
func (h *Handler) loadSession(c *fiber.Ctx) error {
	token := c.Cookies(cookieSession)
	if token == "" || len(token) > 100 {
		return c.Next()
	}
	s, err := h.store.SessionByToken(c.UserContext(), token, h.web.SessionIdle)
	switch {
	case errors.Is(err, models.ErrNotFound):
		h.clearSessionCookie(c)
	case err != nil:
		return err
	case s.User == nil || s.User.Status != models.UserActive:
		if err := h.store.DeleteSession(c.UserContext(), s.ID); err != nil {
			return err
		}
		h.clearSessionCookie(c)
	default:
		c.Locals(localSession, s)
		if h.now().Sub(s.LastSeenAt) > time.Minute {
			if err := h.store.TouchSession(c.UserContext(), s.ID); err != nil {
				return err
			}
		}
	}
	return c.Next()
}

func (h *Handler) setSessionCookie(c *fiber.Ctx, token string) {
	c.Cookie(&fiber.Cookie{Name: cookieSession, Value: token, Path: "/", HTTPOnly: true, SameSite: "Lax", Secure: h.web.SecureCookies})
}

func (h *Handler) clearSessionCookie(c *fiber.Ctx) {
	c.Cookie(&fiber.Cookie{Name: cookieSession, Path: "/", Expires: time.Unix(0, 0), HTTPOnly: true, SameSite: "Lax", Secure: h.web.SecureCookies})
}

// signedIn sends visitors without a session to the login page.
func (h *Handler) signedIn(c *fiber.Ctx) error {
	if sessionOf(c) == nil {
		return c.Redirect("/sessions/new?return_to="+url.QueryEscape(c.OriginalURL()), fiber.StatusFound)
	}
	return c.Next()
}

// csrf protects forms with a signed double-submit token: a random cookie,
// and in each form an HMAC of it under the server secret. Nothing is kept
// on the server, so any web process can check any form. A POST also has to
// come from our own origin when the browser says where it comes from.
func (h *Handler) csrf(c *fiber.Ctx) error {
	want, err := h.issueCSRF(c)
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
	sameOrigin := true
	if origin := c.Get(fiber.HeaderOrigin); origin != "" && origin != h.web.Origin {
		sameOrigin = false
	}
	if !sameOrigin || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return &apiError{status: fiber.StatusForbidden, code: "forbidden", message: "Invalid or missing CSRF token"}
	}
	return c.Next()
}

// issueCSRF makes sure the browser has a CSRF cookie and gives the page
// the matching form token.
func (h *Handler) issueCSRF(c *fiber.Ctx) (string, error) {
	cookie := c.Cookies(cookieCSRF)
	if len(cookie) != 43 {
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return "", err
		}
		cookie = base64.RawURLEncoding.EncodeToString(raw)
		c.Cookie(&fiber.Cookie{Name: cookieCSRF, Value: cookie, Path: "/", HTTPOnly: true, SameSite: "Lax", Secure: h.web.SecureCookies})
	} else {
		cookie = strings.Clone(cookie)
	}
	want := h.csrfToken(cookie)
	c.Locals(localCSRF, want)
	return want, nil
}

// csrfExempt serves a cross-site POST that carries no form token (the
// SAML ACS). A page it renders gets a token when the browser sent its CSRF
// cookie; a new cookie is never set here, since the browser may have left
// the old one behind (SameSite) and other tabs' forms still use it.
func (h *Handler) csrfExempt(c *fiber.Ctx) error {
	if cookie := c.Cookies(cookieCSRF); len(cookie) == 43 {
		c.Locals(localCSRF, h.csrfToken(strings.Clone(cookie)))
	}
	return c.Next()
}

// sameOrigin refuses writes that a browser says come from another site,
// for screens that cannot carry our CSRF token (the job dashboard's own
// scripts); the SameSite=Lax session cookie already stays off cross-site
// writes.
func (h *Handler) sameOrigin(c *fiber.Ctx) error {
	if c.Method() != fiber.MethodGet && c.Method() != fiber.MethodHead {
		if origin := c.Get(fiber.HeaderOrigin); origin != h.web.Origin {
			return &apiError{status: fiber.StatusForbidden, code: "forbidden", message: "Invalid or missing CSRF token"}
		}
	}
	return c.Next()
}

func (h *Handler) csrfToken(cookie string) string {
	m := hmac.New(sha256.New, h.web.Secret)
	m.Write([]byte("csrf:" + cookie))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// safeReturnTo keeps a return path only when it is a plain path on this
// site, also after percent-decoding; anything else becomes "/".
func safeReturnTo(raw string) string {
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
