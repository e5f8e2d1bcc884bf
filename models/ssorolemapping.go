package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxRoleMappingSize is the largest rules text a provider may hold (64 KiB).
const MaxRoleMappingSize = 64 << 10

// RoleMapping is a provider's optional JSON rules (spec/sso.md §7.2), parsed
// and validated by ParseRoleMapping.
type RoleMapping struct {
	CustomMappings map[string]string   // name → claim or attribute to read it from
	Conditions     []RoleCondition     // extra role candidates
	Hierarchy      map[string][]string // role → roles it implies; validated only
}

// RoleCondition adds Role as a candidate when claim Attribute equals Value
// (a list claim: contains it) and, if Groups is non-empty, the groups
// contain one of them.
type RoleCondition struct {
	Attribute string
	Value     any // string, bool or json.Number
	Groups    []string
	Role      string
}

// Claim returns the claim or attribute a value called name (a
// custom_mappings name such as "email" or "groups") is read from: the
// custom mapping when there is one, else def. r may be nil.
func (r *RoleMapping) Claim(name, def string) string {
	if r != nil {
		if c, ok := r.CustomMappings[name]; ok {
			return c
		}
	}
	return def
}

// ConditionAttributes lists, once each and in order, the claims or attributes
// that conditions read: the values a login keeps in Identity.Claims so
// that a later sync can re-apply the rules. r may be nil.
func (r *RoleMapping) ConditionAttributes() []string {
	var attrs []string
	if r == nil {
		return attrs
	}
	for _, c := range r.Conditions {
		if !slices.Contains(attrs, c.Attribute) {
			attrs = append(attrs, c.Attribute)
		}
	}
	return attrs
}

// mappingNames are the custom_mappings names, in the order messages list
// them.
var mappingNames = []string{"subject", "email", "email_verified", "first_name", "last_name", "name", "groups"}

// allowedMappings lists the custom_mappings names a strategy accepts:
// subject only for OAuth 2.0 (OIDC has sub, SAML its NameID setting),
// groups not for SAML (it has the group attribute field).
func allowedMappings(strategy string) []string {
	var names []string
	for _, n := range mappingNames {
		if n == "subject" && strategy != StrategyOAuth || n == "groups" && strategy == StrategySAML {
			continue
		}
		names = append(names, n)
	}
	return names
}

// maxNameLen bounds claim, attribute and group names in rules.
const maxNameLen = 256

// ParseRoleMapping parses a provider's rules text for a provider of the given
// strategy. Blank text is empty rules. The error, a plain error value,
// names the path of the first problem in document order, as in
// "rules.conditions[1].role: must be member, admin or super_admin".
func ParseRoleMapping(text string, strategy string) (*RoleMapping, error) {
	r := &RoleMapping{}
	if strings.TrimSpace(text) == "" {
		return r, nil
	}
	if len(text) > MaxRoleMappingSize {
		return nil, errors.New("rules: must be at most 64 KiB")
	}
	var raw json.RawMessage
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			at := se.Offset - 1 // the offending byte
			if strings.HasPrefix(se.Error(), "unexpected end") {
				at = se.Offset
			}
			line, col := position(text, at)
			return nil, fmt.Errorf("rules: invalid JSON at line %d, column %d", line, col)
		}
		return nil, errors.New("rules: invalid JSON")
	}
	top, err := members("rules", raw)
	if err != nil {
		return nil, err
	}
	for _, m := range top {
		if isNull(m.raw) {
			continue
		}
		switch m.key {
		case "custom_mappings":
			err = r.parseMappings(m.raw, strategy)
		case "conditions":
			err = r.parseConditions(m.raw)
		case "hierarchy":
			err = r.parseHierarchy(m.raw)
		default:
			err = fmt.Errorf("rules: unknown key %q (allowed: custom_mappings, conditions, hierarchy)", m.key)
		}
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *RoleMapping) parseMappings(raw json.RawMessage, strategy string) error {
	const path = "rules.custom_mappings"
	ms, err := members(path, raw)
	if err != nil {
		return err
	}
	allowed := allowedMappings(strategy)
	r.CustomMappings = map[string]string{}
	for _, m := range ms {
		if !slices.Contains(allowed, m.key) {
			return fmt.Errorf("%s: unknown key %q (allowed: %s)", path, m.key, strings.Join(allowed, ", "))
		}
		var claim string
		if json.Unmarshal(m.raw, &claim) != nil || !nameLen(claim) {
			return fmt.Errorf("%s.%s: must be a claim name of 1 to %d characters", path, m.key, maxNameLen)
		}
		r.CustomMappings[m.key] = claim
	}
	return nil
}

func (r *RoleMapping) parseConditions(raw json.RawMessage) error {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return errors.New("rules.conditions: must be a list")
	}
	r.Conditions = make([]RoleCondition, 0, len(list))
	for i, item := range list {
		c, err := parseCondition(fmt.Sprintf("rules.conditions[%d]", i), item)
		if err != nil {
			return err
		}
		r.Conditions = append(r.Conditions, c)
	}
	return nil
}

func parseCondition(path string, raw json.RawMessage) (RoleCondition, error) {
	var c RoleCondition
	ms, err := members(path, raw)
	if err != nil {
		return c, err
	}
	seen := map[string]bool{}
	for _, m := range ms {
		seen[m.key] = true
		switch m.key {
		case "attribute":
			if json.Unmarshal(m.raw, &c.Attribute) != nil {
				return c, fmt.Errorf("%s.attribute: must be a string", path)
			}
			if c.Attribute == "" {
				return c, fmt.Errorf("%s: attribute is required", path)
			}
			if !nameLen(c.Attribute) {
				return c, fmt.Errorf("%s.attribute: must be at most %d characters", path, maxNameLen)
			}
		case "value":
			dec := json.NewDecoder(bytes.NewReader(m.raw))
			dec.UseNumber()
			if dec.Decode(&c.Value) != nil {
				return c, fmt.Errorf("%s.value: must be a string, number or boolean", path)
			}
			switch c.Value.(type) {
			case string, bool, json.Number:
			default:
				return c, fmt.Errorf("%s.value: must be a string, number or boolean", path)
			}
		case "groups":
			if isNull(m.raw) {
				continue
			}
			var list []json.RawMessage
			if json.Unmarshal(m.raw, &list) != nil {
				return c, fmt.Errorf("%s.groups: must be a list of group names", path)
			}
			for j, g := range list {
				var name string
				if json.Unmarshal(g, &name) != nil || !nameLen(name) {
					return c, fmt.Errorf("%s.groups[%d]: must be a group name of 1 to %d characters", path, j, maxNameLen)
				}
				c.Groups = append(c.Groups, name)
			}
		case "role":
			if json.Unmarshal(m.raw, &c.Role) != nil || !ValidRole(c.Role) {
				return c, fmt.Errorf("%s.role: must be member, admin or super_admin", path)
			}
		default:
			return c, fmt.Errorf("%s: unknown key %q (allowed: attribute, value, groups, role)", path, m.key)
		}
	}
	for _, k := range []string{"attribute", "value", "role"} {
		if !seen[k] {
			return c, fmt.Errorf("%s: %s is required", path, k)
		}
	}
	return c, nil
}

func (r *RoleMapping) parseHierarchy(raw json.RawMessage) error {
	const path = "rules.hierarchy"
	ms, err := members(path, raw)
	if err != nil {
		return err
	}
	r.Hierarchy = map[string][]string{}
	var order []string
	for _, m := range ms {
		if !ValidRole(m.key) {
			return fmt.Errorf("%s: unknown role %q", path, m.key)
		}
		var implied []string
		if json.Unmarshal(m.raw, &implied) != nil {
			return fmt.Errorf("%s.%s: must be a list of roles", path, m.key)
		}
		for _, role := range implied {
			if !ValidRole(role) {
				return fmt.Errorf("%s: unknown role %q", path, role)
			}
		}
		r.Hierarchy[m.key] = implied
		order = append(order, m.key)
	}
	if cycle := findCycle(r.Hierarchy, order); cycle != nil {
		return fmt.Errorf("%s: cycle %s", path, strings.Join(cycle, " -> "))
	}
	for _, role := range order {
		for _, implied := range r.Hierarchy[role] {
			if roleRank(implied) >= roleRank(role) {
				return fmt.Errorf("%s: %s cannot imply %s", path, role, implied)
			}
		}
	}
	return nil
}

// findCycle returns the roles of a cycle in g, first role repeated at the
// end, or nil. With roles that imply only lower roles there is none; the
// check keeps rule sets valid if roles are ever added.
func findCycle(g map[string][]string, order []string) []string {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(n string) []string
	visit = func(n string) []string {
		state[n] = onPath
		path = append(path, n)
		for _, next := range g[n] {
			switch state[next] {
			case onPath:
				for i, p := range path {
					if p == next {
						return append(append([]string{}, path[i:]...), next)
					}
				}
			case unseen:
				if c := visit(next); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return nil
	}
	for _, n := range order {
		if state[n] == unseen {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}

// roleRank orders roles: member < admin < super_admin; -1 for others.
func roleRank(role string) int {
	switch role {
	case RoleMember:
		return 0
	case RoleAdmin:
		return 1
	case RoleSuperAdmin:
		return 2
	}
	return -1
}

type member struct {
	key string
	raw json.RawMessage
}

// members lists the members of the JSON object raw in document order. A
// value that is not an object, or a key given twice, is an error at path.
func members(path string, raw json.RawMessage) ([]member, error) {
	notObject := fmt.Errorf("%s: must be an object", path)
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, notObject
	}
	var ms []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return nil, notObject
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, notObject
		}
		if seen[key] {
			return nil, fmt.Errorf("%s: duplicate key %q", path, key)
		}
		seen[key] = true
		ms = append(ms, member{key, v})
	}
	return ms, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func nameLen(s string) bool {
	n := utf8.RuneCountInString(s)
	return n >= 1 && n <= maxNameLen
}

// position turns a byte offset of text into a 1-based line and column
// (columns count characters).
func position(text string, offset int64) (line, col int) {
	if offset < 0 {
		offset = 0
	}
	if offset > int64(len(text)) {
		offset = int64(len(text))
	}
	line, col = 1, 1
	for _, r := range text[:offset] {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
