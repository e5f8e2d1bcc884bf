package sso

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"coffer/models/publicaddr"
)

// TestHTTPClientRefusesPrivateHosts: discovery, JWKS, metadata and Test
// connection all go through NewHTTPClient, which refuses an identity
// provider on loopback unless SSO_ALLOW_PRIVATE_HOSTS allows it.
func TestHTTPClientRefusesPrivateHosts(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()

	guarded, err := NewHTTPClient(5*time.Second, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckDiscovery(t.Context(), srv.URL, guarded); err == nil {
		t.Fatal("discovery on loopback accepted")
	}
	resp, err := guarded.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, publicaddr.ErrPrivate) || hits.Load() != 0 {
		t.Fatalf("GET %s: %v, %d requests seen; want ErrPrivate and none", srv.URL, err, hits.Load())
	}

	allowed, err := NewHTTPClient(5*time.Second, "", true)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = allowed.Get(srv.URL)
	if err != nil {
		t.Fatalf("allowed: %v", err)
	}
	resp.Body.Close()
	if n := hits.Load(); n != 1 {
		t.Fatalf("%d requests seen, want 1", n)
	}
}
