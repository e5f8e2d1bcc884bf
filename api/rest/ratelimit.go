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
// handed out twice, so no more requests than the limit pass; numbers one
// process holds unused only ever make another refuse early, by little,
// and near the limit not at all (the leases are single numbers there).
type limiter struct {
	rdb   redis.UniversalClient
	limit int

	mu     sync.Mutex
	window int64
	leases map[uuid.UUID]*lease
}

// lease is what a process holds of one credential's counts: runs of
// numbers leased from Redis and not handed out yet. Requests that find it
// empty at the same moment each lease a run; every run is kept, so no
// number is wasted however many requests arrive at once.
type lease struct {
	runs [][2]int64 // first and last number of each run, oldest first
	size int64      // how many to take next time
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
		if len(le.runs) > 0 {
			run := &le.runs[0]
			n := run[0]
			if run[0]++; run[0] > run[1] {
				le.runs = le.runs[1:]
			}
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
	if window != l.window {
		return first, nil
	}
	le := l.leases[keyID]
	if le == nil {
		le = &lease{}
		l.leases[keyID] = le
	}
	if first < last {
		le.runs = append(le.runs, [2]int64{first + 1, last})
	}
	le.size = max(1, min(2*size, maxLease, (int64(l.limit)-last)/16))
	return first, nil
}
