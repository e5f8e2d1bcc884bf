package signin

import (
	"os/exec"
	"strings"
	"testing"
)

// TestFositeDependencies keeps fosite's compose package and the handlers
// we do not use out of the binary: compose imports every handler fosite
// offers, and their package inits cost every process memory at start.
func TestFositeDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "coffer").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	banned := []string{"github.com/ory/fosite/compose", "github.com/ory/fosite/handler/openid"}
	for _, pkg := range strings.Fields(string(out)) {
		for _, b := range banned {
			if pkg == b {
				t.Errorf("the binary imports %s", pkg)
			}
		}
	}
}
