package worker

import (
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
)

// EmbeddedRedis starts the in-process Redis of the embedded mode on a
// loopback port; stop ends it. Queued jobs live in memory only.
func EmbeddedRedis() (opt asynq.RedisClientOpt, stop func(), err error) {
	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr("127.0.0.1:0"); err != nil {
		return asynq.RedisClientOpt{}, nil, fmt.Errorf("start in-process Redis: %w", err)
	}
	// miniredis keeps its own clock; moving it forward makes TTLs (rate
	// limit windows, unique-task locks) expire in real time.
	ticker := time.NewTicker(time.Second)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ticker.C:
				mr.FastForward(time.Second)
			case <-done:
				return
			}
		}
	}()
	return asynq.RedisClientOpt{Addr: mr.Addr()}, func() { ticker.Stop(); close(done); mr.Close() }, nil
}
