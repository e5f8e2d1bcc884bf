package ssotest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// dexVersion is the Dex release deploy/tools/dex/go.mod pins.
const dexVersion = "v2.45.1"

// dexBinary returns the path of the Dex binary: $COFFER_DEX_BIN, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/coffer/dex-v2.45.1, the paths
// deploy/tools/dex/build.sh writes to. A missing binary is built by that
// script, under a file lock, so that test packages running in parallel
// build it once.
func dexBinary(t testing.TB) string {
	t.Helper()
	path := os.Getenv("COFFER_DEX_BIN")
	if path == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				t.Fatalf("ssotest: no cache directory for dex: %v", err)
			}
			cache = filepath.Join(home, ".cache")
		}
		path = filepath.Join(cache, "coffer", "dex-"+dexVersion)
	}
	if executable(path) {
		return path
	}
	if err := buildDex(t, path); err != nil {
		t.Fatalf("ssotest: build dex: %v", err)
	}
	return path
}

func buildDex(t testing.TB, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	// Unlocked by Close, when the descriptor goes.
	if executable(path) {
		return nil // another test package built it while we waited
	}
	script, err := findBuildScript()
	if err != nil {
		return err
	}
	start := time.Now()
	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), "COFFER_DEX_BIN="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", script, err, out)
	}
	if !executable(path) {
		return fmt.Errorf("%s left no binary at %s\n%s", script, path, out)
	}
	t.Logf("ssotest: built dex %s in %s", dexVersion, time.Since(start).Round(time.Second))
	return nil
}

// findBuildScript looks for deploy/tools/dex/build.sh in the working
// directory (a test's package directory) and each of its parents.
func findBuildScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		script := filepath.Join(dir, "deploy", "tools", "dex", "build.sh")
		if _, err := os.Stat(script); err == nil {
			return script, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no deploy/tools/dex/build.sh above the working directory; set COFFER_DEX_BIN to a dex %s binary", dexVersion)
		}
		dir = parent
	}
}

func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
