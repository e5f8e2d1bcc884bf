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
	"github.com/google/uuid"
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
	// DefaultIdempotencyKeysPerFamily bounds the answers one family keeps:
	// a day of keys at the default hourly limit of one busy credential.
	DefaultIdempotencyKeysPerFamily = 10_000
)

// keepScript records a new key (ARGV[2], a Redis key) in its family's
// index KEYS[1] at time ARGV[1] (ms), forgets the index's entries older
// than a day, and past ARGV[3] entries drops the oldest ones with their
// answers. The oldest go, not the new one, because a client expects its
// request to run; what it loses is the replay of a key it sent longest
// ago, which the 24-hour window would drop anyway.
const keepScript = `
local now = tonumber(ARGV[1])
local cap = tonumber(ARGV[3])
local day = 86400000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - day)
redis.call('ZADD', KEYS[1], now, ARGV[2])
local over = redis.call('ZCARD', KEYS[1]) - cap
if over > 0 then
  local old = redis.call('ZRANGE', KEYS[1], 0, over - 1)
  for _, k in ipairs(old) do redis.call('DEL', k) end
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1)
end
redis.call('PEXPIRE', KEYS[1], day)
return over`

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
// Keys live in Redis per credential (an API key, or an OAuth grant across
// its refreshes), so every web process sees them and one member never
// gets another's answer; each family keeps at most idempotencyCap of
// them, the oldest dropped first (see keepScript). A 5xx answer is not
// kept: the work may not have happened, so a retry does it.
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
	rkey := IdempotencyRedisKey(principal.FamilyID, principal.ID, hex.EncodeToString(sum[:]))
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
			if err := h.redis.Eval(ctx, keepScript, []string{idempotencyIndex(principal.FamilyID)},
				h.now().UnixMilli(), rkey, h.idempotencyCap).Err(); err != nil {
				_ = h.redis.Del(context.WithoutCancel(ctx), rkey).Err()
				return fmt.Errorf("api: idempotency index: %w", err)
			}
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

// IdempotencyRedisKey is where the answer to one key (its SHA-256, hex)
// of one credential is kept.
func IdempotencyRedisKey(familyID, credentialID uuid.UUID, keySum string) string {
	return "coffer:idempotency:" + familyID.String() + ":" + credentialID.String() + ":" + keySum
}

// idempotencyIndex is the family's sorted set of its kept keys, by time.
func idempotencyIndex(familyID uuid.UUID) string {
	return "coffer:idempotency:" + familyID.String()
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
