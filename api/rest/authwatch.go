package rest

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// AuthChannel is the Redis channel on which each change to a grant is
// announced, with the auth version it moved AuthVersionKey to.
const AuthChannel = "coffer:auth"

// authPing is how long the watch waits for an announcement before it asks
// whether its connection still answers; a connection that does not answer
// two of them in a row is given up.
const authPing = 2 * time.Second

// AuthWatch follows the auth version through AuthChannel, so that a
// request checks its cached credential against a number in memory instead
// of reading AuthVersionKey from Redis. While the watch is not subscribed
// (at start, or with Redis away) requests read the version from Redis as
// before; a version missed while away is read again on resubscribing.
type AuthWatch struct {
	rdb     redis.UniversalClient
	version atomic.Int64
	live    atomic.Bool
}

// NewAuthWatch returns a watch over rdb's announcements; Run starts it.
func NewAuthWatch(rdb redis.UniversalClient) *AuthWatch {
	return &AuthWatch{rdb: rdb}
}

// Version returns the auth version and true while the watch is
// subscribed, and false when the caller must read it from Redis.
func (w *AuthWatch) Version() (int64, bool) {
	if w == nil || !w.live.Load() {
		return 0, false
	}
	return w.version.Load(), true
}

// saw takes a version this process announced itself.
func (w *AuthWatch) saw(v int64) {
	if w != nil {
		w.version.Store(v)
	}
}

// Run follows the announcements until ctx ends, subscribing again after
// each failure: at once after a connection that worked, then less and
// less often (up to every 2 s) while Redis stays away.
func (w *AuthWatch) Run(ctx context.Context) {
	wait := 50 * time.Millisecond
	for ctx.Err() == nil {
		if w.follow(ctx) {
			wait = 50 * time.Millisecond
		} else {
			wait = min(2*wait, 2*time.Second)
		}
		w.live.Store(false)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// follow subscribes, reads the version (after subscribing, so that no
// change falls between the two), and takes each announced version until
// the connection fails. It reports whether it got as far as following.
func (w *AuthWatch) follow(ctx context.Context) bool {
	ps := w.rdb.Subscribe(ctx, AuthChannel)
	defer ps.Close()
	if _, err := ps.ReceiveTimeout(ctx, authPing); err != nil {
		return false
	}
	v, err := w.rdb.Get(ctx, AuthVersionKey).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return false
	}
	w.version.Store(v)
	w.live.Store(true)
	unanswered := 0
	for {
		msg, err := ps.ReceiveTimeout(ctx, authPing)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			if unanswered++; unanswered > 1 || ps.Ping(ctx) != nil {
				return true
			}
			continue
		}
		if err != nil {
			return true
		}
		unanswered = 0
		if m, ok := msg.(*redis.Message); ok {
			// Any other number means a change, even a smaller one
			// (Redis lost the counter): the cache compares, not orders.
			v, err := strconv.ParseInt(m.Payload, 10, 64)
			if err != nil {
				return true // not ours: start over from the counter
			}
			w.version.Store(v)
		}
	}
}
