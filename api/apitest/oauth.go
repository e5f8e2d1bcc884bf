package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"coffer/api"
	"coffer/models"
)

// TrustLoopback believes X-Forwarded-For from the loopback listener, so
// that each test's real HTTP clients name an address of their own and
// never share the token endpoint's per-IP count.
func TrustLoopback(o *api.Options) {
	o.Web.TrustedProxies = append(o.Web.TrustedProxies, "127.0.0.1")
}

type xffTransport struct{ ip string }

func (x xffTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", x.ip)
	return http.DefaultTransport.RoundTrip(r)
}

// OAuthClientCtx is a context whose oauth2 calls come from a fresh IP.
func OAuthClientCtx(t *testing.T) context.Context {
	ip := fmt.Sprintf("10.%d.%d.%d", rand.IntN(256), rand.IntN(256), rand.IntN(254)+1)
	return context.WithValue(t.Context(), oauth2.HTTPClient, &http.Client{Transport: xffTransport{ip}})
}

func GetJSON(t *testing.T, ctx context.Context, method, u string, body any, header map[string]string) (int, http.Header, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = strings.NewReader(string(raw))
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := ctx.Value(oauth2.HTTPClient).(*http.Client).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	if resp.StatusCode == 500 {
		t.Fatalf("%s %s: 500 %s", method, u, raw)
	}
	return resp.StatusCode, resp.Header, m
}

// RegisterClient registers a public client and returns its id.
func RegisterClient(t *testing.T, ctx context.Context, base string, redirects ...string) string {
	t.Helper()
	st, _, m := GetJSON(t, ctx, "POST", base+"/oauth/register", map[string]any{
		"client_name": "Budget Helper", "redirect_uris": redirects, "token_endpoint_auth_method": "none"}, nil)
	if st != 201 {
		t.Fatalf("register: %d %v", st, m)
	}
	return m["client_id"].(string)
}

// Authorize walks a signed-in browser through the consent screen and
// returns the code the app's redirect URI receives.
func Authorize(t *testing.T, b *Browser, conf *oauth2.Config, verifier string) string {
	t.Helper()
	u, _ := url.Parse(conf.AuthCodeURL("state-0123456789", oauth2.S256ChallengeOption(verifier)))
	r := b.Get(u.RequestURI())
	if r.Status != 200 || !strings.Contains(string(r.Body), ">Allow<") || !strings.Contains(string(r.Body), ">Deny<") ||
		!strings.Contains(string(r.Body), "Budget Helper") {
		t.Fatalf("consent: %d %s", r.Status, r.Body)
	}
	form := u.Query()
	form.Set("decision", "allow")
	r = b.Post("/oauth/authorize", form)
	if r.Status != 303 {
		t.Fatalf("allow: %d %s", r.Status, r.Body)
	}
	loc, _ := url.Parse(r.Header.Get("Location"))
	if loc.Query().Get("state") != "state-0123456789" || loc.Query().Get("code") == "" {
		t.Fatalf("redirect %s", loc)
	}
	return loc.Query().Get("code")
}

func Bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

// MobileLogin signs u in through the mobile app's endpoint and returns
// its access and refresh tokens.
func MobileLogin(t *testing.T, e *Env, u *models.User, password string) (access, refresh string) {
	t.Helper()
	m := e.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": u.Email, "password": password, "device": Phone}).WantJSON(t, 200)
	return m["access_token"].(string), m["refresh_token"].(string)
}

// SendAsync posts a form from another goroutine than the test's: it
// reports the status rather than failing the test.
func (b *Browser) SendAsync(method, path string, form url.Values) int {
	req := httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", b.IP)
	resp, err := b.E.App.Test(req, -1)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// ShortTokenEnv is an env whose access tokens live 2 s, on clocks (the
// app's and the store's) that the test moves forward with skew; alpha's
// user has the password "correct horse battery".
func ShortTokenEnv(t *testing.T) (*Env, *atomic.Int64) {
	t.Helper()
	skew := new(atomic.Int64)
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	e := NewEnv(t, func(o *api.Options) {
		o.Clock = clock
		o.OAuth.AccessTokenTTL = 2 * time.Second
	})
	e.Store.Now = func() time.Time { return clock().UTC() }
	SetPassword(t, e, e.Alpha.User, "correct horse battery")
	return e, skew
}

// DoFrom is do from the client address ip (X-Forwarded-For), for the
// endpoints limited per IP: each test counts on an address of its own,
// not on the one every do shares.
func (e *Env) DoFrom(ip, method, path string, body any) Response {
	e.T.Helper()
	var raw []byte
	switch b := body.(type) {
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			e.T.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", ip)
	return e.send(req)
}

var Phone = map[string]any{"device_id": "4f1c", "device_name": "Ana's phone", "device_type": "ios", "os_version": "18.1", "app_version": "1.4.0"}

// DoBearer sends a request with a bearer token and checks the answer
// against the OpenAPI document.
func (e *Env) DoBearer(method, path, token string) Response {
	e.T.Helper()
	req := httptest.NewRequest(method, path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	return e.send(req)
}
