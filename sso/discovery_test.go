package sso

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakeIssuer serves /.well-known/openid-configuration with the document
// doc(base) (a JSON value) and /jwks with jwks, on 127.0.0.1.
type fakeIssuer struct {
	srv  *httptest.Server
	doc  func(base string) any
	raw  string // served as is instead of doc when set
	code int
	jwks string
	path string // the issuer's path
}

// newFakeIssuer starts a fake issuer after setup (if any) changed it.
func newFakeIssuer(t *testing.T, setup func(f *fakeIssuer)) *fakeIssuer {
	t.Helper()
	f := &fakeIssuer{code: http.StatusOK, jwks: `{"keys": [{"kty": "EC"}]}`}
	f.doc = func(base string) any { return discoveryDoc(base) }
	if setup != nil {
		setup(f)
	}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case f.path + "/.well-known/openid-configuration":
			w.WriteHeader(f.code)
			if f.raw != "" {
				_, _ = w.Write([]byte(f.raw))
				return
			}
			_ = json.NewEncoder(w).Encode(f.doc(f.srv.URL + f.path))
		case "/jwks":
			_, _ = w.Write([]byte(f.jwks))
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	}))
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

func discoveryDoc(base string) map[string]any {
	return map[string]any{
		"issuer":                 base,
		"authorization_endpoint": base + "/authorize",
		"token_endpoint":         base + "/token",
		"jwks_uri":               base + "/jwks",
		"end_session_endpoint":   base + "/logout",
	}
}

func without(doc map[string]any, key string) map[string]any {
	delete(doc, key)
	return doc
}

func TestCheckDiscovery(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(f *fakeIssuer)
		issuer  func(base string) string
		want    string // "" for success
		wantPre string // prefix, for causes the OS words
		closed  bool   // the server is gone
	}{
		{name: "valid", want: ""},
		{name: "issuer with path", setup: func(f *fakeIssuer) { f.path = "/realms/home" },
			issuer: func(base string) string { return base + "/realms/home" }},
		{name: "HTML body", setup: func(f *fakeIssuer) { f.raw = "<!doctype html><title>Login</title>" },
			want: "The discovery document is not valid JSON."},
		{name: "JSON list", setup: func(f *fakeIssuer) { f.raw = `["issuer"]` },
			want: "The discovery document is not valid JSON."},
		{name: "JSON string", setup: func(f *fakeIssuer) { f.raw = `"https://idp.example"` },
			want: "The discovery document is not valid JSON."},
		{name: "JSON null", setup: func(f *fakeIssuer) { f.raw = `null` },
			want: "The discovery document is not valid JSON."},
		{name: "other issuer", setup: func(f *fakeIssuer) {
			f.doc = func(base string) any { d := discoveryDoc(base); d["issuer"] = "https://evil.example"; return d }
		}, issuer: func(base string) string { return base },
			want: "Issuer mismatch: configured {base}, provider says https://evil.example."},
		{name: "configured with a trailing slash", issuer: func(base string) string { return base + "/" },
			want: "Issuer mismatch: configured {base}/, provider says {base} (differs only by a trailing slash)."},
		{name: "provider says a trailing slash", setup: func(f *fakeIssuer) {
			f.doc = func(base string) any { d := discoveryDoc(base); d["issuer"] = base + "/"; return d }
		}, want: "Issuer mismatch: configured {base}, provider says {base}/ (differs only by a trailing slash)."},
		{name: "issuer missing", setup: func(f *fakeIssuer) {
			f.doc = func(base string) any { return without(discoveryDoc(base), "issuer") }
		}, want: "The discovery document lacks issuer."},
		{name: "issuer not a string", setup: func(f *fakeIssuer) {
			f.doc = func(base string) any { d := discoveryDoc(base); d["issuer"] = 7; return d }
		}, want: "The discovery document lacks issuer."},
		{name: "authorization endpoint missing", setup: func(f *fakeIssuer) {
			f.doc = func(base string) any { return without(discoveryDoc(base), "authorization_endpoint") }
		}, want: "The discovery document lacks authorization_endpoint."},
		{name: "token endpoint missing", setup: func(f *fakeIssuer) {
			f.doc = func(base string) any { return without(discoveryDoc(base), "token_endpoint") }
		}, want: "The discovery document lacks token_endpoint."},
		{name: "jwks_uri empty", setup: func(f *fakeIssuer) {
			f.doc = func(base string) any { d := discoveryDoc(base); d["jwks_uri"] = ""; return d }
		}, want: "The discovery document lacks jwks_uri."},
		{name: "HTTP 500", setup: func(f *fakeIssuer) { f.code = http.StatusInternalServerError },
			want: "The discovery document returned HTTP 500."},
		{name: "HTTP 404", setup: func(f *fakeIssuer) { f.code = http.StatusNotFound },
			want: "The discovery document returned HTTP 404."},
		{name: "unreachable", closed: true, wantPre: "Could not reach the discovery document: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeIssuer(t, tt.setup)
			if tt.closed {
				f.srv.Close()
			}
			issuer := f.srv.URL
			if tt.issuer != nil {
				issuer = tt.issuer(f.srv.URL)
			}
			err := CheckDiscovery(context.Background(), issuer, f.srv.Client())
			switch {
			case tt.want == "" && tt.wantPre == "":
				if err != nil {
					t.Fatalf("CheckDiscovery: %v", err)
				}
			case err == nil:
				t.Fatalf("CheckDiscovery passed, want %q%q", tt.want, tt.wantPre)
			case tt.wantPre != "":
				if !strings.HasPrefix(err.Error(), tt.wantPre) || !strings.HasSuffix(err.Error(), ".") ||
					strings.HasSuffix(err.Error(), "..") || strings.Contains(err.Error(), "/.well-known") {
					t.Errorf("error = %q, want %q and a cause without the URL", err, tt.wantPre)
				}
			default:
				if want := strings.ReplaceAll(tt.want, "{base}", f.srv.URL); err.Error() != want {
					t.Errorf("error = %q\n want %q", err, want)
				}
			}
		})
	}
}

func TestCheckDiscoveryTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	client := srv.Client()
	client.Timeout = 50 * time.Millisecond
	err := CheckDiscovery(context.Background(), srv.URL, client)
	if err == nil || err.Error() != "Could not reach the discovery document: timed out." {
		t.Fatalf("error = %v, want the timeout message", err)
	}
}

func TestCheckDiscoveryCancelled(t *testing.T) {
	f := newFakeIssuer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := CheckDiscovery(ctx, f.srv.URL, f.srv.Client())
	if err == nil || !strings.HasPrefix(err.Error(), "Could not reach the discovery document: ") {
		t.Fatalf("error = %v, want could not reach", err)
	}
}
