package web

import (
	"net"
	"net/url"

	"github.com/gofiber/fiber/v2"
)

// cookieRedirected marks a browser that Canonical has just sent to
// APP_URL, so that a proxy rewriting Host cannot make it bounce forever.
const cookieRedirected = "app_url_redirect"

// Canonical keeps browsers on APP_URL's host, where forms work: a form's
// Origin must be APP_URL's and cookies belong to one host. In development a
// loopback alias of APP_URL (localhost, 127.0.0.1 or [::1] on the same
// port) is served as it is; a page asked for at any other host is sent to
// the same path on APP_URL, once, with the reason logged. Seen again within
// a minute, the request is served and the likely cause logged instead: a
// proxy that does not pass the Host header on.
func (h *Site) Canonical(c *fiber.Ctx) error {
	if c.Method() != fiber.MethodGet && c.Method() != fiber.MethodHead || h.ownHost(c.Hostname()) {
		return c.Next()
	}
	if c.Cookies(cookieRedirected) != "" {
		h.log.Warn("serving a page at a host other than APP_URL's; does the proxy pass the Host header on?",
			"host", c.Hostname(), "app_url", h.opts.Origin)
		return c.Next()
	}
	h.log.Info("redirecting to APP_URL: forms work only there", "host", c.Hostname(), "app_url", h.opts.Origin)
	c.Cookie(&fiber.Cookie{Name: cookieRedirected, Value: "1", Path: "/", HTTPOnly: true, SameSite: "Lax", MaxAge: 60})
	return c.Redirect(h.opts.Origin+c.OriginalURL(), fiber.StatusFound)
}

// ownOrigin reports whether a browser's Origin header names APP_URL or, in
// development, one of its loopback aliases.
func (h *Site) ownOrigin(origin string) bool {
	if origin == h.opts.Origin {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Scheme+"://"+u.Host == origin && h.ownHost(u.Host)
}

// ownHost reports whether host (with its port, if any) is APP_URL's or, in
// development, a loopback alias of it.
func (h *Site) ownHost(host string) bool {
	app, err := url.Parse(h.opts.Origin)
	if err != nil || host == app.Host {
		return err == nil
	}
	if !h.opts.Development {
		return false
	}
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = host, ""
	}
	return port == app.Port() && loopback(name) && loopback(app.Hostname())
}

func loopback(name string) bool {
	ip := net.ParseIP(name)
	return name == "localhost" || ip != nil && ip.IsLoopback()
}
