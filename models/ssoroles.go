package models

import (
	"encoding/json"
	"math"
	"strconv"
)

// MaxGroups is the most groups a claim may carry; a longer list counts as
// absent (spec/sso.md §7.1).
const MaxGroups = 1000

// RoleDecision is the role that a provider's mappings give a person
// (spec/sso.md §7.1, steps 1 to 3). The guards of step 4 are
// ApplyMappedRole's.
type RoleDecision struct {
	Mapped        bool     // the provider has mappings; without them a login never changes a role
	Role          string   // the target role; meaningful only when Mapped
	MatchedGroups []string // groups that produced a candidate, in the order of the claim
}

// HasMappings reports whether logins through p recompute roles: it has
// group mappings or rule conditions.
func HasMappings(p *SSOProvider, rules *RoleMapping) bool {
	return len(p.GroupMappings) > 0 || rules != nil && len(rules.Conditions) > 0
}

// GroupsFromClaim reads the groups of a claim or attribute: a list of
// strings, or one string for one group. Any other shape, or more than
// MaxGroups entries, is absent (present false).
func GroupsFromClaim(v any) (groups []string, present bool) {
	switch x := v.(type) {
	case string:
		if x == "" {
			return []string{}, true
		}
		return []string{x}, true
	case []string:
		if len(x) > MaxGroups {
			return nil, false
		}
		return append([]string{}, x...), true
	case []any:
		if len(x) > MaxGroups {
			return nil, false
		}
		groups = make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			groups = append(groups, s)
		}
		return groups, true
	}
	return nil, false
}

// ComputeRole computes the role a person with groups (ignored unless
// groupsPresent) and claims gets through p: the highest role among the
// group mappings whose group is in groups (exact, case-sensitive) and the
// rule conditions that match; none gives the provider's default role.
func ComputeRole(p *SSOProvider, rules *RoleMapping, groups []string, groupsPresent bool, claims map[string]any) RoleDecision {
	if !groupsPresent {
		groups = nil
	}
	inG := make(map[string]bool, len(groups))
	for _, g := range groups {
		inG[g] = true
	}
	best := ""
	matched := map[string]bool{}
	candidate := func(role string) {
		if roleRank(role) > roleRank(best) {
			best = role
		}
	}
	for _, m := range p.GroupMappings {
		if inG[m.Group] && ValidRole(m.Role) {
			candidate(m.Role)
			matched[m.Group] = true
		}
	}
	if rules != nil {
		for _, c := range rules.Conditions {
			if !claimMatches(claims[c.Attribute], c.Value) {
				continue
			}
			groupOK := len(c.Groups) == 0
			for _, g := range c.Groups {
				if inG[g] {
					groupOK = true
					matched[g] = true
				}
			}
			if groupOK {
				candidate(c.Role)
			}
		}
	}
	if best == "" {
		best = p.DefaultRole
		if !ValidRole(best) {
			best = RoleMember
		}
	}
	d := RoleDecision{Mapped: HasMappings(p, rules), Role: best, MatchedGroups: []string{}}
	for _, g := range groups {
		if matched[g] {
			d.MatchedGroups = append(d.MatchedGroups, g)
			delete(matched, g)
		}
	}
	return d
}

// claimMatches reports whether claim equals want or, as a list, contains
// it. Values are compared as text: a string as itself, a boolean or a
// number as its JSON text (numbers in a canonical form, so 1, 1.0 and
// "1" match). An absent claim matches nothing.
func claimMatches(claim, want any) bool {
	w, ok := scalarText(want)
	if !ok || claim == nil {
		return false
	}
	switch list := claim.(type) {
	case []any:
		for _, e := range list {
			if t, ok := scalarText(e); ok && t == w {
				return true
			}
		}
		return false
	case []string:
		for _, e := range list {
			if e == w {
				return true
			}
		}
		return false
	}
	t, ok := scalarText(claim)
	return ok && t == w
}

// scalarText is the comparison text of a string, boolean or number.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case json.Number:
		return numberText(string(x)), true
	case float64:
		return numberText(strconv.FormatFloat(x, 'g', -1, 64)), true
	case float32:
		return numberText(strconv.FormatFloat(float64(x), 'g', -1, 32)), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	}
	return "", false
}

// numberText puts a JSON number into one form: integers exactly as
// digits, others as the shortest float text.
func numberText(s string) string {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return strconv.FormatInt(i, 10)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
