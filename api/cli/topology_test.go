package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"coffer/models/modelstest"
)

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
	flushRedis(t, 14)
	ports := [2]string{freePort(t), freePort(t)}
	appURL := "http://127.0.0.1:" + ports[0]
	env := []string{"COFFER_ENV=development", "LOG_LEVEL=error", "DATA_DIR=" + t.TempDir(), "APP_URL=" + appURL,
		"API_RATE_LIMIT_PER_HOUR=300", "DATABASE_URL=" + modelstest.PostgresURL(t), "REDIS_URL=redis://127.0.0.1:6379/14"}
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
