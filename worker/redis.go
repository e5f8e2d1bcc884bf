package worker

import (
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// RequestRedis is the client that requests and jobs use for counters,
// budgets and enqueuing. With Redis away a request answers 503 within about
// timeout, not after go-redis's 3 s read timeout and three retries (a dead
// pooled connection is dropped when taken, so a retry buys little); asynq's
// own server connections keep its defaults.
func RequestRedis(opt asynq.RedisConnOpt, timeout time.Duration) redis.UniversalClient {
	o, ok := opt.(asynq.RedisClientOpt)
	if !ok {
		return opt.MakeRedisClient().(redis.UniversalClient)
	}
	return redis.NewClient(&redis.Options{Network: o.Network, Addr: o.Addr, Username: o.Username, Password: o.Password,
		DB: o.DB, TLSConfig: o.TLSConfig, PoolSize: o.PoolSize, MaxRetries: -1,
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, PoolTimeout: timeout})
}
