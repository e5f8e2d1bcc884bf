package models

import (
	"context"
	"sync"

	"github.com/google/uuid"
)

// ruleSetCache keeps each family's compiled rules with the family's
// rules_version they were read at, so that the pipeline's rules step does
// not read the rules again for every create.
type ruleSetCache struct {
	mu   sync.Mutex
	sets map[uuid.UUID]cachedRuleSet
}

type cachedRuleSet struct {
	version int64
	rules   *RuleSet
}

// maxCachedRuleSets bounds the cache; past it, it starts again empty.
const maxCachedRuleSets = 10_000

func (c *ruleSetCache) get(familyID uuid.UUID, version int64) (*RuleSet, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.sets[familyID]
	return e.rules, ok && e.version == version
}

// put keeps rs, read at or after version; a set of an older version than
// the one kept is not kept.
func (c *ruleSetCache) put(familyID uuid.UUID, version int64, rs *RuleSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.sets[familyID]; ok && e.version > version {
		return
	}
	if len(c.sets) >= maxCachedRuleSets {
		clear(c.sets)
	}
	c.sets[familyID] = cachedRuleSet{version: version, rules: rs}
}

type familyKey struct{}

// WithFamily returns ctx carrying f as the request's credential read it
// (its API key or token, with the family's rules_version). The rules step
// then takes the family's compiled rules from this process's cache when
// they were read at that version. It is safe because every change to a
// family's rules (or to a record they name) bumps rules_version (a
// trigger on each such table) and announces an auth change, which makes every instance read the
// credential, and so the family, again.
func WithFamily(ctx context.Context, f *Family) context.Context {
	return context.WithValue(ctx, familyKey{}, f)
}

// rulesChanged announces a change to the family's rules, or to a
// category, merchant or tag they may name, after the commit, like a change
// of a grant. The count itself (families.rules_version) goes up in the
// database, by the triggers on those tables, whatever writes them.
func (s *Store) rulesChanged(ctx context.Context) error {
	s.authChange(ctx)
	return nil
}

// familyRules returns the family's active rules: from the cache when the
// request's family (WithFamily) names the version they were read at, else
// from the database.
func (s *Store) familyRules(ctx context.Context, familyID uuid.UUID) (*RuleSet, error) {
	f, known := ctx.Value(familyKey{}).(*Family)
	known = known && f != nil && f.ID == familyID && s.ruleSets != nil
	if known {
		if rs, ok := s.ruleSets.get(familyID, f.RulesVersion); ok {
			return rs, nil
		}
	}
	rs, err := s.ActiveRules(ctx, familyID)
	if err == nil && known {
		// Read after the version the request saw: never older than it.
		s.ruleSets.put(familyID, f.RulesVersion, rs)
	}
	return rs, err
}
