package simplefin_test

import (
	"log/slog"
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
// the budget's Redis when they need them.
func newHandlers(t *testing.T) (*simplefin.Handlers, *models.Store, asynq.RedisClientOpt) {
	t.Helper()
	store := modelstest.NewStore(t)
	opt := modelstest.Redis(t, redisDB)
	rdb := opt.MakeRedisClient().(redis.UniversalClient)
	t.Cleanup(func() { rdb.Close() })
	log := slog.New(slog.NewTextHandler(bridgetest.LeakGuard{T: t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return &simplefin.Handlers{Store: store, Queue: asynq.NewClientFromRedisClient(rdb), Log: log}, store, opt
}
