package models

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestGroupsFromClaim(t *testing.T) {
	many := make([]any, MaxGroups+1)
	for i := range many {
		many[i] = "g"
	}
	tests := []struct {
		name    string
		claim   any
		groups  []string
		present bool
	}{
		{"absent", nil, nil, false},
		{"list of strings", []any{"a", "B"}, []string{"a", "B"}, true},
		{"string slice", []string{"x"}, []string{"x"}, true},
		{"one string", "admins", []string{"admins"}, true},
		{"empty string", "", []string{}, true},
		{"empty list", []any{}, []string{}, true},
		{"mixed list", []any{"a", 1.0}, nil, false},
		{"nested list", []any{[]any{"a"}}, nil, false},
		{"number", 3.0, nil, false},
		{"object", map[string]any{"a": "b"}, nil, false},
		{"bool", true, nil, false},
		{"exactly the limit", many[:MaxGroups], nil, true},
		{"over the limit", many, nil, false},
		{"string slice over the limit", make([]string, MaxGroups+1), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			groups, present := GroupsFromClaim(tt.claim)
			if present != tt.present {
				t.Fatalf("present = %v, want %v", present, tt.present)
			}
			if tt.groups != nil && !reflect.DeepEqual(groups, tt.groups) {
				t.Errorf("groups = %#v, want %#v", groups, tt.groups)
			}
			if !present && groups != nil {
				t.Errorf("groups = %#v with present false", groups)
			}
		})
	}
}

func TestComputeRole(t *testing.T) {
	mappings := []GroupMapping{
		{Group: "staff", Role: RoleMember},
		{Group: "Finance-Admins", Role: RoleAdmin},
		{Group: "root", Role: RoleSuperAdmin},
	}
	rules := func(text string) *RoleMapping {
		t.Helper()
		r, err := ParseRoleMapping(text, StrategyOIDC)
		if err != nil {
			t.Fatalf("ParseRoleMapping: %v", err)
		}
		return r
	}
	conditions := rules(`{"conditions": [
		{"attribute": "department", "value": "finance", "role": "admin"},
		{"attribute": "is_owner", "value": true, "role": "super_admin"},
		{"attribute": "level", "value": 7, "role": "admin"},
		{"attribute": "team", "value": "ops", "groups": ["oncall", "sre"], "role": "admin"}]}`)

	tests := []struct {
		name          string
		defaultRole   string
		mappings      []GroupMapping
		rules         *RoleMapping
		groups        []string
		groupsPresent bool
		claims        map[string]any
		mapped        bool
		role          string
		matched       []string
	}{
		{name: "no mappings keeps nothing to map", defaultRole: RoleAdmin, groups: []string{"root"}, groupsPresent: true,
			mapped: false, role: RoleAdmin, matched: []string{}},
		{name: "one group", defaultRole: RoleMember, mappings: mappings, groups: []string{"Finance-Admins"}, groupsPresent: true,
			mapped: true, role: RoleAdmin, matched: []string{"Finance-Admins"}},
		{name: "highest wins", defaultRole: RoleMember, mappings: mappings,
			groups: []string{"staff", "root", "Finance-Admins", "other"}, groupsPresent: true,
			mapped: true, role: RoleSuperAdmin, matched: []string{"staff", "root", "Finance-Admins"}},
		{name: "highest wins whatever the mapping order", defaultRole: RoleMember,
			mappings: []GroupMapping{{Group: "a", Role: RoleAdmin}, {Group: "b", Role: RoleMember}},
			groups:   []string{"b", "a"}, groupsPresent: true, mapped: true, role: RoleAdmin, matched: []string{"b", "a"}},
		{name: "lower mapping than the default still wins", defaultRole: RoleAdmin, mappings: mappings,
			groups: []string{"staff"}, groupsPresent: true, mapped: true, role: RoleMember, matched: []string{"staff"}},
		{name: "none gives the default", defaultRole: RoleAdmin, mappings: mappings, groups: []string{"other"},
			groupsPresent: true, mapped: true, role: RoleAdmin, matched: []string{}},
		{name: "former super admin drops to default", defaultRole: RoleMember, mappings: mappings, groups: []string{},
			groupsPresent: true, mapped: true, role: RoleMember, matched: []string{}},
		{name: "empty default is member", mappings: mappings, groups: nil, groupsPresent: true,
			mapped: true, role: RoleMember, matched: []string{}},
		{name: "case sensitive", defaultRole: RoleMember, mappings: mappings,
			groups: []string{"finance-admins", "ROOT", "Staff"}, groupsPresent: true, mapped: true, role: RoleMember, matched: []string{}},
		{name: "no trimming", defaultRole: RoleMember, mappings: mappings, groups: []string{" root"}, groupsPresent: true,
			mapped: true, role: RoleMember, matched: []string{}},
		{name: "groups missing count as none", defaultRole: RoleMember, mappings: mappings,
			groups: []string{"root"}, groupsPresent: false, mapped: true, role: RoleMember, matched: []string{}},
		{name: "invalid mapping role ignored", defaultRole: RoleMember,
			mappings: []GroupMapping{{Group: "root", Role: "owner"}}, groups: []string{"root"}, groupsPresent: true,
			mapped: true, role: RoleMember, matched: []string{}},

		{name: "condition string", defaultRole: RoleMember, rules: conditions,
			claims: map[string]any{"department": "finance"}, mapped: true, role: RoleAdmin, matched: []string{}},
		{name: "condition string case sensitive", defaultRole: RoleMember, rules: conditions,
			claims: map[string]any{"department": "Finance"}, mapped: true, role: RoleMember, matched: []string{}},
		{name: "condition list claim contains", defaultRole: RoleMember, rules: conditions,
			claims: map[string]any{"department": []any{"sales", "finance"}}, mapped: true, role: RoleAdmin, matched: []string{}},
		{name: "condition string list claim", defaultRole: RoleMember, rules: conditions,
			claims: map[string]any{"department": []string{"finance"}}, mapped: true, role: RoleAdmin, matched: []string{}},
		{name: "condition list claim without it", defaultRole: RoleMember, rules: conditions,
			claims: map[string]any{"department": []any{"sales"}}, mapped: true, role: RoleMember, matched: []string{}},
		{name: "condition bool", defaultRole: RoleMember, rules: conditions,
			claims: map[string]any{"is_owner": true}, mapped: true, role: RoleSuperAdmin, matched: []string{}},
		{name: "condition bool as text", defaultRole: RoleMember, rules: conditions,
			claims: map[string]any{"is_owner": "true"}, mapped: true, role: RoleSuperAdmin, matched: []string{}},
		{name: "condition bool false", defaultRole: RoleMember, rules: conditions,
			claims: map[string]any{"is_owner": false}, mapped: true, role: RoleMember, matched: []string{}},
		{name: "condition bool in a list", defaultRole: RoleMember, rules: conditions,
			claims: map[string]any{"is_owner": []any{false, true}}, mapped: true, role: RoleSuperAdmin, matched: []string{}},
		{name: "condition number float claim", defaultRole: RoleMember, rules: conditions,
			claims: map[string]any{"level": 7.0}, mapped: true, role: RoleAdmin, matched: []string{}},
		{name: "condition number json.Number claim", defaultRole: RoleMember, rules: conditions,
			claims: map[string]any{"level": json.Number("7.0")}, mapped: true, role: RoleAdmin, matched: []string{}},
		{name: "condition number as text", defaultRole: RoleMember, rules: conditions,
			claims: map[string]any{"level": "7"}, mapped: true, role: RoleAdmin, matched: []string{}},
		{name: "condition other number", defaultRole: RoleMember, rules: conditions,
			claims: map[string]any{"level": 7.5}, mapped: true, role: RoleMember, matched: []string{}},
		{name: "condition claim absent", defaultRole: RoleAdmin, rules: conditions, claims: nil,
			mapped: true, role: RoleAdmin, matched: []string{}},
		{name: "condition object claim", defaultRole: RoleMember, rules: conditions,
			claims: map[string]any{"department": map[string]any{"name": "finance"}}, mapped: true, role: RoleMember, matched: []string{}},
		{name: "condition groups filter met", defaultRole: RoleMember, rules: conditions,
			groups: []string{"x", "sre"}, groupsPresent: true, claims: map[string]any{"team": "ops"},
			mapped: true, role: RoleAdmin, matched: []string{"sre"}},
		{name: "condition groups filter not met", defaultRole: RoleMember, rules: conditions,
			groups: []string{"x"}, groupsPresent: true, claims: map[string]any{"team": "ops"},
			mapped: true, role: RoleMember, matched: []string{}},
		{name: "condition groups filter with groups missing", defaultRole: RoleMember, rules: conditions,
			groups: []string{"sre"}, groupsPresent: false, claims: map[string]any{"team": "ops"},
			mapped: true, role: RoleMember, matched: []string{}},
		{name: "mapping and condition, highest wins", defaultRole: RoleMember, mappings: mappings, rules: conditions,
			groups: []string{"staff"}, groupsPresent: true, claims: map[string]any{"is_owner": true},
			mapped: true, role: RoleSuperAdmin, matched: []string{"staff"}},
		{name: "rules without conditions are not mappings", defaultRole: RoleAdmin,
			rules:  rules(`{"custom_mappings": {"email": "mail"}}`),
			groups: []string{"root"}, groupsPresent: true, mapped: false, role: RoleAdmin, matched: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &SSOProvider{DefaultRole: tt.defaultRole, GroupMappings: tt.mappings}
			d := ComputeRole(p, tt.rules, tt.groups, tt.groupsPresent, tt.claims)
			if d.Mapped != tt.mapped || d.Role != tt.role || !reflect.DeepEqual(d.MatchedGroups, tt.matched) {
				t.Errorf("ComputeRole = %+v, want mapped %v role %s matched %v", d, tt.mapped, tt.role, tt.matched)
			}
			if got := HasMappings(p, tt.rules); got != tt.mapped {
				t.Errorf("HasMappings = %v, want %v", got, tt.mapped)
			}
		})
	}
}

func TestNumberText(t *testing.T) {
	tests := map[string]string{
		"7": "7", "7.0": "7", "7e0": "7", "-0": "0", "1.5": "1.5", "9007199254740993": "9007199254740993",
		"1e300": "1e+300", "abc": "abc",
	}
	for in, want := range tests {
		if got := numberText(in); got != want {
			t.Errorf("numberText(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzComputeRole feeds decoded claims (as an IdP's JSON would arrive)
// and rules to the role computation: it must not panic, must give one of
// the three roles, and the default role exactly when nothing matched.
func FuzzComputeRole(f *testing.F) {
	f.Add(`{"groups": ["admins", "staff"], "department": "finance"}`, `{"conditions": [{"attribute": "department", "value": "finance", "role": "admin"}]}`)
	f.Add(`{"groups": "admins", "level": 7}`, `{"conditions": [{"attribute": "level", "value": 7.0, "groups": ["admins"], "role": "super_admin"}]}`)
	f.Add(`{"groups": [1, 2], "is_owner": [true]}`, `{"conditions": [{"attribute": "is_owner", "value": true, "role": "member"}]}`)
	f.Add(`{"groups": {"a": 1}}`, ``)
	f.Add(`[]`, `{}`)
	mappings := []GroupMapping{{Group: "admins", Role: RoleAdmin}, {Group: "root", Role: RoleSuperAdmin}}
	f.Fuzz(func(t *testing.T, claimsJSON, rulesText string) {
		var claims map[string]any
		if json.Unmarshal([]byte(claimsJSON), &claims) != nil {
			return
		}
		rules, err := ParseRoleMapping(rulesText, StrategyOIDC)
		if err != nil {
			return
		}
		groups, present := GroupsFromClaim(claims["groups"])
		if present && len(groups) > MaxGroups {
			t.Fatalf("%d groups present", len(groups))
		}
		p := &SSOProvider{DefaultRole: RoleMember, GroupMappings: mappings}
		d := ComputeRole(p, rules, groups, present, claims)
		if !ValidRole(d.Role) || !d.Mapped {
			t.Fatalf("decision %+v", d)
		}
		if len(d.MatchedGroups) > 0 && !present {
			t.Fatalf("matched %v without groups", d.MatchedGroups)
		}
	})
}
