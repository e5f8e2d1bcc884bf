package modelstest

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, failing the test with what cond saw
// last if it does not within the time given. It is the one polling loop
// of the tests: what they wait for differs, not how.
func WaitFor(t testing.TB, what string, within time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, seen := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; saw %s", what, seen)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
