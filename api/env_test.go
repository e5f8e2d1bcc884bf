package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
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
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/modelstest"
	"coffer/models/secret"
	"coffer/sso"
)

// redisDB is this package's own Redis database number in server mode.
const redisDB = 11

// env is one test's service: a fresh database, Redis, the real app, and
// the OpenAPI router every response is checked against.
type env struct {
	t      testing.TB
	store  *models.Store
	app    *fiber.App
	redis  asynq.RedisClientOpt
	rdb    redis.UniversalClient
	router routers.Router
	alpha  *modelstest.FamilyFixture
	beta   *modelstest.FamilyFixture
	opts   api.Options
}

func newEnv(t testing.TB, opts ...func(*api.Options)) *env {
	t.Helper()
	store := modelstest.NewStore(t)
	ropt, rdb := modelstest.RedisClient(t, redisDB)
	watch := rest.NewAuthWatch(rdb)
	store.OnAuthChange(rest.AnnounceAuthChange(rdb, watch)) // as main.go wires it
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go watch.Run(ctx)
	queue := asynq.NewClientFromRedisClient(rdb)
	o := api.Options{
		Store: store, Redis: rdb, Queue: queue, AuthWatch: watch,
		Logger:              slog.New(slog.NewTextHandler(testLog{t}, nil)),
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
	e := &env{t: t, store: store, app: app, redis: ropt, rdb: rdb, router: router, opts: o}
	e.alpha = modelstest.NewFamily(t, store, "alpha")
	e.beta = modelstest.NewFamily(t, store, "beta")
	t.Cleanup(func() { e.dropTasks() })
	return e
}

// instance is another web process of the same deployment: its own app
// and provider cache, the same database and Redis.
func (e *env) instance(t testing.TB) *env {
	t.Helper()
	o := e.opts
	o.SSO.Registry = sso.NewRegistry(e.store, e.rdb, e.opts.SSO.Registry.Options(), o.Logger)
	// Its own watch, as another process has: it learns of the changes
	// the test makes through e.store by their announcements.
	o.AuthWatch = rest.NewAuthWatch(e.rdb)
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go o.AuthWatch.Run(ctx)
	waitLive(t, o.AuthWatch)
	app, err := api.New(o)
	if err != nil {
		t.Fatal(err)
	}
	other := *e
	other.app, other.opts = app, o
	return &other
}

// waitLive waits until w is subscribed.
func waitLive(t testing.TB, w *rest.AuthWatch) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, live := w.Version(); live {
			return
		}
	}
	t.Fatal("the auth watch did not subscribe within 5 s")
}

func (e *env) logger() *slog.Logger { return e.opts.Logger }

// dropTasks removes the tasks this test queued (and only those: each
// test's accounts and chats have ids of their own).
func (e *env) dropTasks() {
	insp := asynq.NewInspector(e.redis)
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

func (e *env) owns(ti *asynq.TaskInfo) bool {
	p := string(ti.Payload)
	for _, f := range []*modelstest.FamilyFixture{e.alpha, e.beta} {
		if strings.Contains(p, f.Family.ID.String()) {
			return true
		}
	}
	return false
}

// response is what a request got back.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// wantJSON fails the test unless r has the status, and returns its JSON
// object.
func (r response) wantJSON(t *testing.T, status int) map[string]any {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	return r.json(t)
}

// do sends a request with the key (none when empty) and a body (a string
// is sent as is, anything else as JSON), and checks the response against
// the OpenAPI document.
func (e *env) do(method, path, key string, body any) response {
	e.t.Helper()
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
			e.t.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	resp, err := e.app.Test(req, -1)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	r := response{status: resp.StatusCode, header: resp.Header, body: out}
	noLeak(e.t, r)
	e.validate(req, r)
	return r
}

// validate fails the test when the response is not what the OpenAPI
// document says, or when the route is missing from it.
func (e *env) validate(req *http.Request, r response) {
	e.t.Helper()
	if r.status == http.StatusMethodNotAllowed || r.status == http.StatusRequestHeaderFieldsTooLarge {
		return // the document lists what exists, not transport refusals
	}
	vreq := req.Clone(context.Background())
	vreq.Body = http.NoBody
	route, params, err := e.router.FindRoute(vreq)
	if err != nil {
		if r.status == http.StatusNotFound {
			return // unknown paths are 404 and are not in the document
		}
		e.t.Fatalf("%s %s answered %d but is not in the OpenAPI document: %v", req.Method, req.URL.Path, r.status, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: vreq, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status: r.status,
		Header: r.header,
		Body:   io.NopCloser(bytes.NewReader(r.body)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
		},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		e.t.Fatalf("%s %s: response %d does not match the OpenAPI document: %v\nbody: %s", req.Method, req.URL.Path, r.status, err, r.body)
	}
}

// wantError checks an ErrorResponse.
func wantError(t *testing.T, r response, status int, code string) map[string]any {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	m := r.json(t)
	if m["error"] != code {
		t.Fatalf("error = %v, want %q; body %s", m["error"], code, r.body)
	}
	if msg, _ := m["message"].(string); msg == "" {
		t.Fatalf("error without a message: %s", r.body)
	}
	return m
}

// noLeak fails the test when a response carries a secret of the fake
// Bridge: no API answer or page may ever show one (spec §14.3, 9).
func noLeak(t testing.TB, r response) {
	t.Helper()
	if m := bridgetest.Leak(string(r.body)); m != "" {
		t.Errorf("a response carries %q", m)
	}
}

// testLog sends the service's log lines to the test's log, shown when the
// test fails.
type testLog struct{ t testing.TB }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Helper()
	if m := bridgetest.Leak(string(p)); m != "" {
		w.t.Errorf("a log line carries %q", m)
	}
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// listen serves the app on a loopback port, for what app.Test cannot show
// (fasthttp refuses oversized bodies before the app sees them), and
// returns its base URL.
func (e *env) listen() string {
	e.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	go func() { _ = e.app.Listener(ln) }()
	e.t.Cleanup(func() { _ = e.app.Shutdown() })
	return "http://" + ln.Addr().String()
}

// send makes a real HTTP request to base and validates the response.
func (e *env) send(req *http.Request) response {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, body: out}
	noLeak(e.t, r)
	e.validate(req, r)
	return r
}
