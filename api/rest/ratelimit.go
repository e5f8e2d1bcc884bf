package rest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// maxLease is the most counts a process takes from Redis at once.
const maxLease = 32

// limiter counts each credential's requests in the hour's fixed window on
// a Redis counter that every web process shares. A process takes its
// counts from Redis in leases of consecutive numbers: one at first, twice
// as many each time a credential uses up its lease, up to maxLease and
// never more than a sixteenth of what is left of the limit. No number is
// handed out twice, so no more requests than the limit pass; a lease one
// process leaves unused only ever refuses early, by little, and near the
// limit not at all (the leases are single numbers there).
type limiter struct {
	rdb   redis.UniversalClient
	limit int

	mu     sync.Mutex
	window int64
	leases map[uuid.UUID]*lease
}

// lease is a run of counts a process holds for one credential.
type lease struct {
	next, last int64 // the next number to hand out, and the lease's last
	size       int64 // how many to take next time
}

func newLimiter(rdb redis.UniversalClient, limit int) *limiter {
	return &limiter{rdb: rdb, limit: limit, leases: map[uuid.UUID]*lease{}}
}

// take returns the request's number in the credential's window: from
// the process's lease, or from Redis when the lease is used up. It
// returns 0 when there is no limit.
func (l *limiter) take(ctx context.Context, keyID uuid.UUID, now time.Time) (int64, error) {
	if l.limit <= 0 {
		return 0, nil
	}
	window := now.Truncate(time.Hour).Unix()
	l.mu.Lock()
	if window != l.window || len(l.leases) >= keyCacheMax {
		clear(l.leases) // what was left of them counts as used
		l.window = window
	}
	size := int64(1)
	if le := l.leases[keyID]; le != nil {
		if le.next <= le.last {
			n := le.next
			le.next++
			l.mu.Unlock()
			return n, nil
		}
		size = le.size
	}
	l.mu.Unlock()

	key := "coffer:ratelimit:api:" + keyID.String() + ":" + strconv.FormatInt(window, 10)
	pipe := l.rdb.Pipeline()
	incr := pipe.IncrBy(ctx, key, size)
	pipe.ExpireNX(ctx, key, time.Hour+time.Minute)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("api: rate limit: %w", err)
	}
	last := incr.Val()
	first := last - size + 1
	l.mu.Lock()
	defer l.mu.Unlock()
	if le := l.leases[keyID]; window == l.window && (le == nil || le.next > le.last) {
		// A lease taken meanwhile by another request is kept; the
		// rest of this one counts as used.
		l.leases[keyID] = &lease{next: first + 1, last: last,
			size: max(1, min(2*size, maxLease, (int64(l.limit)-last)/16))}
	}
	return first, nil
}
