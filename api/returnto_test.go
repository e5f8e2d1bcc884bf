package api

import "testing"

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
		if got := safeReturnTo(in); got != want {
			t.Errorf("safeReturnTo(%q) = %q, want %q", in, got, want)
		}
	}
}
