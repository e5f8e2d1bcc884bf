package simplefin_test

import (
	"testing"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/modelstest"
)

// redisDB is this package's own Redis database: `go test ./jobs/...` runs
// it beside the jobs tests, which use 12.
const redisDB = 10

// newHandlers builds SimpleFIN handlers on a throwaway store and the test
// Redis, logging through the leak guard; tests add the Bridge client and
// set the budget's Redis (the one returned) when they need them.
func newHandlers(t *testing.T) (*simplefin.Handlers, *models.Store, redis.UniversalClient) {
	t.Helper()
	store := modelstest.NewStore(t)
	_, rdb := modelstest.RedisClient(t, redisDB)
	return &simplefin.Handlers{Store: store, Queue: asynq.NewClientFromRedisClient(rdb), Log: bridgetest.Logger(t)}, store, rdb
}
