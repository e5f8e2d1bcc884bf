package signin

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// FuzzRegistration feeds client metadata to dynamic registration's
// checks: whatever is accepted has 1 to 10 absolute redirect URIs without
// a fragment, none of a scheme that runs code, and plain http only on
// loopback.
func FuzzRegistration(f *testing.F) {
	for _, s := range []string{
		`{"client_name":"App","redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"none"}`,
		`{"redirect_uris":["com.example.app:/oauth"]}`,
		`{"redirect_uris":["https://app.example/cb#x"]}`,
		`{"redirect_uris":["javascript:alert(1)"]}`,
		`{"redirect_uris":["http://evil.example/cb"]}`,
		`{"redirect_uris":["http://[::1]:8080/cb"],"grant_types":["implicit"]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var in registration
		if json.Unmarshal([]byte(body), &in) != nil {
			return
		}
		if checkRegistration(&in) != "" {
			return
		}
		if len(in.RedirectURIs) < 1 || len(in.RedirectURIs) > 10 || in.ClientName == "" {
			t.Fatalf("accepted %q", body)
		}
		for _, raw := range in.RedirectURIs {
			u, err := url.Parse(raw)
			if err != nil || u.Scheme == "" || u.Fragment != "" {
				t.Fatalf("accepted redirect %q", raw)
			}
			switch strings.ToLower(u.Scheme) {
			case "javascript", "data", "file", "vbscript":
				t.Fatalf("accepted redirect %q", raw)
			case "http":
				if h := u.Hostname(); h != "127.0.0.1" && h != "::1" && h != "localhost" {
					t.Fatalf("accepted redirect %q", raw)
				}
			}
		}
	})
}
