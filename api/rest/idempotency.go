package rest

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"coffer/api/httperr"
	"coffer/api/web"
)

const (
	headerIdempotencyKey = "Idempotency-Key"
	// idempotencyTTL is how long a first answer is kept for replays.
	idempotencyTTL = 24 * time.Hour
	// idempotencyClaim bounds a claim whose process died before it
	// answered; it is far past any request's deadline (REQUEST_TIMEOUT).
	idempotencyClaim = 5 * time.Minute
	// idempotencyWait is how long a request waits for another one with the
	// same key to answer before it gets a 409.
	idempotencyWait   = 2 * time.Second
	idempotencyPoll   = 20 * time.Millisecond
	maxIdempotencyKey = 255
)

// idempotencyRecord is what Redis holds for one key: a claim while the
// first request runs, then its answer.
type idempotencyRecord struct {
	Request     string `json:"request"` // the request's fingerprint
	Done        bool   `json:"done"`
	Status      int    `json:"status,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Body        []byte `json:"body,omitempty"` // gzip: a bulk answer is large, and kept a day
}

// idempotent runs a POST once per Idempotency-Key, the way payment APIs
// do: the same key with the same request (method, path and body) within
// 24 hours gets the first answer again, status and body, without the work
// being done again; with another request it is a 422; while the first is
// still running, a second waits for its answer, briefly, then gets a 409.
// Keys live in Redis per family, so every web process sees them and two
// families' keys never meet. A 5xx answer is not kept: the work may not
// have happened, so a retry does it.
func (h *Handler) idempotent(c *fiber.Ctx) error {
	key := c.Get(headerIdempotencyKey)
	principal := KeyOf(c)
	if key == "" || principal == nil { // no family to keep the key under
		return c.Next()
	}
	if len(key) > maxIdempotencyKey || !printable(key) {
		return httperr.BadRequest("Idempotency-Key must be at most 255 printable ASCII characters")
	}
	ctx := c.UserContext()
	sum := sha256.Sum256([]byte(key))
	rkey := "coffer:idempotency:" + principal.FamilyID.String() + ":" + hex.EncodeToString(sum[:])
	req := sha256.New()
	req.Write([]byte(c.Method() + " " + c.Path() + "\n"))
	req.Write(c.Body())
	fingerprint := hex.EncodeToString(req.Sum(nil))

	claim, _ := json.Marshal(idempotencyRecord{Request: fingerprint})
	deadline := time.Now().Add(idempotencyWait)
	for {
		ok, err := h.redis.SetNX(ctx, rkey, claim, idempotencyClaim).Result()
		if err != nil {
			return fmt.Errorf("api: idempotency claim: %w", err)
		}
		if ok {
			break
		}
		raw, err := h.redis.Get(ctx, rkey).Bytes()
		if errors.Is(err, redis.Nil) {
			continue // answered with a 5xx and released since: claim it again
		}
		if err != nil {
			return fmt.Errorf("api: idempotency read: %w", err)
		}
		var rec idempotencyRecord
		if json.Unmarshal(raw, &rec) != nil {
			return fmt.Errorf("api: idempotency record of %s is unreadable", rkey)
		}
		switch {
		case rec.Request != fingerprint:
			return httperr.Invalid([]string{"Idempotency-Key was already used with another request"})
		case rec.Done:
			body, err := gunzip(rec.Body)
			if err != nil {
				return fmt.Errorf("api: idempotency record of %s: %w", rkey, err)
			}
			c.Set("Idempotent-Replayed", "true")
			c.Set(fiber.HeaderContentType, rec.ContentType)
			return c.Status(rec.Status).Send(body)
		case time.Now().After(deadline):
			return &httperr.Error{Status: fiber.StatusConflict, Code: "conflict",
				Message: "A request with this Idempotency-Key is still in progress; retry it shortly"}
		}
		if err := web.Sleep(ctx, idempotencyPoll); err != nil {
			return err
		}
	}

	answered := false
	defer func() {
		if !answered { // a panic: the claim must not block retries for minutes
			_ = h.redis.Del(context.WithoutCancel(ctx), rkey).Err()
		}
	}()
	if err := c.Next(); err != nil {
		// The answer is what the error handler makes of err; keep that.
		if herr := c.App().ErrorHandler(c, err); herr != nil {
			return herr
		}
	}
	answered = true
	status := c.Response().StatusCode()
	if status >= fiber.StatusInternalServerError {
		if err := h.redis.Del(context.WithoutCancel(ctx), rkey).Err(); err != nil {
			h.log.Warn("idempotency key not released", "request_id", httperr.RequestID(c), "error", err)
		}
		return nil
	}
	rec, _ := json.Marshal(idempotencyRecord{Request: fingerprint, Done: true, Status: status,
		ContentType: string(c.Response().Header.ContentType()), Body: gzipped(c.Response().Body())})
	if err := h.redis.Set(context.WithoutCancel(ctx), rkey, rec, idempotencyTTL).Err(); err != nil {
		// The work is done and answered; a retry with this key within the
		// claim's life gets a 409, after it the work would run again.
		h.log.Error("idempotency answer not stored", "request_id", httperr.RequestID(c), "error", err)
	}
	return nil
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b) // writes to a bytes.Buffer do not fail
	_ = zw.Close()
	return buf.Bytes()
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(zr)
}

// printable reports whether s is visible ASCII and spaces only.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
