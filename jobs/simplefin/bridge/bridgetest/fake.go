// Package bridgetest is a SimpleFIN Bridge server written to the
// protocol, for tests: it runs on loopback, over HTTP or HTTPS, can be
// told to misbehave, and checks every test's request log against the
// protocol rules. Tests import it; the service never does.
package bridgetest

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options configure a fake Bridge; the zero value is a plain-HTTP fake on
// the real clock, answering in the v1 shape.
type Options struct {
	TLS     bool             // serve HTTPS with a self-signed CA (see CertPool)
	Now     func() time.Time // the clock shared with the service; nil: time.Now
	Version string           // the answer shape: "1" (default), "2" or "both"
	Budget  int              // requests per credential and rolling 24 h the log is checked against; 0: 24
	Quota   Quota            // the Bridge's own warn and block thresholds
	// CapDays is the longest window the Bridge answers (0: 90); a longer
	// one is trimmed to its newest CapDays, with a "was capped" hint
	// unless CapSilent.
	CapDays   int
	CapSilent bool
}

// Server is a fake Bridge.
type Server struct {
	*httptest.Server
	root string // every protocol path is under it

	mu       sync.Mutex
	now      func() time.Time
	clock    *Clock // set through the control endpoint
	tokens   map[string]*token
	creds    map[string]*credential // by user
	byCode   map[string]*credential
	claim    ClaimBehaviour
	accounts AccountsBehaviour
	body     string   // the account set /accounts answers
	data     *Dataset // when set, answers are rendered from it per window
	script   []AccountsBehaviour
	version  string
	capDays  int
	capQuiet bool
	quota    Quota
	budget   int
	exempt   Check
	log      []Request
	conns    int // connections accepted, TLS handshakes included
}

type credential struct {
	code, user, pass string
	revoked          bool
}

// New starts a plain-HTTP fake Bridge for the test's lifetime.
func New(t testing.TB) *Server { return Start(t, Options{}) }

// NewTLS starts an HTTPS fake Bridge; its clients need CertPool.
func NewTLS(t testing.TB) *Server { return Start(t, Options{TLS: true}) }

// Start starts a fake Bridge with options. When the test ends, the server
// stops and its request log is checked against the protocol rules
// (Check), so every test that uses a fake is held to them.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	s := &Server{root: "/simplefin", now: o.Now, tokens: map[string]*token{}, creds: map[string]*credential{},
		byCode: map[string]*credential{}, body: `{"errors":[],"accounts":[]}`, version: o.Version, quota: o.Quota, budget: o.Budget,
		capDays: o.CapDays, capQuiet: o.CapSilent}
	if s.capDays <= 0 {
		s.capDays = 90
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.budget <= 0 {
		s.budget = 24
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+s.root+"/claim/{code}", s.claimHandler)
	mux.HandleFunc("GET "+s.root+"/accounts", s.accountsHandler)
	mux.HandleFunc("GET "+s.root+"/info", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		s.mu.Lock()
		shape := s.shape(nil)
		s.mu.Unlock()
		if shape == "1" {
			_, _ = io.WriteString(w, `{"versions":["1.0"]}`)
			return
		}
		_, _ = io.WriteString(w, `{"versions":["1.0","2.0"]}`)
	})
	s.control(mux)
	s.Server = httptest.NewUnstartedServer(s.record(mux))
	// A client that rejects the certificate makes the server log a
	// handshake error: expected in the tests that do it on purpose.
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
		}
	}
	if o.TLS {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(func() { s.check(t) })
	t.Cleanup(s.Close) // runs first: the log is complete when checked
	return s
}

// SetCap changes the longest window the Bridge answers (see Options).
func (s *Server) SetCap(days int, silent bool) {
	s.mu.Lock()
	s.capDays, s.capQuiet = days, silent
	s.mu.Unlock()
}

// CertPool holds the certificate of an HTTPS fake, for the client's
// root CAs; nil for a plain-HTTP fake.
func (s *Server) CertPool() *x509.CertPool {
	if s.Certificate() == nil {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return pool
}

// Connections reports how many connections the fake accepted, including
// those whose TLS handshake failed before any request.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// SetNow replaces the fake's clock.
func (s *Server) SetNow(now func() time.Time) {
	s.mu.Lock()
	s.now, s.clock = now, nil
	s.mu.Unlock()
}

// Now reads the fake's clock.
func (s *Server) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nowLocked()
}

func (s *Server) nowLocked() time.Time { return s.now().UTC() }

// SetVersion selects the answer shape: "1", "2" or "both". A request's
// own version parameter wins.
func (s *Server) SetVersion(v string) {
	s.mu.Lock()
	s.version = v
	s.mu.Unlock()
}

// credFor returns the credentials of a code, made on first use: fresh
// random ones per fake, so that no test can lean on a fixed password.
func (s *Server) credFor(code string) *credential {
	if c := s.byCode[code]; c != nil {
		return c
	}
	c := &credential{code: code, user: "demo" + randomHex(4), pass: "s3cret-" + code + "-" + randomHex(8)}
	s.byCode[code], s.creds[c.user] = c, c
	return c
}

// AccessURL is the access URL a claim of code returns.
func (s *Server) AccessURL(code string) string {
	s.mu.Lock()
	c := s.credFor(code)
	s.mu.Unlock()
	return strings.Replace(s.URL, "://", "://"+c.user+":"+c.pass+"@", 1) + s.root
}

// Revoke revokes the access URL of a code, as a user can at the Bridge:
// its requests get a plain-text 403.
func (s *Server) Revoke(code string) {
	s.mu.Lock()
	s.credFor(code).revoked = true
	s.mu.Unlock()
}

// Clock is a settable clock that a test shares between the fake and the
// service (jobs.Handlers.Now, models.Store.Now).
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts a clock at t; it moves only when told.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
