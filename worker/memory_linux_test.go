package worker_test

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"coffer/worker"
)

// TestTrimStartupMemory: the process's resident pages of its executable
// fall, and it goes on running code from them.
func TestTrimStartupMemory(t *testing.T) {
	before := rssFile(t)
	worker.TrimStartupMemory()
	after := rssFile(t)
	t.Logf("RssFile %d kB before, %d kB after", before, after)
	if after >= before {
		t.Errorf("RssFile %d kB after trimming, %d kB before", after, before)
	}
}

func rssFile(t *testing.T) int {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(status, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("RssFile:")); ok {
			n, err := strconv.Atoi(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
