package cli_test

import (
	"bytes"
	"encoding/base64"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"coffer/api/cli"
)

type inner struct {
	Workers int    `env:"T_WORKERS" default:"10" min:"1" max:"100"`
	From    string `env:"T_FROM" default:"coffer <no-reply@localhost>"`
}

type settings struct {
	Mode    string        `env:"T_MODE" default:"development" oneof:"development production"`
	Port    int           `env:"T_PORT" default:"3000" min:"1" max:"65535"`
	Max     int64         `env:"T_MAX" default:"1024" min:"1" max:"2147483647"`
	On      bool          `env:"T_ON" default:"true"`
	Wait    time.Duration `env:"T_WAIT" default:"15m"`
	Hosts   []string      `env:"T_HOSTS"`
	Key     []byte        `env:"T_KEY"`
	OldKeys [][]byte      `env:"T_OLD_KEYS"`
	Level   slog.Level    `env:"T_LEVEL" default:"info" want:"debug, info, warn or error"`
	Inner   inner
	Skipped time.Duration // untagged: set by hand
}

func TestEnvFill(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	for _, tt := range []struct {
		name     string
		env      map[string]string
		check    func(s settings) bool
		problems []string
	}{
		{"defaults", nil, func(s settings) bool {
			return s.Mode == "development" && s.Port == 3000 && s.Max == 1024 && s.On && s.Wait == 15*time.Minute &&
				s.Hosts == nil && s.Key == nil && s.Level == slog.LevelInfo && s.Inner.Workers == 10 && s.Inner.From != ""
		}, nil},
		{"values, trimmed", map[string]string{
			"T_MODE": " production ", "T_PORT": "8080", "T_ON": "false", "T_WAIT": "2h", "T_HOSTS": " a, ,b ",
			"T_KEY": key, "T_OLD_KEYS": key + "," + key, "T_LEVEL": "debug", "T_WORKERS": "3", "T_MAX": "2147483647",
		}, func(s settings) bool {
			return s.Mode == "production" && s.Port == 8080 && !s.On && s.Wait == 2*time.Hour &&
				reflect.DeepEqual(s.Hosts, []string{"a", "b"}) && len(s.Key) == 32 && len(s.OldKeys) == 2 &&
				s.Level == slog.LevelDebug && s.Inner.Workers == 3 && s.Max == 1<<31-1
		}, nil},
		{"blank is the default", map[string]string{"T_PORT": "  ", "T_MODE": ""}, func(s settings) bool {
			return s.Port == 3000 && s.Mode == "development"
		}, nil},
		{"every bad variable at once", map[string]string{
			"T_MODE": "staging", "T_PORT": "abc", "T_MAX": "0", "T_ON": "yes please", "T_WAIT": "-1s",
			"T_KEY": "short", "T_OLD_KEYS": key + ",nope", "T_LEVEL": "loud", "T_WORKERS": "101",
		}, nil, []string{
			`T_MODE must be one of development, production, got "staging"`,
			`T_PORT must be a whole number from 1 to 65535, got "abc"`,
			`T_MAX must be a whole number from 1 to 2147483647, got "0"`,
			`T_ON must be true or false, got "yes please"`,
			`T_WAIT must be a positive duration such as 15m or 168h, got "-1s"`,
			`T_KEY must be the Base64 of exactly 32 bytes (openssl rand -base64 32) or 64 hex digits`,
			`T_OLD_KEYS must be the Base64 of exactly 32 bytes (openssl rand -base64 32) or 64 hex digits`,
			`T_LEVEL must be debug, info, warn or error, got "loud"`,
			`T_WORKERS must be a whole number from 1 to 100, got "101"`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := &cli.Env{Getenv: func(k string) string { return tt.env[k] }}
			var s settings
			e.Fill(&s)
			err := e.Err()
			if tt.problems == nil {
				if err != nil || !tt.check(s) {
					t.Errorf("got %+v, %v", s, err)
				}
				return
			}
			if err == nil {
				t.Fatal("no problems reported")
			}
			got := strings.Split(strings.TrimSpace(err.Error()), "\n  ")
			if !reflect.DeepEqual(got, tt.problems) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.problems, "\n"))
			}
		})
	}
}

func TestEnvSet(t *testing.T) {
	vars := map[string]string{"A": "x", "B": "  "}
	e := &cli.Env{Getenv: func(k string) string { return vars[k] }}
	if !e.Set("A") || e.Set("B") || e.Set("C") {
		t.Error("Set must see only non-blank values")
	}
	e.Problem("%s is wrong", "A")
	if err := e.Err(); err == nil || err.Error() != "  A is wrong" {
		t.Errorf("Err = %v", err)
	}
}

// TestEveryVariableIsInREADME reads every `env` tag in the code base and
// looks for the variable in README's configuration table.
func TestEveryVariableIsInREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	tag := regexp.MustCompile("`[^`]*env:\"([A-Z0-9_]+)\"")
	var seen int
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		for _, m := range tag.FindAllSubmatch(src, -1) {
			seen++
			if !bytes.Contains(readme, []byte("`"+string(m[1])+"`")) {
				t.Errorf("%s: %s is not in README.md", path, m[1])
			}
		}
		return err
	})
	if err != nil || seen < 50 {
		t.Fatalf("read %d variables: %v", seen, err)
	}
}
