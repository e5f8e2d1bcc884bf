package signin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

func failKeyAccount(email string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(email))))
	return "login:fail:acct:" + hex.EncodeToString(sum[:])
}

func failKeyIP(ip string) string { return "login:fail:ip:" + ip }

// claimScript takes one password attempt from each counter in KEYS, whose
// limits are ARGV[1..#KEYS] and whose window is ARGV[#KEYS+1] ms. It
// returns 0 when the attempt was counted, else the milliseconds until the
// longest lockout ends, counting nothing. One script, so that parallel
// attempts cannot all read a count under the limit before any of them
// adds to it: the count is taken before the password is checked. The
// count that reaches a limit restarts that window, so a lockout lasts the
// whole window whenever the failures came.
var claimScript = redis.NewScript(`
local window = tonumber(ARGV[#KEYS + 1])
local wait = 0
for i = 1, #KEYS do
  if tonumber(redis.call('GET', KEYS[i]) or '0') >= tonumber(ARGV[i]) then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 then
      redis.call('PEXPIRE', KEYS[i], window)
      ttl = window
    end
    if ttl > wait then wait = ttl end
  end
end
if wait > 0 then return wait end
for i = 1, #KEYS do
  local n = redis.call('INCR', KEYS[i])
  if n == 1 or n == tonumber(ARGV[i]) or redis.call('PTTL', KEYS[i]) < 0 then
    redis.call('PEXPIRE', KEYS[i], window)
  end
end
return 0
`)

// releaseScript gives back the attempt of a right password: the account's
// failures are forgiven (KEYS[1] deleted) and the IP's count (KEYS[2]) goes
// back down, so that people signing in successfully behind one address
// never lock it.
var releaseScript = redis.NewScript(`
redis.call('DEL', KEYS[1])
if tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then
  redis.call('DECR', KEYS[2])
end
return 0
`)

// giveBackScript gives back one attempt on each counter in KEYS without
// forgiving the failures before it.
var giveBackScript = redis.NewScript(`
for i = 1, #KEYS do
  if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then
    redis.call('DECR', KEYS[i])
  end
end
return 0
`)

// claimAttempt counts a password attempt for this email and IP before the
// password is checked, and reports how long sign-in stays refused instead
// when either is at its limit. An attempt stays counted as a failure
// unless releaseAttempt gives it back.
func (h *Handler) claimAttempt(ctx context.Context, email, ip string) (time.Duration, error) {
	keys := []string{failKeyAccount(email), failKeyIP(ip)}
	ms, err := claimScript.Run(ctx, h.redis, keys,
		h.web.MaxFailuresAccount, h.web.MaxFailuresIP, h.web.LockoutWindow.Milliseconds()).Int64()
	if err != nil {
		return 0, signInUnavailable(fmt.Errorf("signin: claim attempt: %w", err))
	}
	if ms <= 0 {
		return 0, nil
	}
	return max(time.Duration(ms)*time.Millisecond, time.Second), nil
}

// releaseAttempt gives back the attempt of a right password.
func (h *Handler) releaseAttempt(ctx context.Context, email, ip string) error {
	if err := releaseScript.Run(ctx, h.redis, []string{failKeyAccount(email), failKeyIP(ip)}).Err(); err != nil {
		return signInUnavailable(fmt.Errorf("signin: release attempt: %w", err))
	}
	return nil
}

// giveBackAttempt gives back the attempt of a right password whose sign-in
// still needs a second factor: the account's earlier failures (wrong
// codes among them) stay counted, so that typing the password again
// never buys more guesses at the code.
func (h *Handler) giveBackAttempt(ctx context.Context, email, ip string) error {
	if err := giveBackScript.Run(ctx, h.redis, []string{failKeyAccount(email), failKeyIP(ip)}).Err(); err != nil {
		return signInUnavailable(fmt.Errorf("signin: give back attempt: %w", err))
	}
	return nil
}
