package rest

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models/modelstest"
)

// redisDB is the api package's Redis database; the keys here are new
// uuids, so running beside its tests is safe.
const redisDB = 11

// TestLimiterLeases: two processes' limiters on one Redis counter hand
// out every number up to the limit once, so the limit holds exactly
// across them; a busy credential takes its numbers from Redis in leases.
func TestLimiterLeases(t *testing.T) {
	_, rdb := modelstest.RedisClient(t, redisDB)
	now := time.Date(2026, 11, 24, 10, 30, 0, 0, time.UTC)
	window := strconv.FormatInt(now.Truncate(time.Hour).Unix(), 10)

	t.Run("two processes, one limit", func(t *testing.T) {
		key := uuid.New()
		procs := []*limiter{newLimiter(rdb, 300), newLimiter(rdb, 300)}
		seen := map[int64]bool{}
		for i := range 300 {
			n, err := procs[i%2].take(t.Context(), key, now)
			if err != nil {
				t.Fatal(err)
			}
			if n > 300 || seen[n] {
				t.Fatalf("request %d got number %d (seen before: %v)", i, n, seen[n])
			}
			seen[n] = true
		}
		for i := range 2 {
			if n, _ := procs[i].take(t.Context(), key, now); n <= 300 {
				t.Errorf("the 301st request on process %d got %d", i, n)
			}
		}
	})

	t.Run("one process counts exactly", func(t *testing.T) {
		key := uuid.New()
		l := newLimiter(rdb, 3)
		for want := int64(1); want <= 5; want++ {
			if n, _ := l.take(t.Context(), key, now); n != want {
				t.Fatalf("request %d got %d", want, n)
			}
		}
	})

	t.Run("many at once waste no number", func(t *testing.T) {
		key := uuid.New()
		l := newLimiter(rdb, 100_000_000)
		var mu sync.Mutex
		seen := map[int64]bool{}
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for range 50 {
					n, err := l.take(t.Context(), key, now)
					mu.Lock()
					if err != nil || seen[n] {
						t.Errorf("number %d (%v) handed out twice", n, err)
					}
					seen[n] = true
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		held := int64(0)
		for _, run := range l.leases[key].runs {
			held += run[1] - run[0] + 1
		}
		counted, _ := rdb.Get(t.Context(), "coffer:ratelimit:api:"+key.String()+":"+window).Int64()
		if counted != int64(len(seen))+held {
			t.Errorf("Redis counted %d: %d handed out and %d held", counted, len(seen), held)
		}
	})

	t.Run("leases", func(t *testing.T) {
		key := uuid.New()
		l := newLimiter(rdb, 100_000_000)
		for want := int64(1); want <= 1000; want++ {
			if n, _ := l.take(t.Context(), key, now); n != want {
				t.Fatalf("request %d got %d", want, n)
			}
		}
		// 1 + 2 + 4 + 8 + 16 + 32 + 32·30 = 1,023: 36 round trips for
		// 1,000 requests, and a lease of 23 numbers left.
		got, err := rdb.Get(t.Context(), "coffer:ratelimit:api:"+key.String()+":"+window).Int64()
		if err != nil || got != 1023 {
			t.Errorf("Redis counter %d (%v), want 1023", got, err)
		}
		// The next hour starts over, from a lease of one.
		if n, _ := l.take(t.Context(), key, now.Add(time.Hour)); n != 1 {
			t.Errorf("first request of the next hour got %d", n)
		}
	})
}
