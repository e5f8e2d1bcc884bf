package api

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
	"github.com/valyala/fasthttp"
	"golang.org/x/sync/semaphore"

	"coffer/api/httperr"
)

const headerRequestID = "X-Request-Id"

// requestID tags the request and the response with an id: the client's
// own when it is short and plain, else a new one.
func requestID(c *fiber.Ctx) error {
	id := c.Get(headerRequestID)
	if !saneRequestID(id) {
		id = utils.UUIDv4()
	} else {
		id = strings.Clone(id)
	}
	httperr.SetRequestID(c, id)
	c.Set(headerRequestID, id)
	return c.Next()
}

// deadline gives the request's context a deadline: the store and Redis
// calls made with it end there, and the answer is a 503.
func deadline(d time.Duration) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx, cancel := context.WithTimeout(c.UserContext(), d)
		defer cancel()
		c.SetUserContext(ctx)
		return c.Next()
	}
}

// inTurn lets n requests run at once and has the others wait for their
// turn in the order they came (x/sync's semaphore is first in, first
// out). database/sql hands a connection one request frees to a random
// one of those waiting, so past the pool's size a request could wait any
// number of turns while later ones went ahead of it. The health checks and the static files, which read no database, skip the
// queue; a request whose deadline passes while it waits gets the 503 a
// full pool gives.
func inTurn(n int) fiber.Handler {
	turns := semaphore.NewWeighted(int64(n))
	return func(c *fiber.Ctx) error {
		switch p := c.Path(); {
		case p == "/healthz", p == "/readyz", strings.HasPrefix(p, "/static/"):
			return c.Next()
		}
		if err := turns.Acquire(c.UserContext(), 1); err != nil {
			return httperr.Unavailable(httperr.MsgUnavailable, err)
		}
		defer turns.Release(1)
		return c.Next()
	}
}

// uploadSize lets the routes that take a file (the imports of the JSON
// API and of the screens) read bodies up to uploadLimit; every other
// request stays within the app's bodyLimit. fasthttp calls it with the
// request's head, so a body over the limit is refused by its
// Content-Length before any of it is read.
func uploadSize(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if !h.IsPost() {
		return fasthttp.RequestConfig{}
	}
	path, _, _ := strings.Cut(string(h.RequestURI()), "?")
	switch strings.TrimSuffix(path, "/") {
	case "/api/v1/imports", "/api/v1/imports/preflight", "/imports":
		return fasthttp.RequestConfig{MaxRequestBodySize: uploadLimit}
	}
	return fasthttp.RequestConfig{}
}

// safeHeaders are on every answer, screens first: no content sniffing,
// and no full URL (which may hold a reset or invitation token) sent to
// another site in Referer.
func safeHeaders(c *fiber.Ctx) error {
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	return c.Next()
}

// jsonCharset labels JSON answers with their charset, as the API promises;
// fiber's c.JSON says only application/json.
func jsonCharset(c *fiber.Ctx) error {
	err := c.Next()
	if string(c.Response().Header.ContentType()) == fiber.MIMEApplicationJSON {
		c.Response().Header.SetContentType(fiber.MIMEApplicationJSONCharsetUTF8)
	}
	return err
}

func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		b := id[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '.' || b == '_' || b == '-') {
			return false
		}
	}
	return true
}

// noRoute is mounted after every route, so it runs only for a request
// that no route took. fiber's own answer is then a 404 that read like a
// missing record (or a 405 when the path takes other methods, kept); the
// 404 becomes one that names the route.
func noRoute(c *fiber.Ctx) error {
	err := c.Next()
	var fe *fiber.Error
	if errors.As(err, &fe) && fe.Code == fiber.StatusNotFound {
		return httperr.RouteNotFound(c.Method(), c.Path())
	}
	return err
}
