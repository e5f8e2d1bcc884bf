package bridgetest

import (
	"log/slog"
	"strings"
	"testing"
)

// secretMarks are the parts of what the fake hands out that must never
// leave the service: the access URL's password prefix and a claim URL's
// path (whose last segment is the one-time code).
var secretMarks = []string{"s3cret-", "/simplefin/claim/"}

// Leak returns the secret mark s holds, or "".
func Leak(s string) string {
	for _, m := range secretMarks {
		if strings.Contains(s, m) {
			return m
		}
	}
	return ""
}

// LeakGuard is a log sink that fails the test when a line carries a
// secret of the fake (spec §14.3, scenario 9); it writes nothing else.
type LeakGuard struct{ T testing.TB }

func (g LeakGuard) Write(p []byte) (int, error) {
	if m := Leak(string(p)); m != "" {
		g.T.Errorf("a log line carries %q: %s", m, p)
	}
	return len(p), nil
}

// Logger logs at debug level through a LeakGuard on t, so that any log
// line carrying a secret fails the test.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(LeakGuard{T: t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
