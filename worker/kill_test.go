package worker_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"coffer/jobs"
	"coffer/jobs/assistant"
	"coffer/jobs/simplefin"
	"coffer/models"
	"coffer/models/modelstest"
	"coffer/worker"
)

// killer stops a worker at one hook point: the run that gets there for
// the nth time, and every run that gets there after it, wait for their
// worker to stop, as a killed process would stop there, its committed work
// kept and nothing after it done.
type killer struct {
	point   string
	nth     int // 1: the first time
	reached chan struct{}

	mu      sync.Mutex
	seen    int
	stopped map[string]bool // task ids of the runs held at the point
}

func newKiller(point string, nth int) *killer {
	return &killer{point: point, nth: nth, reached: make(chan struct{}), stopped: map[string]bool{}}
}

// hook is the Hook of the handlers under test.
func (k *killer) hook(ctx context.Context, point string) {
	if point != k.point {
		return
	}
	id, _ := asynq.GetTaskID(ctx)
	k.mu.Lock()
	k.seen++
	hold := k.seen >= k.nth
	if hold {
		k.stopped[id] = true
	}
	if k.seen == k.nth {
		close(k.reached)
	}
	k.mu.Unlock()
	if hold {
		<-ctx.Done()
	}
}

// held lists the task ids of the runs held at the point.
func (k *killer) held() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var ids []string
	for id := range k.stopped {
		ids = append(ids, id)
	}
	return ids
}

// killQuery is a query hook that sends the statements matching match
// (before or after they ran) to the killer's point: for work done row by
// row inside models, where a job has no hook point of its own.
type killQuery struct {
	k      *killer
	match  func(query string) bool
	before bool // hold before the statement runs (it then fails, rolled back)
}

func (q *killQuery) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	if q.before && q.match(e.Query) {
		q.k.hook(ctx, q.k.point)
	}
	return ctx
}

func (q *killQuery) AfterQuery(ctx context.Context, e *bun.QueryEvent) {
	if !q.before && e.Err == nil && q.match(e.Query) {
		q.k.hook(ctx, q.k.point)
	}
}

// hookedStore is store with q on its queries, sharing its sealer.
func hookedStore(store *models.Store, q *killQuery) *models.Store {
	s := models.NewStore(store.DB().WithQueryHook(q))
	s.Secrets = store.Secrets
	return s
}

// taskEnds is a log handler that notes which task runs have returned, from
// the worker's "task done/failed/deferred" lines.
type taskEnds struct {
	mu    sync.Mutex
	ended map[string]int
}

func (e *taskEnds) Enabled(context.Context, slog.Level) bool { return true }
func (e *taskEnds) WithAttrs([]slog.Attr) slog.Handler       { return e }
func (e *taskEnds) WithGroup(string) slog.Handler            { return e }

func (e *taskEnds) Handle(_ context.Context, r slog.Record) error {
	if !strings.HasPrefix(r.Message, "task ") {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "task_id" {
			e.mu.Lock()
			e.ended[a.Value.String()]++
			e.mu.Unlock()
		}
		return true
	})
	return nil
}

func (e *taskEnds) has(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ended[id] > 0
}

// killRig is one database and one Redis on which workers are started and
// killed like processes.
type killRig struct {
	store *models.Store
	opt   asynq.RedisClientOpt
	rdb   redis.UniversalClient
	queue *asynq.Client
	insp  *asynq.Inspector
	log   *slog.Logger
	ends  *taskEnds
}

func newKillRig(t *testing.T) *killRig {
	t.Helper()
	r := &killRig{store: modelstest.NewStore(t), log: discardLog(), ends: &taskEnds{ended: map[string]int{}}}
	r.opt, r.rdb = modelstest.RedisClient(t, redisDB)
	r.queue = asynq.NewClientFromRedisClient(r.rdb)
	r.insp = asynq.NewInspectorFromRedisClient(r.rdb)
	return r
}

// handlers are the generic handlers on store (the rig's when nil), with hook.
func (r *killRig) handlers(store *models.Store, hook func(context.Context, string)) *jobs.Handlers {
	if store == nil {
		store = r.store
	}
	return &jobs.Handlers{Store: store, Queue: r.queue, Log: r.log, Hook: hook}
}

// options is a worker with h and a (nil: none), and the SimpleFIN
// handlers: the worker shares the usual queues of this Redis database with
// the package's other tests, and may meet their leftovers. Stopped, its
// running tasks get almost no time and go back to the queue.
func (r *killRig) options(h *jobs.Handlers, a *assistant.Handlers) worker.Options {
	return worker.Options{Redis: r.opt, Handlers: h, Assistant: a, Logger: slog.New(r.ends), Concurrency: 4,
		SimpleFIN: &simplefin.Handlers{Store: h.Store, Queue: r.queue, Log: r.log, Redis: r.rdb, Bridge: fakeBridgeClient(),
			Options: simplefin.Options{RetryBase: 10 * time.Millisecond}},
		BalanceSweepCron: "@every 1h", ShutdownTimeout: 10 * time.Millisecond}
}

// kill runs a worker with o, calls start, waits for k's point, stops the
// worker the way SIGTERM does and waits until the held runs have returned,
// so that they cannot race the fresh worker that follows.
func (r *killRig) kill(t *testing.T, o worker.Options, k *killer, start func()) {
	t.Helper()
	stop := runWorker(t, o)
	start()
	select {
	case <-k.reached:
	case <-time.After(20 * time.Second):
		t.Fatalf("no run reached %q", k.point)
	}
	stop()
	for _, id := range k.held() {
		waitFor(t, "the stopped run "+id+" to return", func() (bool, string) { return r.ends.has(id), "still running" })
	}
}

// enqueue queues task and returns its id.
func (r *killRig) enqueue(t *testing.T, task *asynq.Task) string {
	t.Helper()
	info, err := r.queue.Enqueue(task)
	if err != nil {
		t.Fatal(err)
	}
	return info.ID
}

// waitGone waits until the tasks of queue with ids have run to success and
// left Redis: no run of theirs can change anything after.
func (r *killRig) waitGone(t *testing.T, queue string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		waitFor(t, "task "+id+" to finish", func() (bool, string) {
			info, err := r.insp.GetTaskInfo(queue, id)
			if errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound) {
				return true, ""
			}
			if err != nil {
				return false, err.Error()
			}
			return false, info.State.String() + " " + info.LastErr
		})
	}
}
