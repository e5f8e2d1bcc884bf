// Package simplefintest is a SimpleFIN Bridge server written to the
// protocol, for tests: it runs on loopback and can be told to misbehave.
// Tests import it; the service never does.
package simplefintest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// ClaimBehaviour scripts how the next claims are answered.
type ClaimBehaviour int

// Claim behaviours.
const (
	ClaimNormally ClaimBehaviour = iota // 200 once per token, then 403
	ClaimHTML403                        // a Cloudflare-style HTML block page
	Claim500                            // a server error
	ClaimHang                           // never answer: the client times out after writing
	ClaimReset                          // consume the token, then drop the connection
	ClaimBadURL                         // 200 with an access URL that has no password
)

// Server is a fake Bridge.
type Server struct {
	*httptest.Server

	mu        sync.Mutex
	claimed   map[string]bool // one-time codes, true once claimed
	posts     map[string]int  // POSTs seen per code
	Behaviour ClaimBehaviour
}

// New starts a fake Bridge for the test's lifetime.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{claimed: map[string]bool{}, posts: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /simplefin/claim/{code}", s.claim)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// Token makes a new one-time setup token.
func (s *Server) Token(code string) string {
	s.mu.Lock()
	s.claimed[code] = false
	s.mu.Unlock()
	return base64.StdEncoding.EncodeToString([]byte(s.URL + "/simplefin/claim/" + code))
}

// Posts reports how many claim POSTs a code received.
func (s *Server) Posts(code string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.posts[code]
}

// Set changes the claim behaviour.
func (s *Server) Set(b ClaimBehaviour) {
	s.mu.Lock()
	s.Behaviour = b
	s.mu.Unlock()
}

func (s *Server) claim(w http.ResponseWriter, r *http.Request) {
	code := r.PathValue("code")
	s.mu.Lock()
	s.posts[code]++
	behaviour := s.Behaviour
	used, known := s.claimed[code]
	s.mu.Unlock()
	switch behaviour {
	case ClaimHTML403:
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, "<!DOCTYPE html><html><head><title>Attention Required! | Cloudflare</title></head><body>blocked</body></html>")
		return
	case Claim500:
		http.Error(w, "upstream unavailable", http.StatusBadGateway)
		return
	case ClaimHang:
		<-r.Context().Done()
		return
	}
	if !known || used {
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	s.mu.Lock()
	s.claimed[code] = true
	s.mu.Unlock()
	switch behaviour {
	case ClaimReset:
		if hj, ok := w.(http.Hijacker); ok {
			conn, _, err := hj.Hijack()
			if err == nil {
				conn.Close()
			}
		}
		return
	case ClaimBadURL:
		fmt.Fprint(w, strings.Replace(s.URL, "://", "://user@", 1)+"/simplefin")
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprint(w, strings.Replace(s.URL, "://", "://demo:s3cret-"+code+"@", 1)+"/simplefin\n")
}
