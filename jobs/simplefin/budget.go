package simplefin

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// reserveScript reserves ARGV[3] request slots in a connection's rolling
// 24 h budget of ARGV[2], at time ARGV[1] (ms), atomically for every
// worker. It drops members older than a day; if the slots do not fit it
// reserves nothing and returns the time (ms) at which enough free up,
// else adds one member per slot and returns 0.
const reserveScript = `
local now = tonumber(ARGV[1])
local budget = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local day = 86400000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - day)
local used = redis.call('ZCARD', KEYS[1])
if used + want > budget then
  local oldest = redis.call('ZRANGE', KEYS[1], used + want - budget - 1, used + want - budget - 1, 'WITHSCORES')
  return tonumber(oldest[2]) + day
end
for i = 1, want do
  redis.call('ZADD', KEYS[1], now, ARGV[4] .. ':' .. i)
end
redis.call('PEXPIRE', KEYS[1], day)
return 0`

// budget counts every request to the Bridge per connection in Redis,
// shared by all workers, so that no connection goes over its daily
// budget however many clicks, retries and schedules there are.
type budget struct {
	rdb   redis.UniversalClient
	limit int
}

func budgetKey(connectionID uuid.UUID) string {
	return "simplefin:budget:{" + connectionID.String() + "}"
}

// reserve takes n slots now, or returns the earliest time they fit.
// The slots are returned so that one whose request never left can be
// given back.
func (b budget) reserve(ctx context.Context, connectionID uuid.UUID, n int, now time.Time) (slots []string, freeAt time.Time, err error) {
	if n > b.limit {
		return nil, now.Add(24 * time.Hour), nil
	}
	member := strconv.FormatInt(now.UnixNano(), 36) + ":" + uuid.NewString()[:8]
	res, err := b.rdb.Eval(ctx, reserveScript, []string{budgetKey(connectionID)}, now.UnixMilli(), b.limit, n, member).Int64()
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("simplefin: reserve request budget: %w", err)
	}
	if res != 0 {
		return nil, time.UnixMilli(res).UTC(), nil
	}
	slots = make([]string, n)
	for i := range slots {
		slots[i] = member + ":" + strconv.Itoa(i+1)
	}
	return slots, time.Time{}, nil
}

// release gives back a slot whose request provably never reached the
// Bridge (DNS or dial failure), so it does not count against the day.
func (b budget) release(ctx context.Context, connectionID uuid.UUID, slot string) error {
	if err := b.rdb.ZRem(ctx, budgetKey(connectionID), slot).Err(); err != nil {
		return fmt.Errorf("simplefin: release request budget: %w", err)
	}
	return nil
}

// used counts the requests of the last 24 h.
func (b budget) used(ctx context.Context, connectionID uuid.UUID, now time.Time) (int, error) {
	n, err := b.rdb.ZCount(ctx, budgetKey(connectionID), strconv.FormatInt(now.Add(-24*time.Hour).UnixMilli()+1, 10), "+inf").Result()
	return int(n), err
}

// DefaultDailyBudget is the request budget per connection and rolling
// 24 h when SIMPLEFIN_DAILY_REQUEST_BUDGET is not set.
const DefaultDailyBudget = 24

// RequestsLast24h counts a connection's requests to the Bridge in the
// last 24 hours, for the API and the settings screen.
func RequestsLast24h(ctx context.Context, rdb redis.UniversalClient, connectionID uuid.UUID, now time.Time) (int, error) {
	return budget{rdb: rdb}.used(ctx, connectionID, now)
}

// RequestsLast24hOf counts the requests of the last 24 hours of several
// connections in one round trip to Redis.
func RequestsLast24hOf(ctx context.Context, rdb redis.UniversalClient, ids []uuid.UUID, now time.Time) (map[uuid.UUID]int, error) {
	from := strconv.FormatInt(now.Add(-24*time.Hour).UnixMilli()+1, 10)
	counts := make([]*redis.IntCmd, len(ids))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			counts[i] = p.ZCount(ctx, budgetKey(id), from, "+inf")
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("simplefin: read request budgets: %w", err)
	}
	out := make(map[uuid.UUID]int, len(ids))
	for i, id := range ids {
		out[id] = int(counts[i].Val())
	}
	return out, nil
}

// BudgetFreeAt returns when the connection's next request fits in its
// budget without reserving it: now when it fits already.
func BudgetFreeAt(ctx context.Context, rdb redis.UniversalClient, connectionID uuid.UUID, limit int, now time.Time) (time.Time, error) {
	scores, err := rdb.ZRangeByScoreWithScores(ctx, budgetKey(connectionID), &redis.ZRangeBy{
		Min: strconv.FormatInt(now.Add(-24*time.Hour).UnixMilli()+1, 10), Max: "+inf"}).Result()
	if err != nil {
		return now, fmt.Errorf("simplefin: read request budget: %w", err)
	}
	if len(scores) < limit {
		return now, nil
	}
	return time.UnixMilli(int64(scores[len(scores)-limit].Score)).Add(24 * time.Hour).UTC(), nil
}
