package cli_test

// The tests here run the coffer binary as a deployment does: its
// processes, their environment, and the services behind them.

import (
	"crypto/rand"
	"encoding/hex"
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

	"go.yaml.in/yaml/v3"

	"coffer/models/modelstest"
)

// redisDB is this package's own Redis database number: the processes its
// tests start queue their jobs there (jobs/simplefin uses 10, api 11, jobs
// 12, worker 13, the worker benchmark 14).
const redisDB = 15

// TestDeployFilesStart runs `coffer config` with the environment that
// deploy/compose.yaml and deploy/app.json give the processes: each must be
// a configuration the binary accepts in production.
func TestDeployFilesStart(t *testing.T) {
	if modelstest.Embedded() {
		t.Skip("independent of the storage mode: runs in server mode")
	}
	bin := buildCoffer(t)
	config := func(t *testing.T, env map[string]string) string {
		t.Helper()
		cmd := exec.Command(bin, "config")
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("coffer config: %v\n%s", err, out)
		}
		return string(out)
	}

	t.Run("compose", func(t *testing.T) {
		raw, err := os.ReadFile("../../deploy/compose.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Coffer struct {
				Environment map[string]string `yaml:"environment"`
			} `yaml:"x-coffer"`
		}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		// What the file's header tells the operator to set.
		operator := map[string]string{"SECRET_KEY_BASE": randomHex(32), "SECRETS_ENCRYPTION_KEY": "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80="}
		env, missing := interpolate(doc.Coffer.Environment, operator)
		if len(missing) > 0 {
			t.Fatalf("compose needs %v beyond what its header says", missing)
		}
		out := config(t, env)
		if !strings.Contains(out, "COFFER_ENV=production") || !strings.Contains(out, "HOST=0.0.0.0") {
			t.Errorf("compose config:\n%s", out)
		}
		if _, missing := interpolate(doc.Coffer.Environment, nil); len(missing) != 2 {
			t.Errorf("compose must refuse to start without both secrets; it requires %v", missing)
		}
	})

	t.Run("heroku", func(t *testing.T) {
		raw, err := os.ReadFile("../../deploy/app.json")
		if err != nil {
			t.Fatal(err)
		}
		var app struct {
			Env map[string]struct {
				Value     string `json:"value"`
				Generator string `json:"generator"`
				Required  bool   `json:"required"`
			} `json:"env"`
			Addons []string `json:"addons"`
		}
		if err := json.Unmarshal(raw, &app); err != nil {
			t.Fatal(err)
		}
		// What Heroku sets: PORT, the add-ons' URLs, the generators' secrets.
		env := map[string]string{"PORT": "41234",
			"DATABASE_URL": "postgres://u:p@ec2-1-2-3-4.compute-1.amazonaws.com:5432/d",
			"REDIS_URL":    "rediss://:p@ec2-1-2-3-4.compute-1.amazonaws.com:6380"}
		for k, v := range app.Env {
			switch {
			case v.Generator == "secret":
				env[k] = randomHex(32) // as Heroku's generator: 64 hex digits
			case v.Value != "":
				env[k] = v.Value
			case v.Required:
				env[k] = "https://coffer.example.com"
			}
		}
		out := config(t, env)
		for _, want := range []string{"PORT=41234", "REDIS_TLS_SKIP_VERIFY=true", "SECRETS_ENCRYPTION_KEY=********"} {
			if !strings.Contains(out, want) {
				t.Errorf("heroku config lacks %s:\n%s", want, out)
			}
		}
	})
}

var composeVar = regexp.MustCompile(`\$\{([A-Z_]+)(?::([-?])([^}]*))?\}`)

// interpolate expands ${VAR}, ${VAR:-default} and ${VAR:?message} as
// docker compose does, and names the required variables left unset.
func interpolate(in, vars map[string]string) (map[string]string, []string) {
	out := map[string]string{}
	var missing []string
	for k, v := range in {
		out[k] = composeVar.ReplaceAllStringFunc(v, func(m string) string {
			p := composeVar.FindStringSubmatch(m)
			if val := vars[p[1]]; val != "" {
				return val
			}
			if p[2] == "?" {
				missing = append(missing, p[1])
			}
			return p[3]
		})
	}
	return out, missing
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

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
	flushRedis(t, redisDB)
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
		"DATABASE_URL=" + pg.String(), "REDIS_URL=redis://" + redisAddr + "/" + fmt.Sprint(redisDB)}
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
	// A request that needs nothing from the service may still be served
	// (a cached key, a leased count) until the process notices; none may
	// wait: within a second the API says the service is away.
	start := time.Now()
	resp, body := get("/api/v1/accounts")
	for resp != nil && resp.StatusCode == 200 && time.Since(start) < time.Second {
		resp, body = get("/api/v1/accounts")
	}
	t.Logf("503 with %s away after %v", service, time.Since(start))
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
	modelstest.WaitFor(t, what, 10*time.Second, func() (bool, string) { return ok(), "no" })
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

// TestTwoWebTwoWorkers runs the server mode as a deployment does: two
// `coffer web` and two `coffer worker` processes on one database and one
// Redis, behind a balancer that sends each request to either web. They
// behave as one service: a session opened on one web is good on the other,
// an API key's rate limit is counted once, concurrent creates of one
// external id make one row, and the workers share the balance jobs.
func TestTwoWebTwoWorkers(t *testing.T) {
	if modelstest.Embedded() {
		t.Skip("the embedded mode is one process")
	}
	bin := buildCoffer(t)
	flushRedis(t, redisDB)
	ports := [2]string{freePort(t), freePort(t)}
	appURL := "http://127.0.0.1:" + ports[0]
	env := []string{"COFFER_ENV=development", "LOG_LEVEL=error", "DATA_DIR=" + t.TempDir(), "APP_URL=" + appURL,
		"API_RATE_LIMIT_PER_HOUR=300", "DATABASE_URL=" + modelstest.PostgresURL(t), "REDIS_URL=redis://127.0.0.1:6379/" + fmt.Sprint(redisDB)}
	coffer(t, bin, env, "migrate")
	coffer(t, bin, env, "users", "create", "--email", "ann@example.com", "--password", "correct horse battery")
	keyOf := func(name string) string {
		out := strings.Fields(coffer(t, bin, env, "apikeys", "create", "--email", "ann@example.com", "--name", name))
		return out[len(out)-1]
	}
	limited, key := keyOf("limited"), keyOf("main")
	for _, p := range ports {
		start(t, bin, append(env, "PORT="+p), "web")
	}
	start(t, bin, env, "worker")
	start(t, bin, env, "worker")

	// The balancer: request i goes to web i%2, with the public Host.
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(i int, method, path, apiKey string, body io.Reader, header ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://127.0.0.1:"+ports[i%2]+path, body)
		req.Host = "127.0.0.1:" + ports[0]
		if apiKey != "" {
			req.Header.Set("X-Api-Key", apiKey)
			req.Header.Set("Content-Type", "application/json")
		}
		for j := 0; j+1 < len(header); j += 2 {
			req.Header.Set(header[j], header[j+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for i := range 2 {
		waitFor(t, "web "+ports[i], func() bool {
			resp, err := http.Get("http://127.0.0.1:" + ports[i] + "/readyz")
			if err == nil {
				resp.Body.Close()
			}
			return err == nil && resp.StatusCode == 200
		})
	}

	t.Run("one rate limit", func(t *testing.T) {
		for i := range 300 {
			if status, body := send(i, "GET", "/api/v1/accounts", limited, nil); status != 200 {
				t.Fatalf("request %d: %d %s", i, status, body)
			}
		}
		if status, _ := send(1, "GET", "/api/v1/accounts", limited, nil); status != 429 {
			t.Errorf("the 301st request of the hour, on the other web: %d", status)
		}
	})

	t.Run("one session", func(t *testing.T) {
		_, page := send(0, "GET", "/sessions/new", "", nil)
		csrf := regexp.MustCompile(`name="csrf-token" content="([^"]+)"`).FindStringSubmatch(page)
		if csrf == nil {
			t.Fatalf("no CSRF token: %s", page)
		}
		form := url.Values{"email": {"ann@example.com"}, "password": {"correct horse battery"}, "csrf_token": {csrf[1]}}
		status, _ := send(0, "POST", "/sessions", "", strings.NewReader(form.Encode()),
			"Content-Type", "application/x-www-form-urlencoded", "Origin", appURL)
		if status != 303 && status != 302 {
			t.Fatalf("sign-in on web 0: %d", status)
		}
		if status, page := send(1, "GET", "/accounts", "", nil); status != 200 || !strings.Contains(page, "Accounts") {
			t.Errorf("the session on web 1: %d", status)
		}
	})

	t.Run("one row per external id, balances by either worker", func(t *testing.T) {
		_, body := send(0, "POST", "/api/v1/accounts", key, strings.NewReader(`{"account":{"name":"Checking","account_type":"depository","balance":"100"}}`))
		var acct struct{ ID string }
		if err := json.Unmarshal([]byte(body), &acct); err != nil || acct.ID == "" {
			t.Fatalf("account: %s", body)
		}
		tx := fmt.Sprintf(`{"transaction":{"account_id":%q,"date":"2024-01-02","amount":"30.25","name":"Groceries","nature":"expense","external_id":"bank-1"}}`, acct.ID)
		var wg sync.WaitGroup
		statuses := make([]int, 8)
		for i := range statuses {
			wg.Go(func() { statuses[i], _ = send(i, "POST", "/api/v1/transactions", key, strings.NewReader(tx)) })
		}
		wg.Wait()
		created := 0
		for _, s := range statuses {
			if s == 201 {
				created++
			} else if s != 200 {
				t.Errorf("statuses %v", statuses)
			}
		}
		if created != 1 {
			t.Errorf("%d creates of one external id: %v", created, statuses)
		}
		_, list := send(1, "GET", "/api/v1/transactions?account_id="+acct.ID, key, nil)
		if n := strings.Count(list, `"external_id":"bank-1"`); n != 1 {
			t.Errorf("%d rows of bank-1: %s", n, list)
		}
		var last string
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("the account: %s", last)
			}
		})
		waitFor(t, "the balance job", func() bool {
			_, last = send(0, "GET", "/api/v1/accounts/"+acct.ID, key, nil)
			return strings.Contains(last, `"balance":"$69.75"`)
		})
	})
}

// start runs a long-lived command of the binary until the test ends; its
// log is shown if the test fails.
func start(t *testing.T, bin string, env []string, cmd string) {
	t.Helper()
	p := exec.Command(bin, cmd)
	p.Env = env
	var logs strings.Builder
	p.Stdout, p.Stderr = &logs, &logs
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Process.Kill()
		_ = p.Wait()
		if t.Failed() {
			t.Logf("coffer %s:\n%s", cmd, logs.String())
		}
	})
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// flushRedis empties Redis database db of the local server, which only
// the calling test uses, so that no task of an earlier run is left for
// its workers.
func flushRedis(t *testing.T, db int) {
	t.Helper()
	_, c := modelstest.RedisClient(t, db)
	if err := c.FlushDB(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
}
