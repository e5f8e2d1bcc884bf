package migrations

import (
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// TestMigrationOrder: order.txt lists every migration file once, in the
// order they were added, and that order is the order of their names,
// which is the order bun runs them in on a fresh install. A file named by
// a clock behind the newest stamp, appended last, sorts before an earlier
// file and fails here.
func TestMigrationOrder(t *testing.T) {
	text, err := os.ReadFile("order.txt")
	if err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(files, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkOrder(orderLines(string(text)), names); err != nil {
		t.Fatal(err)
	}
}

// TestMigrationOrderSlips: checkOrder refuses each slip it exists for.
func TestMigrationOrderSlips(t *testing.T) {
	files := []string{"20261128090000_create_rules.tx.up.sql", "20261201090000_family_rules_version.tx.up.sql"}
	today := "20261127170000_add_splits.tx.up.sql" // named by today's clock, behind the newest stamp
	cases := map[string]struct{ order, files []string }{
		"named before an earlier one": {append(files[:2:2], today), append(files[:2:2], today)},
		"not listed":                  {files, append(files[:2:2], "20261202090000_add_splits.tx.up.sql")},
		"listed without a file":       {append(files[:2:2], "20261202090000_add_splits.tx.up.sql"), files},
		"listed twice":                {append(files[:2:2], files[1]), files},
	}
	if err := checkOrder(files, files); err != nil {
		t.Fatalf("in order: %v", err)
	}
	for name, c := range cases {
		if err := checkOrder(c.order, c.files); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// orderLines are the names in order.txt, without comments and blank lines.
func orderLines(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

// checkOrder reports the first way the added order breaks the rule: each
// name sorts after the one added before it, and order and files hold the
// same names.
func checkOrder(order, files []string) error {
	listed := map[string]bool{}
	for i, name := range order {
		if listed[name] {
			return fmt.Errorf("order.txt lists %s twice", name)
		}
		listed[name] = true
		if i > 0 && name <= order[i-1] {
			return fmt.Errorf("%s was added after %s but sorts before it, so a fresh install would run it first: "+
				"name it after the newest stamp", name, order[i-1])
		}
	}
	onDisk := map[string]bool{}
	for _, name := range files {
		onDisk[name] = true
		if !listed[name] {
			return fmt.Errorf("%s is not in order.txt: append it as the last line", name)
		}
	}
	for _, name := range order {
		if !onDisk[name] {
			return fmt.Errorf("order.txt lists %s, which is no migration file", name)
		}
	}
	return nil
}
