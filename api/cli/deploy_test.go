package cli_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"coffer/models/modelstest"
)

// TestDeployFilesStart runs `coffer config` with the environment that
// deploy/compose.yaml and deploy/app.json give the processes: each must be
// a configuration the binary accepts in production.
func TestDeployFilesStart(t *testing.T) {
	if modelstest.Embedded() {
		t.Skip("independent of the storage mode: runs in server mode")
	}
	bin := buildCoffer(t)
	config := func(t *testing.T, env map[string]string) string {
		t.Helper()
		cmd := exec.Command(bin, "config")
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("coffer config: %v\n%s", err, out)
		}
		return string(out)
	}

	t.Run("compose", func(t *testing.T) {
		raw, err := os.ReadFile("../../deploy/compose.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Coffer struct {
				Environment map[string]string `yaml:"environment"`
			} `yaml:"x-coffer"`
		}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		// What the file's header tells the operator to set.
		operator := map[string]string{"SECRET_KEY_BASE": randomHex(32), "SECRETS_ENCRYPTION_KEY": "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80="}
		env, missing := interpolate(doc.Coffer.Environment, operator)
		if len(missing) > 0 {
			t.Fatalf("compose needs %v beyond what its header says", missing)
		}
		out := config(t, env)
		if !strings.Contains(out, "COFFER_ENV=production") || !strings.Contains(out, "HOST=0.0.0.0") {
			t.Errorf("compose config:\n%s", out)
		}
		if _, missing := interpolate(doc.Coffer.Environment, nil); len(missing) != 2 {
			t.Errorf("compose must refuse to start without both secrets; it requires %v", missing)
		}
	})

	t.Run("heroku", func(t *testing.T) {
		raw, err := os.ReadFile("../../deploy/app.json")
		if err != nil {
			t.Fatal(err)
		}
		var app struct {
			Env map[string]struct {
				Value     string `json:"value"`
				Generator string `json:"generator"`
				Required  bool   `json:"required"`
			} `json:"env"`
			Addons []string `json:"addons"`
		}
		if err := json.Unmarshal(raw, &app); err != nil {
			t.Fatal(err)
		}
		// What Heroku sets: PORT, the add-ons' URLs, the generators' secrets.
		env := map[string]string{"PORT": "41234",
			"DATABASE_URL": "postgres://u:p@ec2-1-2-3-4.compute-1.amazonaws.com:5432/d",
			"REDIS_URL":    "rediss://:p@ec2-1-2-3-4.compute-1.amazonaws.com:6380"}
		for k, v := range app.Env {
			switch {
			case v.Generator == "secret":
				env[k] = randomHex(32) // as Heroku's generator: 64 hex digits
			case v.Value != "":
				env[k] = v.Value
			case v.Required:
				env[k] = "https://coffer.example.com"
			}
		}
		out := config(t, env)
		for _, want := range []string{"PORT=41234", "REDIS_TLS_SKIP_VERIFY=true", "SECRETS_ENCRYPTION_KEY=********"} {
			if !strings.Contains(out, want) {
				t.Errorf("heroku config lacks %s:\n%s", want, out)
			}
		}
	})
}

var composeVar = regexp.MustCompile(`\$\{([A-Z_]+)(?::([-?])([^}]*))?\}`)

// interpolate expands ${VAR}, ${VAR:-default} and ${VAR:?message} as
// docker compose does, and names the required variables left unset.
func interpolate(in, vars map[string]string) (map[string]string, []string) {
	out := map[string]string{}
	var missing []string
	for k, v := range in {
		out[k] = composeVar.ReplaceAllStringFunc(v, func(m string) string {
			p := composeVar.FindStringSubmatch(m)
			if val := vars[p[1]]; val != "" {
				return val
			}
			if p[2] == "?" {
				missing = append(missing, p[1])
			}
			return p[3]
		})
	}
	return out, missing
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
