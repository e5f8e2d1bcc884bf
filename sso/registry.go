package sso

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"coffer/models"
)

// Redis names of the provider version, which every committed change bumps.
const (
	VersionKey     = "sso:providers:version"
	ChangedChannel = "sso:providers:changed"
)

// ErrUnavailable means a provider exists and is enabled but cannot be used
// now: its secret does not open, or its discovery document cannot be read.
var ErrUnavailable = errors.New("sso: provider unavailable")

// Registry holds every provider and the relying parties built from them,
// tagged with the version it loaded. Each use compares the tag with the
// version in Redis (one GET) and reloads from the database when another
// process changed a provider, so a change on one web instance is in force
// on the next request everywhere, without a restart.
type Registry struct {
	store *models.Store
	redis redis.UniversalClient
	o     Options
	log   *slog.Logger

	mu       sync.Mutex
	version  int64 // -1: nothing loaded
	loadedAt time.Time
	byName   map[string]*Entry
	byID     map[uuid.UUID]*Entry
}

// maxAge bounds how long a loaded set is trusted without a version change:
// a change whose announcement never reached Redis is still in force
// everywhere within this time.
const maxAge = time.Minute

// Entry is one provider with its relying party, built on first use.
type Entry struct {
	Provider *models.SSOProvider

	mu    sync.Mutex
	oauth *OAuth
	saml  *SAML
}

// NewRegistry returns an empty registry; it loads on first use.
func NewRegistry(store *models.Store, rdb redis.UniversalClient, o Options, log *slog.Logger) *Registry {
	return &Registry{store: store, redis: rdb, o: o, log: log, version: -1}
}

// Options returns the settings the registry builds relying parties with.
func (r *Registry) Options() Options { return r.o }

// snapshot returns the providers as of the current version. When Redis
// cannot be read, it reads the database for this call only.
func (r *Registry) snapshot(ctx context.Context) (map[string]*Entry, map[uuid.UUID]*Entry, error) {
	v, err := r.redis.Get(ctx, VersionKey).Int64()
	if errors.Is(err, redis.Nil) {
		v, err = 0, nil
	}
	if err != nil {
		r.log.Warn("sso: provider version unreadable; reading the database", "err", err)
		// Forget the loaded set: changes made while Redis was away may
		// never have bumped the version.
		r.mu.Lock()
		r.version = -1
		r.mu.Unlock()
		return r.load(ctx)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.o.now()
	if v == r.version && now.Sub(r.loadedAt) < maxAge {
		return r.byName, r.byID, nil
	}
	byName, byID, err := r.load(ctx)
	if err != nil {
		return nil, nil, err
	}
	r.version, r.loadedAt, r.byName, r.byID = v, now, byName, byID
	return byName, byID, nil
}

func (r *Registry) load(ctx context.Context) (map[string]*Entry, map[uuid.UUID]*Entry, error) {
	ps, err := r.store.SSOProviders(ctx)
	if err != nil {
		return nil, nil, err
	}
	byName := make(map[string]*Entry, len(ps))
	byID := make(map[uuid.UUID]*Entry, len(ps))
	for i := range ps {
		e := &Entry{Provider: &ps[i]}
		byName[e.Provider.Name] = e
		byID[e.Provider.ID] = e
	}
	return byName, byID, nil
}

// Enabled lists the enabled providers by name, for the login page.
func (r *Registry) Enabled(ctx context.Context) ([]*Entry, error) {
	byName, _, err := r.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*Entry, 0, len(byName))
	for _, e := range byName {
		if e.Provider.Enabled {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *Entry) int { return strings.Compare(a.Provider.Name, b.Provider.Name) })
	return out, nil
}

// ByName returns a provider, enabled or not; unknown is models.ErrNotFound.
func (r *Registry) ByName(ctx context.Context, name string) (*Entry, error) {
	byName, _, err := r.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if e, ok := byName[name]; ok {
		return e, nil
	}
	return nil, models.ErrNotFound
}

// ByID returns a provider, enabled or not; unknown is models.ErrNotFound.
func (r *Registry) ByID(ctx context.Context, id uuid.UUID) (*Entry, error) {
	_, byID, err := r.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if e, ok := byID[id]; ok {
		return e, nil
	}
	return nil, models.ErrNotFound
}

// Changed announces a committed provider change to every instance. It
// tries three times; if Redis stays away, every instance still reloads
// within maxAge, and this one at once.
func (r *Registry) Changed(ctx context.Context) error {
	r.mu.Lock()
	r.version = -1
	r.mu.Unlock()
	var err error
	for attempt := range 3 {
		var v int64
		if v, err = r.redis.Incr(ctx, VersionKey).Result(); err == nil {
			return r.redis.Publish(ctx, ChangedChannel, v).Err()
		}
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
	return err
}

// Watch drops the loaded providers whenever a change is published, so the
// next request reloads even before it compares versions. It returns when
// ctx ends.
func (r *Registry) Watch(ctx context.Context) {
	sub := r.redis.Subscribe(ctx, ChangedChannel)
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-sub.Channel():
			if !ok {
				return
			}
			r.mu.Lock()
			r.version = -1
			r.mu.Unlock()
		}
	}
}

// OAuth returns the provider's OIDC or OAuth 2.0 relying party, building
// it on first use.
func (r *Registry) OAuth(ctx context.Context, e *Entry) (*OAuth, error) {
	return buildOnce(r, e, &e.oauth, models.ColClientSecret, "client secret", "relying party", func(secret string) (*OAuth, error) {
		return NewOAuth(ctx, e.Provider, secret, customMappings(e.Provider), r.o)
	})
}

// SAML returns the provider's SAML service provider, building it on first
// use.
func (r *Registry) SAML(e *Entry) (*SAML, error) {
	return buildOnce(r, e, &e.saml, models.ColSPPrivateKey, "SP private key", "service provider", func(key string) (*SAML, error) {
		return NewSAML(e.Provider, key, r.o)
	})
}

// buildOnce returns *built, or builds it under e's lock from the
// provider's sealed secret col and keeps it. A failure is logged (what
// and secretName say which) and not kept: the next sign-in tries again.
func buildOnce[T any](r *Registry, e *Entry, built **T, col, secretName, what string, build func(secret string) (*T, error)) (*T, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if *built != nil {
		return *built, nil
	}
	secret, err := r.store.ProviderSecret(e.Provider, col)
	if err != nil {
		r.log.Error("sso: "+secretName+" unreadable", "provider", e.Provider.Name)
		return nil, ErrUnavailable
	}
	v, err := build(secret)
	if err != nil {
		r.log.Error("sso: "+what, "provider", e.Provider.Name, "err", err)
		return nil, ErrUnavailable
	}
	*built = v
	return v, nil
}

// customMappings reads rules.custom_mappings; rules were validated on save.
func customMappings(p *models.SSOProvider) map[string]string {
	rules, err := models.ParseRoleMapping(models.Str(p.Rules), p.Strategy)
	if err != nil {
		return nil
	}
	return rules.CustomMappings
}
