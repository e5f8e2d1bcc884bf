package sso

import (
	"strings"
	"testing"
)

func TestParseProvidersFile(t *testing.T) {
	env := map[string]string{"CORP_SECRET": "from-env"}
	getenv := func(k string) string { return env[k] }
	good := `
providers:
  - id: 0f8e2c8e-5d7e-4b8e-9a53-2d5f0b6f4a11
    name: corp
    strategy: openid_connect
    label: Corp
    issuer: https://id.example.com
    client_id: coffer
    client_secret_env: CORP_SECRET
    group_mappings: [{group: admins, role: admin}]
  - id: 1f8e2c8e-5d7e-4b8e-9a53-2d5f0b6f4a12
    name: gh
    strategy: oauth2
    label: GitHub
    enabled: false
    client_id: x
    client_secret: inline
`
	ps, err := ParseProvidersFile([]byte(good), getenv)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Secrets.ClientSecret != "from-env" || ps[1].Secrets.ClientSecret != "inline" ||
		!ps[0].Provider.Enabled || ps[1].Provider.Enabled || ps[0].Provider.Source != "yaml" ||
		len(ps[0].Provider.GroupMappings) != 1 || ps[0].Provider.DefaultRole != "member" {
		t.Fatalf("parsed = %+v %+v", ps[0], ps[1])
	}
	for name, c := range map[string]struct{ text, want string }{
		"no id":         {"providers:\n  - name: a\n    strategy: oauth2\n", "id is required"},
		"unknown field": {"providers:\n  - id: 0f8e2c8e-5d7e-4b8e-9a53-2d5f0b6f4a11\n    nmae: a\n", "nmae"},
		"empty env": {"providers:\n  - id: 0f8e2c8e-5d7e-4b8e-9a53-2d5f0b6f4a11\n    name: a\n    client_secret_env: NOPE\n",
			"environment variable NOPE is empty"},
		"duplicate": {"providers:\n  - id: 0f8e2c8e-5d7e-4b8e-9a53-2d5f0b6f4a11\n    name: a\n  - id: 0f8e2c8e-5d7e-4b8e-9a53-2d5f0b6f4a12\n    name: a\n",
			"duplicate name or id"},
		"not yaml": {"providers: [", "provider file"},
	} {
		if _, err := ParseProvidersFile([]byte(c.text), getenv); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
