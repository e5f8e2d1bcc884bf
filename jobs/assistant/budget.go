package assistant

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// usageKey counts a family's tokens of one UTC day.
func usageKey(familyID uuid.UUID, day time.Time) string {
	return "assistant:tokens:" + familyID.String() + ":" + day.UTC().Format(time.DateOnly)
}

// Usage is the tokens a family's assistant replies used on the UTC day of
// day, as counted against ASSISTANT_DAILY_TOKENS.
func Usage(ctx context.Context, rdb redis.UniversalClient, familyID uuid.UUID, day time.Time) (int, error) {
	n, err := rdb.Get(ctx, usageKey(familyID, day)).Int()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}

// spend adds n tokens to the family's count of today; the key outlives
// the day by one so that the day's figure stays readable after midnight.
func spend(ctx context.Context, rdb redis.UniversalClient, familyID uuid.UUID, day time.Time, n int) error {
	if n <= 0 {
		return nil
	}
	key := usageKey(familyID, day)
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.IncrBy(ctx, key, int64(n))
		p.Expire(ctx, key, 48*time.Hour)
		return nil
	})
	return err
}
