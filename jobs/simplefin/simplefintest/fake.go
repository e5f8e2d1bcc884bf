// Package simplefintest is a SimpleFIN Bridge server written to the
// protocol, for tests: it runs on loopback and can be told to misbehave.
// Tests import it; the service never does.
package simplefintest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
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

// AccountsBehaviour scripts how the next /accounts requests are answered.
type AccountsBehaviour int

// Accounts behaviours.
const (
	AccountsNormally  AccountsBehaviour = iota // 200 with Body
	Accounts402                                // payment required
	AccountsHTML403                            // a front-end block page, not a revoked URL
	Accounts429                                // rate limited, Retry-After: 120, HTML body
	Accounts5xxOnce                            // one 503, then normal
	AccountsTruncated                          // a 200 whose JSON is cut short
	AccountsReset                              // drop the connection mid-body
	Accounts500                                // a server error, every time
	AccountsBadJSON                            // a complete 200 that is not an account set
	AccountsQuota                              // a 200 with no accounts and a quota message
	AccountsHTML429                            // a Cloudflare 429 without Retry-After
	AccountsGenAuth                            // a v2 200 with gen.auth and no accounts
	AccountsRedirect                           // a 302 to another host
	AccountsHang                               // no answer until the client gives up
)

// Server is a fake Bridge.
type Server struct {
	*httptest.Server

	mu        sync.Mutex
	claimed   map[string]bool // one-time codes, true once claimed
	posts     map[string]int  // POSTs seen per code
	revoked   map[string]bool // access passwords revoked at the Bridge
	Behaviour ClaimBehaviour

	accounts  AccountsBehaviour
	body      string       // the account set /accounts answers
	data      *Dataset     // when set, answers are rendered from it per window
	requests  int          // /accounts requests seen
	lastQuery url.Values   // of the last /accounts request
	queries   []url.Values // of every /accounts request
	script    []AccountsBehaviour
}

// New starts a fake Bridge for the test's lifetime.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{claimed: map[string]bool{}, posts: map[string]int{}, revoked: map[string]bool{}, body: `{"errors":[],"accounts":[]}`}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /simplefin/claim/{code}", s.claim)
	mux.HandleFunc("GET /simplefin/accounts", s.accountsHandler)
	mux.HandleFunc("GET /simplefin/info", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"versions":["1.0"]}`)
	})
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

// AccessURL is the access URL a claim of code returns.
func (s *Server) AccessURL(code string) string {
	return strings.Replace(s.URL, "://", "://demo:s3cret-"+code+"@", 1) + "/simplefin"
}

// SetAccounts sets the /accounts behaviour and the account set it answers.
func (s *Server) SetAccounts(b AccountsBehaviour, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts = b
	if body != "" {
		s.body = body
	}
}

// SetDataset makes /accounts answer from d, window by window.
func (s *Server) SetDataset(d *Dataset) {
	s.mu.Lock()
	s.data = d
	s.mu.Unlock()
}

// Script makes the next requests behave as listed, one each, before the
// behaviour set with SetAccounts applies again.
func (s *Server) Script(bs ...AccountsBehaviour) {
	s.mu.Lock()
	s.script = append(s.script, bs...)
	s.mu.Unlock()
}

// Queries returns the query of every /accounts request so far.
func (s *Server) Queries() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.queries...)
}

// Revoke revokes the access URL of a code, as a user can at the Bridge.
func (s *Server) Revoke(code string) {
	s.mu.Lock()
	s.revoked["s3cret-"+code] = true
	s.mu.Unlock()
}

// AccountsRequests reports the /accounts requests seen and the last query.
func (s *Server) AccountsRequests() (int, url.Values) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.lastQuery
}

func (s *Server) accountsHandler(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	s.lastQuery = r.URL.Query()
	s.queries = append(s.queries, r.URL.Query())
	behaviour, body := s.accounts, s.body
	if len(s.script) > 0 {
		behaviour, s.script = s.script[0], s.script[1:]
	}
	if s.data != nil {
		body = s.data.render(r.URL.Query())
	}
	user, pass, ok := r.BasicAuth()
	revoked := s.revoked[pass]
	if behaviour == Accounts5xxOnce {
		s.accounts = AccountsNormally
	}
	s.mu.Unlock()
	if !ok || user != "demo" || !strings.HasPrefix(pass, "s3cret-") || revoked {
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	switch behaviour {
	case Accounts402:
		http.Error(w, "Payment Required", http.StatusPaymentRequired)
	case AccountsHTML403:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, "<html><body>Access denied | Cloudflare</body></html>")
	case Accounts429:
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, "<html><body>Too many requests</body></html>")
	case Accounts5xxOnce, Accounts500:
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
	case AccountsBadJSON:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"errors":[],"accounts":"nope"}`)
	case AccountsQuota:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"errors":["You must make fewer requests: data is only refreshed once every 24 hours."],"accounts":[]}`)
	case AccountsHTML429:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, "<html><body>Rate limited | Cloudflare</body></html>")
	case AccountsHang:
		<-r.Context().Done()
	case AccountsRedirect:
		http.Redirect(w, r, "http://elsewhere.example/simplefin/accounts", http.StatusFound)
	case AccountsGenAuth:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"errors":[],"errlist":[{"code":"gen.auth","msg":"Authentication failed"}],"accounts":[]}`)
	case AccountsTruncated:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body[:len(body)/2])
	case AccountsReset:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		fmt.Fprint(w, body[:len(body)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
		}
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}
}
