package web

import (
	"net/url"
	"strings"
	"testing"
)

func TestSafeReturnTo(t *testing.T) {
	for in, want := range map[string]string{
		"/settings/api_keys":     "/settings/api_keys",
		"/a?b=c":                 "/a?b=c",
		"":                       "/",
		"https://evil.example":   "/",
		"//evil.example":         "/",
		"/\\evil.example":        "/",
		"javascript:alert(1)":    "/",
		"%2F%2Fevil.example":     "/",
		"/%2F%2Fevil.example":    "/",
		"/%5Cevil.example":       "/",
		"/a\x00b":                "/",
		"/ok/%0d%0aSet-Cookie:x": "/",
		"relative/path":          "/",
	} {
		if got := SafeReturnTo(in); got != want {
			t.Errorf("SafeReturnTo(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzSafeReturnTo: whatever comes in, what comes out is a path on this
// site that a browser cannot read as another host.
func FuzzSafeReturnTo(f *testing.F) {
	for _, s := range []string{"/", "/a?b=c", "//evil.example", "/\\x", "%2F%2Fx", "/%09/x", "https://x", "/a#b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := SafeReturnTo(in)
		if out != "/" && out != in {
			t.Fatalf("SafeReturnTo(%q) = %q: changed but not reset", in, out)
		}
		u, err := url.Parse(out)
		if err != nil || u.Host != "" || u.Scheme != "" || !strings.HasPrefix(out, "/") ||
			strings.HasPrefix(out, "//") || strings.HasPrefix(out, "/\\") || len(out) > 1024 {
			t.Fatalf("SafeReturnTo(%q) = %q is not a local path", in, out)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("SafeReturnTo(%q) = %q has a control character", in, out)
			}
		}
	})
}
