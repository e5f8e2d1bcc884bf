package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"coffer/api/httperr"
)

// A form posted twice (a double click, or back and submit again) must do
// its work once. Every page rendered for a signed-in person gives its
// forms a token of its own: the CSRF token, a dot, and a random nonce
// (Page.CSRF). The first POST carrying that nonce to a path claims it in
// Redis, as the API claims an Idempotency-Key, so every web process sees
// it; when that POST succeeds (a redirect, or a page), the nonce is kept a
// day with where it went. A later POST with the same nonce to the same
// path does nothing and lands where the first went, saying so; one that
// arrives while the first still runs waits for it briefly. A refused
// POST (a 4xx re-rendering the form with its errors, or a 5xx) releases
// the nonce, so the corrected form can be sent. Requests that carry the
// plain CSRF token (the page's script, through the X-CSRF-Token header
// from the page's meta tag) are not affected.
const (
	formOnceTTL   = 24 * time.Hour
	formOnceClaim = 5 * time.Minute // a claim whose process died
	formOnceWait  = 2 * time.Second
	formOncePoll  = 20 * time.Millisecond
	nonceLen      = 22 // 16 random bytes, base64url
)

// MsgFormSentTwice is the message of a form that was sent again.
const MsgFormSentTwice = "This form was already sent, so nothing was done again."

type formOnceRecord struct {
	Done     bool   `json:"done"`
	Location string `json:"location,omitempty"`
}

// formToken is the form field's token of a page: the CSRF token with a
// fresh nonce, or the bare token when there is no Redis or no session.
func (h *Site) formToken(c *fiber.Ctx, csrf string) string {
	if h.opts.Redis == nil || csrf == "" || SessionOf(c) == nil {
		return csrf
	}
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return csrf
	}
	return csrf + "." + base64.RawURLEncoding.EncodeToString(raw)
}

// splitFormToken separates a posted token into the CSRF token and the
// nonce ("" when there is none).
func splitFormToken(got string) (csrf, nonce string) {
	csrf, nonce, _ = strings.Cut(got, ".")
	return csrf, nonce
}

// once runs the rest of the chain once per nonce and path (see above).
func (h *Site) once(c *fiber.Ctx, nonce string) error {
	s := SessionOf(c)
	if h.opts.Redis == nil || s == nil {
		return c.Next()
	}
	if len(nonce) != nonceLen {
		return httperr.Forbidden(httperr.MsgBadCSRF)
	}
	ctx := c.UserContext()
	sum := sha256.Sum256([]byte(nonce + " " + c.Method() + " " + c.Path()))
	key := "coffer:form:" + s.User.ID.String() + ":" + hex.EncodeToString(sum[:])
	claim, _ := json.Marshal(formOnceRecord{})
	deadline := time.Now().Add(formOnceWait)
	for {
		ok, err := h.opts.Redis.SetNX(ctx, key, claim, formOnceClaim).Result()
		if err != nil { // the form is sent unguarded rather than refused
			h.log.Warn("form token not claimed", "request_id", httperr.RequestID(c), "error", err)
			return c.Next()
		}
		if ok {
			break
		}
		raw, err := h.opts.Redis.Get(ctx, key).Bytes()
		if errors.Is(err, redis.Nil) {
			continue // the first was refused and released it since
		}
		if err != nil {
			return fmt.Errorf("api: form record: %w", err)
		}
		var rec formOnceRecord
		if json.Unmarshal(raw, &rec) != nil {
			return fmt.Errorf("api: form record of %s is unreadable", key)
		}
		switch {
		case rec.Done && rec.Location != "":
			return h.Redirect(c, rec.Location, MsgFormSentTwice)
		case rec.Done:
			return &httperr.Error{Status: fiber.StatusConflict, Code: "conflict", Message: MsgFormSentTwice}
		case time.Now().After(deadline):
			return &httperr.Error{Status: fiber.StatusConflict, Code: "conflict",
				Message: "This form is still being sent. Wait a moment, then open the page again."}
		}
		if err := Sleep(ctx, formOncePoll); err != nil {
			return err
		}
	}
	done := false
	release := func() {
		if err := h.opts.Redis.Del(context.WithoutCancel(ctx), key).Err(); err != nil {
			h.log.Warn("form token not released", "request_id", httperr.RequestID(c), "error", err)
		}
	}
	defer func() {
		if !done { // a panic: the form must stay sendable
			release()
		}
	}()
	err := c.Next()
	done = true
	if status := c.Response().StatusCode(); err != nil || status >= fiber.StatusBadRequest {
		release()
		return err
	}
	rec, _ := json.Marshal(formOnceRecord{Done: true, Location: string(c.Response().Header.Peek(fiber.HeaderLocation))})
	if err := h.opts.Redis.Set(context.WithoutCancel(ctx), key, rec, formOnceTTL).Err(); err != nil {
		h.log.Error("form token not kept", "request_id", httperr.RequestID(c), "error", err)
	}
	return nil
}

// Sleep waits d, or less when ctx ends first (its error then).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
