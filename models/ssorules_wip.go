package models

// Temporary until the rules branch lands: group mappings only.

// Rules is the parsed rules JSON of a provider.
type Rules struct{ CustomMappings map[string]string }

// ParseRules parses a provider's rules JSON.
func ParseRules(text, strategy string) (*Rules, error) { return &Rules{}, nil }

// RoleDecision is the role a login computes.
type RoleDecision struct {
	Mapped        bool
	Role          string
	MatchedGroups []string
}

var rank = map[string]int{RoleMember: 1, RoleAdmin: 2, RoleSuperAdmin: 3}

// ComputeRole applies group mappings.
func ComputeRole(p *SSOProvider, rules *Rules, groups []string, groupsPresent bool, claims map[string]any) RoleDecision {
	d := RoleDecision{Mapped: len(p.GroupMappings) > 0}
	best := ""
	for _, m := range p.GroupMappings {
		for _, g := range groups {
			if g == m.Group {
				d.MatchedGroups = append(d.MatchedGroups, g)
				if rank[m.Role] > rank[best] {
					best = m.Role
				}
			}
		}
	}
	if best == "" {
		best = p.DefaultRole
	}
	d.Role = best
	return d
}

// ConditionAttributes names the claims rule conditions read.
func (r *Rules) ConditionAttributes() []string { return nil }

// GroupsFromClaim reads a groups claim.
func GroupsFromClaim(v any) ([]string, bool) {
	switch v := v.(type) {
	case []any:
		out := []string{}
		for _, g := range v {
			s, ok := g.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	case []string:
		return v, true
	case string:
		return []string{v}, true
	}
	return nil, false
}
