package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"coffer/models/modelstest"
)

// TestServicesAwayAndBack runs `coffer web` with Redis, then PostgreSQL,
// behind a proxy that the test cuts (connections dropped, new ones
// swallowed) and restores: meanwhile the API answers 503 with Retry-After
// and the screens a page that says so, and afterwards both recover by
// themselves.
func TestServicesAwayAndBack(t *testing.T) {
	if modelstest.Embedded() {
		t.Skip("the embedded mode's services live in the process")
	}
	bin := buildCoffer(t)
	flushRedis(t, 13)
	for _, service := range []string{"Redis", "PostgreSQL"} {
		t.Run(service, func(t *testing.T) { awayAndBack(t, bin, service) })
	}
}

func awayAndBack(t *testing.T, bin, service string) {
	pg, err := url.Parse(modelstest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	redisAddr := "127.0.0.1:6379"
	var proxy *proxy
	if service == "Redis" {
		proxy = newProxy(t, redisAddr)
		redisAddr = proxy.addr()
	} else {
		proxy = newProxy(t, pg.Host)
		pg.Host = proxy.addr()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	env := []string{"COFFER_ENV=development", "LOG_LEVEL=error", "DATA_DIR=" + t.TempDir(), "PORT=" + port,
		"DATABASE_URL=" + pg.String(), "REDIS_URL=redis://" + redisAddr + "/13"}
	coffer(t, bin, env, "migrate")
	coffer(t, bin, env, "users", "create", "--email", "ann@example.com", "--password", "correct horse battery")
	out := strings.Fields(coffer(t, bin, env, "apikeys", "create", "--email", "ann@example.com"))
	key := out[len(out)-1]

	web := exec.Command(bin, "web")
	web.Env = env
	var logs strings.Builder
	web.Stderr = &logs
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("coffer web's log:\n%s", logs.String())
		}
	})
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = web.Process.Kill(); _ = web.Wait() })
	base := "http://127.0.0.1:" + port
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("X-Api-Key", key)
		resp, err := client.Do(req)
		if err != nil {
			return nil, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	waitFor(t, "the API to answer", func() bool { r, _ := get("/api/v1/accounts"); return r != nil && r.StatusCode == 200 })
	_, page := get("/sessions/new")
	csrf := regexp.MustCompile(`name="csrf-token" content="([^"]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		t.Fatalf("no CSRF token on the sign-in page: %s", page)
	}

	proxy.setCut(true)
	start := time.Now()
	resp, body := get("/api/v1/accounts")
	t.Logf("first answer with %s away: %v", service, time.Since(start))
	var e struct{ Error, Message string }
	if resp == nil || resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || json.Unmarshal([]byte(body), &e) != nil || e.Error != "service_unavailable" {
		t.Fatalf("API with %s away: %v %s", service, resp, body)
	}
	// Signing in reads the user and counts failures in Redis: the screen
	// says what is wrong.
	form := url.Values{"email": {"ann@example.com"}, "password": {"correct horse battery"}, "csrf_token": {csrf[1]}}
	req, _ := http.NewRequest("POST", base+"/sessions", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	sr, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	screen, _ := io.ReadAll(sr.Body)
	sr.Body.Close()
	if sr.StatusCode != 503 || !strings.HasPrefix(sr.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(screen), "temporarily unavailable") {
		t.Errorf("sign-in with %s away: %d %s\n%s", service, sr.StatusCode, sr.Header.Get("Content-Type"), screen)
	}

	proxy.setCut(false)
	waitFor(t, "the API to recover", func() bool { r, _ := get("/api/v1/accounts"); return r != nil && r.StatusCode == 200 })
}

// buildCoffer builds the binary as CI ships it.
func buildCoffer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "coffer")
	build := exec.Command("go", "build", "-o", bin, "../..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// coffer runs one command of the binary to its end and returns its output.
func coffer(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("coffer %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// waitFor polls ok for up to ten seconds.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for range 200 {
		if ok() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("gave up waiting for %s", what)
}

// proxy forwards TCP connections to target until it is cut: then it drops
// every connection and swallows new ones, as a network that loses packets.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.setCut(true) })
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		cut := p.cut
		p.mu.Unlock()
		if !cut {
			go p.forward(c)
		}
	}
}

func (p *proxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, up)
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c) }()
	_, _ = io.Copy(c, up)
}

// setCut cuts or restores the link; either way the connections open now
// end.
func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
