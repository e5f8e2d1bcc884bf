// Package apitest is the harness of the API's tests, imported by tests
// only: Env (the real app on a fresh database and Redis, with the two
// families alpha and beta, every response checked against the OpenAPI
// document), Browser (a form client with cookies and CSRF), Chrome (a
// headless Chromium), and the fixtures and flows the audiences' packages
// share (single sign-on providers, OAuth clients, ledgers, imports).
// Since it builds the whole app it imports api, so the tests that use it
// are external test packages (rest_test, screens_test, e2e_test…).
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/gofiber/fiber/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/api"
	"coffer/api/rest"
	"coffer/jobs"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/modelstest"
	"coffer/models/secret"
	"coffer/sso"
)

// RedisDB is the Redis database number, in server mode, of the package
// whose tests are running: each package that builds an Env has its own, so
// that packages running in parallel never share queues. (10, 12, 13 and 15
// are the jobs', the worker's and api/cli's.)
func RedisDB() int {
	switch filepath.Base(os.Args[0]) { // go test names the binary after the package
	case "rest.test":
		return 9
	case "screens.test":
		return 8
	case "signin.test":
		return 7
	case "admin.test":
		return 6
	case "mcp.test":
		return 5
	case "e2e.test":
		return 4
	}
	return 11
}

// Env is one test's service: a fresh database, Redis, the real app, and
// the OpenAPI router every response is checked against.
type Env struct {
	T      testing.TB
	Store  *models.Store
	App    *fiber.App
	Redis  asynq.RedisClientOpt
	RDB    redis.UniversalClient
	router routers.Router
	Alpha  *modelstest.FamilyFixture
	Beta   *modelstest.FamilyFixture
	Opts   api.Options
	// Balances is the balance policy of every write (jobs.UseBalances).
	Balances *jobs.Balances
}

func NewEnv(t testing.TB, opts ...func(*api.Options)) *Env {
	t.Helper()
	store := modelstest.NewStore(t)
	ropt, rdb := modelstest.RedisClient(t, RedisDB())
	watch := rest.NewAuthWatch(rdb)
	store.OnAuthChange(rest.AnnounceAuthChange(rdb, watch)) // as main.go wires it
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go watch.Run(ctx)
	queue := asynq.NewClientFromRedisClient(rdb)
	logger := slog.New(slog.NewTextHandler(LogWriter{T: t}, nil))
	balances := jobs.UseBalances(store, queue, logger) // as main.go wires it
	jobs.UseExchangeRates(store, queue, logger, balances)
	o := api.Options{
		Store: store, Redis: rdb, Queue: queue, AuthWatch: watch,
		Logger:              logger,
		APIRateLimitPerHour: 10_000,
		Web: api.WebOptions{
			Secret: []byte("test secret that is long enough for hmac"), Origin: "http://example.com",
			SessionIdle: time.Hour, SessionMaxAge: 24 * time.Hour, LocalLogin: true, SignupEnabled: true,
			Argon2:             secret.Argon2Params{MemoryKiB: 64, Time: 1, Threads: 1}, // cheap: tests hash often
			MaxFailuresAccount: 5, MaxFailuresIP: 20, LockoutWindow: 15 * time.Minute,
			AdminRateLimit: 0,                   // TestAdminRateLimit turns it on
			TrustedProxies: []string{"0.0.0.0"}, // app.Test's peer: each test browser names its own address
		},
	}
	o.SSO = api.SSOOptions{
		Registry: sso.NewRegistry(store, rdb, sso.Options{BaseURL: "http://example.com", HTTPClient: &http.Client{Timeout: 10 * time.Second}}, o.Logger),
		StateKey: []byte("0123456789abcdef0123456789abcdef"), JITMode: api.JITCreateAndLink,
	}
	for _, fn := range opts {
		fn(&o)
	}
	app, err := api.New(o)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{T: t, Store: store, App: app, Redis: ropt, RDB: rdb, router: router, Opts: o, Balances: balances}
	e.Alpha = modelstest.NewFamily(t, store, "alpha")
	e.Beta = modelstest.NewFamily(t, store, "beta")
	t.Cleanup(func() { e.DropTasks() })
	return e
}

// Instance is another web process of the same deployment: its own app
// and provider cache, the same database and Redis.
func (e *Env) Instance(t testing.TB) *Env {
	t.Helper()
	o := e.Opts
	o.SSO.Registry = sso.NewRegistry(e.Store, e.RDB, e.Opts.SSO.Registry.Options(), o.Logger)
	// Its own watch, as another process has: it learns of the changes
	// the test makes through e.store by their announcements.
	o.AuthWatch = rest.NewAuthWatch(e.RDB)
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go o.AuthWatch.Run(ctx)
	WaitLive(t, o.AuthWatch)
	app, err := api.New(o)
	if err != nil {
		t.Fatal(err)
	}
	other := *e
	other.App, other.Opts = app, o
	return &other
}

// WaitLive waits until w is subscribed.
func WaitLive(t testing.TB, w *rest.AuthWatch) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, live := w.Version(); live {
			return
		}
	}
	t.Fatal("the auth watch did not subscribe within 5 s")
}

func (e *Env) Logger() *slog.Logger { return e.Opts.Logger }

// DropTasks removes the tasks this test queued (and only those: each
// test's accounts and chats have ids of their own).
func (e *Env) DropTasks() {
	insp := asynq.NewInspector(e.Redis)
	defer insp.Close()
	for _, q := range []string{"default", "low", "critical"} {
		for _, list := range []func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){insp.ListPendingTasks, insp.ListScheduledTasks} {
			tasks, _ := list(q, asynq.PageSize(1000))
			for _, ti := range tasks {
				if e.owns(ti) {
					_ = insp.DeleteTask(q, ti.ID)
				}
			}
		}
	}
}

func (e *Env) owns(ti *asynq.TaskInfo) bool {
	p := string(ti.Payload)
	for _, f := range []*modelstest.FamilyFixture{e.Alpha, e.Beta} {
		if strings.Contains(p, f.Family.ID.String()) {
			return true
		}
	}
	return false
}

// Response is what a request got back.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r Response) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

// WantJSON fails the test unless r has the status, and returns its JSON
// object.
func (r Response) WantJSON(t *testing.T, status int) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	return r.JSON(t)
}

// Do sends a request with the key (none when empty) and a body (a string
// is sent as is, anything else as JSON), and checks the response against
// the OpenAPI document.
func (e *Env) Do(method, path, key string, body any) Response {
	e.T.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			e.T.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	return e.send(req)
}

// send serves req and checks the answer: no internal text leaks, and it
// is what the OpenAPI document says.
func (e *Env) send(req *http.Request) Response {
	e.T.Helper()
	resp, err := e.App.Test(req, -1)
	if err != nil {
		e.T.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		e.T.Fatal(err)
	}
	r := Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
	NoLeak(e.T, r)
	e.Validate(req, r)
	return r
}

// Validate fails the test when the response is not what the OpenAPI
// document says, or when the route is missing from it.
func (e *Env) Validate(req *http.Request, r Response) {
	e.T.Helper()
	if r.Status == http.StatusMethodNotAllowed || r.Status == http.StatusRequestHeaderFieldsTooLarge {
		return // the document lists what exists, not transport refusals
	}
	vreq := req.Clone(context.Background())
	vreq.Body = http.NoBody
	route, params, err := e.router.FindRoute(vreq)
	if err != nil {
		if r.Status == http.StatusNotFound {
			return // unknown paths are 404 and are not in the document
		}
		e.T.Fatalf("%s %s answered %d but is not in the OpenAPI document: %v", req.Method, req.URL.Path, r.Status, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: vreq, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status: r.Status,
		Header: r.Header,
		Body:   io.NopCloser(bytes.NewReader(r.Body)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
		},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		e.T.Fatalf("%s %s: response %d does not match the OpenAPI document: %v\nbody: %s", req.Method, req.URL.Path, r.Status, err, r.Body)
	}
}

// WantError checks an ErrorResponse.
func WantError(t *testing.T, r Response, status int, code string) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	m := r.JSON(t)
	if m["error"] != code {
		t.Fatalf("error = %v, want %q; body %s", m["error"], code, r.Body)
	}
	if msg, _ := m["message"].(string); msg == "" {
		t.Fatalf("error without a message: %s", r.Body)
	}
	return m
}

// NoLeak fails the test when a response carries a secret of the fake
// Bridge: no API answer or page may ever show one (spec §14.3, 9).
func NoLeak(t testing.TB, r Response) {
	t.Helper()
	if m := bridgetest.Leak(string(r.Body)); m != "" {
		t.Errorf("a response carries %q", m)
	}
}

// TestLog sends the service's log lines to the test's log, shown when the
// test fails.
type LogWriter struct{ T testing.TB }

func (w LogWriter) Write(p []byte) (int, error) {
	w.T.Helper()
	if m := bridgetest.Leak(string(p)); m != "" {
		w.T.Errorf("a log line carries %q", m)
	}
	w.T.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Listen serves the app on a loopback port, for what app.Test cannot show
// (fasthttp refuses oversized bodies before the app sees them), and
// returns its base URL.
func (e *Env) Listen() string {
	e.T.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.T.Fatal(err)
	}
	go func() { _ = e.App.Listener(ln) }()
	e.T.Cleanup(func() { _ = e.App.Shutdown() })
	return "http://" + ln.Addr().String()
}

// Send makes a real HTTP request to base and validates the response.
func (e *Env) Send(req *http.Request) Response {
	e.T.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	r := Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
	NoLeak(e.T, r)
	e.Validate(req, r)
	return r
}

// DoKeyed is e.do with an Idempotency-Key header and a body sent as is.
func (e *Env) DoKeyed(method, path, key, idem, body string) Response {
	e.T.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Idempotency-Key", idem)
	resp, err := e.App.Test(req, -1)
	if err != nil {
		e.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	r := Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
	e.Validate(req, r)
	return r
}

// ForgetKeys removes the idempotency records of the test's families when
// it ends (they would otherwise stay 24 hours).
func (e *Env) ForgetKeys(t *testing.T) {
	t.Cleanup(func() {
		ctx := context.Background()
		for _, f := range []*modelstest.FamilyFixture{e.Alpha, e.Beta} {
			keys, _ := e.RDB.Keys(ctx, "coffer:idempotency:"+f.Family.ID.String()+"*").Result()
			if len(keys) > 0 {
				e.RDB.Del(ctx, keys...)
			}
		}
	})
}

func (e *Env) Count(t *testing.T, f *modelstest.FamilyFixture) int {
	t.Helper()
	_, total, err := e.Store.Transactions(t.Context(), f.Family.ID, models.TransactionFilter{}, models.Page{Number: 1, Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

// BenchEnv is NewEnv without logging and with the rate limit off, so the
// numbers measure the request path itself.
func BenchEnv(b *testing.B) *Env {
	b.Helper()
	return NewEnv(b, func(o *api.Options) {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		o.APIRateLimitPerHour = 10_000_000
	})
}

func (e *Env) Bench(b *testing.B, method, path, key string, body func(i int) string, want int) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var rd io.Reader
		if body != nil {
			rd = strings.NewReader(body(i))
		}
		req := httptest.NewRequest(method, path, rd)
		req.Header.Set("X-Api-Key", key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := e.App.Test(req, -1)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

// BenchPage measures one screen for the session token: from the request
// to the last byte of HTML.
func (e *Env) BenchPage(b *testing.B, path, token string) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Cookie", "session="+token)
		resp, err := e.App.Test(req, -1)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}
