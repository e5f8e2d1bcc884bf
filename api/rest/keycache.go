package rest

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"coffer/models"
)

// AuthVersionKey is the Redis counter that every committed change to a
// credential's grant bumps (see models.Store.OnAuthChange), announcing
// the new number on AuthChannel. A web process drops its cached keys as
// soon as the announcement reaches its AuthWatch, or, while the watch is
// not subscribed, on the first request that reads another number here.
const AuthVersionKey = "coffer:auth:version"

// keyTTL bounds how long a cached key is trusted when an announcement
// never reached Redis (it was away when the change committed).
const keyTTL = 15 * time.Second

// keyCacheMax bounds the cache; past it the cache starts over.
const keyCacheMax = 10_000

// AnnounceAuthChange returns the function a store calls after a committed
// change to a grant: it bumps AuthVersionKey and announces the new number
// on AuthChannel, trying three times. A watch that misses the
// announcement (it was away) reads the counter when it subscribes again.
// The process's own watch (nil in a process that serves no API) takes the
// new number before the call returns, so that the process's next request
// never waits on the announcement.
func AnnounceAuthChange(rdb redis.UniversalClient, own *AuthWatch) func(context.Context) {
	return func(ctx context.Context) {
		// The change is committed: a request that ended meanwhile must
		// not stop the announcement.
		ctx = context.WithoutCancel(ctx)
		var version int64
		for attempt := range 3 {
			if version == 0 {
				if version, _ = rdb.Incr(ctx, AuthVersionKey).Result(); version != 0 {
					own.saw(version)
				}
			}
			if version != 0 && rdb.Publish(ctx, AuthChannel, version).Err() == nil {
				return
			}
			time.Sleep(time.Duration(attempt+1) * 50 * time.Millisecond)
		}
	}
}

// keyCache holds the keys this process authenticated recently, tagged with
// the auth version they were read under.
type keyCache struct {
	mu      sync.Mutex
	version int64
	entries map[[sha256.Size]byte]cachedKey
}

type cachedKey struct {
	key  models.APIKey
	read time.Time
}

func newKeyCache() *keyCache {
	return &keyCache{version: -1, entries: map[[sha256.Size]byte]cachedKey{}}
}

// get returns a copy of the key cached under hash if it was read under
// version, not longer ago than keyTTL, and has not expired (an access
// token's principal carries the token's expiry). A newer version empties
// the cache.
func (kc *keyCache) get(hash [sha256.Size]byte, version int64, now time.Time) (*models.APIKey, bool) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	if version != kc.version {
		clear(kc.entries)
		kc.version = version
		return nil, false
	}
	e, ok := kc.entries[hash]
	if !ok || now.Sub(e.read) > keyTTL || e.key.ExpiresAt != nil && !now.Before(*e.key.ExpiresAt) {
		return nil, false
	}
	k := e.key
	return &k, true
}

// put caches k, read from the database after version was read from Redis.
func (kc *keyCache) put(hash [sha256.Size]byte, version int64, k *models.APIKey, now time.Time) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	if version != kc.version {
		clear(kc.entries)
		kc.version = version
	}
	if len(kc.entries) >= keyCacheMax {
		clear(kc.entries)
	}
	kc.entries[hash] = cachedKey{key: *k, read: now}
}

// touched records that the key's last use was written at now.
func (kc *keyCache) touched(hash [sha256.Size]byte, now time.Time) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	if e, ok := kc.entries[hash]; ok {
		e.key.LastUsedAt = &now
		kc.entries[hash] = e
	}
}
