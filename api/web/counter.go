package web

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// CountWindow counts a hit in a window that starts with the first hit.
func CountWindow(ctx context.Context, rdb redis.UniversalClient, key string, window time.Duration) (int64, error) {
	pipe := rdb.Pipeline()
	incr := pipe.Incr(ctx, key)
	pipe.ExpireNX(ctx, key, window)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	return incr.Val(), nil
}
