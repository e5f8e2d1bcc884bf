package models

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseRoleMappingErrors(t *testing.T) {
	tests := []struct {
		name, text, strategy, want string
	}{
		{"syntax line and column", "{\n  \"conditions\": [\n    x\n  ]\n}", StrategyOIDC,
			"rules: invalid JSON at line 3, column 5"},
		{"unexpected end", `{"conditions": [`, StrategyOIDC, "rules: invalid JSON at line 1, column 17"},
		{"trailing data", `{} {}`, StrategyOIDC, "rules: invalid JSON at line 1, column 4"},
		{"not an object", `[]`, StrategyOIDC, "rules: must be an object"},
		{"null", `null`, StrategyOIDC, "rules: must be an object"},
		{"unknown top-level key", `{"roles": {}}`, StrategyOIDC,
			`rules: unknown key "roles" (allowed: custom_mappings, conditions, hierarchy)`},
		{"duplicate top-level key", `{"conditions": [], "conditions": []}`, StrategyOIDC,
			`rules: duplicate key "conditions"`},
		{"too large", `{"custom_mappings": {"email": "` + strings.Repeat("a", MaxRoleMappingSize) + `"}}`, StrategyOIDC,
			"rules: must be at most 64 KiB"},

		{"mappings not an object", `{"custom_mappings": []}`, StrategyOIDC, "rules.custom_mappings: must be an object"},
		{"mapping unknown key", `{"custom_mappings": {"mail": "email"}}`, StrategyOIDC,
			`rules.custom_mappings: unknown key "mail" (allowed: email, email_verified, first_name, last_name, name, groups)`},
		{"subject on OIDC", `{"custom_mappings": {"subject": "oid"}}`, StrategyOIDC,
			`rules.custom_mappings: unknown key "subject" (allowed: email, email_verified, first_name, last_name, name, groups)`},
		{"groups on SAML", `{"custom_mappings": {"groups": "memberOf"}}`, StrategySAML,
			`rules.custom_mappings: unknown key "groups" (allowed: email, email_verified, first_name, last_name, name)`},
		{"mapping not a string", `{"custom_mappings": {"email": 3}}`, StrategyOIDC,
			"rules.custom_mappings.email: must be a claim name of 1 to 256 characters"},
		{"mapping empty", `{"custom_mappings": {"email": ""}}`, StrategyOIDC,
			"rules.custom_mappings.email: must be a claim name of 1 to 256 characters"},

		{"conditions not a list", `{"conditions": {}}`, StrategyOIDC, "rules.conditions: must be a list"},
		{"condition not an object", `{"conditions": [1]}`, StrategyOIDC, "rules.conditions[0]: must be an object"},
		{"attribute missing", `{"conditions": [{"value": "x", "role": "admin"}]}`, StrategyOIDC,
			"rules.conditions[0]: attribute is required"},
		{"attribute empty", `{"conditions": [{"attribute": "", "value": "x", "role": "admin"}]}`, StrategyOIDC,
			"rules.conditions[0]: attribute is required"},
		{"attribute not a string", `{"conditions": [{"attribute": 1, "value": "x", "role": "admin"}]}`, StrategyOIDC,
			"rules.conditions[0].attribute: must be a string"},
		{"value missing", `{"conditions": [{"attribute": "dept", "role": "admin"}]}`, StrategyOIDC,
			"rules.conditions[0]: value is required"},
		{"value an object", `{"conditions": [{"attribute": "dept", "value": {}, "role": "admin"}]}`, StrategyOIDC,
			"rules.conditions[0].value: must be a string, number or boolean"},
		{"value null", `{"conditions": [{"attribute": "dept", "value": null, "role": "admin"}]}`, StrategyOIDC,
			"rules.conditions[0].value: must be a string, number or boolean"},
		{"role missing", `{"conditions": [{"attribute": "dept", "value": "x"}]}`, StrategyOIDC,
			"rules.conditions[0]: role is required"},
		{"second role unknown", `{"conditions": [{"attribute": "a", "value": "x", "role": "admin"},
			{"attribute": "a", "value": "y", "role": "owner"}]}`, StrategyOIDC,
			"rules.conditions[1].role: must be member, admin or super_admin"},
		{"role case", `{"conditions": [{"attribute": "a", "value": "x", "role": "Admin"}]}`, StrategyOIDC,
			"rules.conditions[0].role: must be member, admin or super_admin"},
		{"groups not a list", `{"conditions": [{"attribute": "a", "value": "x", "groups": "g", "role": "admin"}]}`, StrategyOIDC,
			"rules.conditions[0].groups: must be a list of group names"},
		{"group empty", `{"conditions": [{"attribute": "a", "value": "x", "groups": ["g", ""], "role": "admin"}]}`, StrategyOIDC,
			"rules.conditions[0].groups[1]: must be a group name of 1 to 256 characters"},
		{"condition unknown key", `{"conditions": [{"attribute": "a", "value": "x", "role": "admin", "when": 1}]}`, StrategyOIDC,
			`rules.conditions[0]: unknown key "when" (allowed: attribute, value, groups, role)`},
		{"condition duplicate key", `{"conditions": [{"attribute": "a", "attribute": "b"}]}`, StrategyOIDC,
			`rules.conditions[0]: duplicate key "attribute"`},

		{"hierarchy not an object", `{"hierarchy": []}`, StrategyOIDC, "rules.hierarchy: must be an object"},
		{"hierarchy upward", `{"hierarchy": {"admin": ["super_admin"]}}`, StrategyOIDC,
			"rules.hierarchy: admin cannot imply super_admin"},
		{"hierarchy unknown key role", `{"hierarchy": {"owner": ["admin"]}}`, StrategyOIDC,
			`rules.hierarchy: unknown role "owner"`},
		{"hierarchy unknown implied role", `{"hierarchy": {"admin": ["viewer"]}}`, StrategyOIDC,
			`rules.hierarchy: unknown role "viewer"`},
		{"hierarchy not a list", `{"hierarchy": {"admin": "member"}}`, StrategyOIDC,
			"rules.hierarchy.admin: must be a list of roles"},
		{"hierarchy self", `{"hierarchy": {"admin": ["admin"]}}`, StrategyOIDC,
			"rules.hierarchy: cycle admin -> admin"},
		{"hierarchy cycle", `{"hierarchy": {"member": ["admin"], "admin": ["member"]}}`, StrategyOIDC,
			"rules.hierarchy: cycle member -> admin -> member"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRoleMapping(tt.text, tt.strategy)
			if err == nil {
				t.Fatalf("ParseRoleMapping = %+v, want error %q", r, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q\n want %q", err.Error(), tt.want)
			}
		})
	}
}

func TestParseRoleMappingValid(t *testing.T) {
	tests := []struct {
		name, text, strategy string
		want                 *RoleMapping
	}{
		{"empty", "", StrategyOIDC, &RoleMapping{}},
		{"blank", " \n\t", StrategySAML, &RoleMapping{}},
		{"empty object", "{}", StrategySAML, &RoleMapping{}},
		{"null keys", `{"custom_mappings": null, "conditions": null, "hierarchy": null}`, StrategyOIDC, &RoleMapping{}},
		{"oauth subject", `{"custom_mappings": {"subject": "id", "groups": "roles"}}`, StrategyOAuth,
			&RoleMapping{CustomMappings: map[string]string{"subject": "id", "groups": "roles"}}},
		{"saml names", `{"custom_mappings": {"first_name": "givenName", "email_verified": "verified"}}`, StrategySAML,
			&RoleMapping{CustomMappings: map[string]string{"first_name": "givenName", "email_verified": "verified"}}},
		{"conditions", `{"conditions": [
			{"attribute": "department", "value": "finance", "role": "admin"},
			{"attribute": "staff", "value": true, "groups": ["ops", "eng"], "role": "member"},
			{"attribute": "level", "value": 7, "groups": [], "role": "super_admin"}]}`, StrategyOIDC,
			&RoleMapping{Conditions: []RoleCondition{
				{Attribute: "department", Value: "finance", Role: "admin"},
				{Attribute: "staff", Value: true, Groups: []string{"ops", "eng"}, Role: "member"},
				{Attribute: "level", Value: json.Number("7"), Role: "super_admin"},
			}}},
		{"hierarchy", `{"hierarchy": {"super_admin": ["admin", "member"], "admin": ["member"], "member": []}}`, StrategyOIDC,
			&RoleMapping{Hierarchy: map[string][]string{"super_admin": {"admin", "member"}, "admin": {"member"}, "member": {}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRoleMapping(tt.text, tt.strategy)
			if err != nil {
				t.Fatalf("ParseRoleMapping: %v", err)
			}
			if tt.want.Conditions == nil && r.Conditions != nil && len(r.Conditions) == 0 {
				r.Conditions = nil
			}
			if !reflect.DeepEqual(r, tt.want) {
				t.Errorf("ParseRoleMapping = %#v\n want %#v", r, tt.want)
			}
		})
	}
}

func TestPosition(t *testing.T) {
	tests := []struct {
		text       string
		offset     int64
		line, col  int
		name       string
		wantString string
	}{
		{text: "abc", offset: 0, line: 1, col: 1, name: "start"},
		{text: "a\nbc", offset: 3, line: 2, col: 2, name: "second line"},
		{text: "é\nx", offset: 3, line: 2, col: 1, name: "multibyte"},
		{text: "ab", offset: 99, line: 1, col: 3, name: "past the end"},
		{text: "ab", offset: -1, line: 1, col: 1, name: "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, col := position(tt.text, tt.offset)
			if line != tt.line || col != tt.col {
				t.Errorf("position(%q, %d) = %d, %d, want %d, %d", tt.text, tt.offset, line, col, tt.line, tt.col)
			}
		})
	}
}

func FuzzParseRoleMapping(f *testing.F) {
	for _, s := range []string{
		"", "{}", "null", "[]", "{\n  \"conditions\": [\n    x\n  ]\n}",
		`{"custom_mappings": {"email": "mail", "groups": "roles"}}`,
		`{"conditions": [{"attribute": "dept", "value": 1.5e3, "groups": ["a"], "role": "admin"}]}`,
		`{"conditions": [{"attribute": "a", "value": true, "role": "super_admin"}, {}]}`,
		`{"hierarchy": {"super_admin": ["admin"], "admin": ["member"]}}`,
		`{"hierarchy": {"member": ["admin"], "admin": ["member"]}}`,
		`{"a": 1, "a": 2}`, "{\"\xff\": 1}", `{"conditions": [[[[[]]]]]}`,
	} {
		f.Add(s, StrategyOIDC)
		f.Add(s, StrategySAML)
	}
	f.Add(`{"custom_mappings": {"subject": "id"}}`, StrategyOAuth)
	f.Fuzz(func(t *testing.T, text, strategy string) {
		r, err := ParseRoleMapping(text, strategy)
		if err != nil {
			if r != nil {
				t.Fatalf("rules %+v with error %v", r, err)
			}
			if !strings.HasPrefix(err.Error(), "rules") {
				t.Fatalf("error %q does not name a rules path", err)
			}
			return
		}
		for i, c := range r.Conditions {
			if c.Attribute == "" || !ValidRole(c.Role) {
				t.Fatalf("condition %d accepted: %+v", i, c)
			}
			switch c.Value.(type) {
			case string, bool, json.Number:
			default:
				t.Fatalf("condition %d value of type %T", i, c.Value)
			}
		}
		for role, implied := range r.Hierarchy {
			for _, lower := range implied {
				if roleRank(lower) >= roleRank(role) || roleRank(lower) < 0 {
					t.Fatalf("hierarchy %s -> %s accepted", role, lower)
				}
			}
		}
		// Whatever was accepted feeds ComputeRole without trouble.
		ComputeRole(&SSOProvider{DefaultRole: RoleMember}, r, []string{"a"}, true,
			map[string]any{"dept": []any{"x", 1.0, true}})
	})
}

func TestRoleMappingClaimAndAttributes(t *testing.T) {
	r, err := ParseRoleMapping(`{"custom_mappings": {"groups": "roles"}, "conditions": [
		{"attribute": "dept", "value": "a", "role": "admin"},
		{"attribute": "level", "value": 1, "role": "admin"},
		{"attribute": "dept", "value": "b", "role": "member"}]}`, StrategyOIDC)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Claim("groups", "groups"); got != "roles" {
		t.Errorf("Claim(groups) = %q, want roles", got)
	}
	if got := r.Claim("email", "email"); got != "email" {
		t.Errorf("Claim(email) = %q, want the default", got)
	}
	if got := r.ConditionAttributes(); !reflect.DeepEqual(got, []string{"dept", "level"}) {
		t.Errorf("ConditionAttributes = %q", got)
	}
	var none *RoleMapping
	if none.Claim("groups", "memberOf") != "memberOf" || len(none.ConditionAttributes()) != 0 {
		t.Error("nil rules do not give the defaults")
	}
}
