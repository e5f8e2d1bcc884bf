package api_test

import (
	"io"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"coffer/api"
	"coffer/models"
)

var phone = map[string]any{"device_id": "4f1c", "device_name": "Ana's phone", "device_type": "ios", "os_version": "18.1", "app_version": "1.4.0"}

// TestMobileAuth sends the mobile app's own request bodies to its sign-in
// endpoints.
func TestMobileAuth(t *testing.T) {
	e := newEnv(t)
	setPassword(t, e, e.alpha.User, "correct horse battery")

	r := e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.alpha.User.Email, "password": "wrong", "device": phone})
	if m := r.wantJSON(t, 401); m["error"] != "Invalid email or password" {
		t.Fatalf("bad password: %v", m)
	}
	r = e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.alpha.User.Email, "password": "correct horse battery"})
	if m := r.wantJSON(t, 400); m["error"] != "Device information is required" {
		t.Fatalf("no device: %v", m)
	}
	for _, body := range []any{"not json", `[1,2]`, `{"email": 5}`} {
		if r := e.do("POST", "/api/v1/auth/login", "", body); r.status != 400 {
			t.Fatalf("%v: %d %s", body, r.status, r.body)
		}
	}
	r = e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.alpha.User.Email, "password": "correct horse battery", "device": phone})
	m := r.wantJSON(t, 200)
	user, _ := m["user"].(map[string]any)
	if m["token_type"] != "Bearer" || m["access_token"] == "" || m["refresh_token"] == "" || user["email"] != e.alpha.User.Email {
		t.Fatalf("login: %v", m)
	}
	if auditCount(t, e, models.EventLogin, "") == 0 {
		t.Fatal("no login audit row")
	}
	access, refresh := m["access_token"].(string), m["refresh_token"].(string)
	ip := e.browser(t).ip // counted by the token endpoints' limit
	if r := e.doBearer("GET", "/api/v1/accounts", access); r.status != 200 {
		t.Fatalf("bearer: %d %s", r.status, r.body)
	}

	r = e.doFrom(ip, "POST", "/api/v1/auth/refresh", map[string]any{"refresh_token": refresh, "device": phone})
	m = r.wantJSON(t, 200)
	if m["refresh_token"] == refresh || m["access_token"] == "" {
		t.Fatalf("refresh: %v", m)
	}
	r = e.doFrom(ip, "POST", "/api/v1/auth/refresh", map[string]any{"refresh_token": refresh, "device": phone})
	if m := r.wantJSON(t, 401); m["error"] != "Invalid refresh token" {
		t.Fatalf("reused refresh: %v", m)
	}
	r = e.doFrom(ip, "POST", "/api/v1/auth/refresh", map[string]any{"device": phone})
	if m := r.wantJSON(t, 400); m["error"] != "Refresh token is required" {
		t.Fatalf("no refresh token: %v", m)
	}

	signup := map[string]any{"user": map[string]any{"email": "new-" + e.alpha.User.Email, "password": "Another horse 9!", "first_name": "Bo", "last_name": "Li"}, "device": phone}
	r = e.doFrom(ip, "POST", "/api/v1/auth/signup", signup)
	if m := r.wantJSON(t, 201); m["access_token"] == "" {
		t.Fatalf("signup: %v", m)
	}
	if r := e.doFrom(ip, "POST", "/api/v1/auth/signup", signup); r.status != 422 {
		t.Fatalf("signup twice: %d %s", r.status, r.body)
	}

	// Password sign-in off: refused, as POST /sessions is.
	off := newEnv(t, func(o *api.Options) { o.Web.LocalLogin = false; o.Web.SignupEnabled = false })
	setPassword(t, off, off.alpha.User, "correct horse battery")
	r = off.do("POST", "/api/v1/auth/login", "", map[string]any{"email": off.alpha.User.Email, "password": "correct horse battery", "device": phone})
	r.wantJSON(t, 403)
	r = off.do("POST", "/api/v1/auth/signup", "", signup)
	r.wantJSON(t, 403)
}

// TestOAuthBadRequests: what the authorization server refuses.
func TestOAuthBadRequests(t *testing.T) {
	e := newEnv(t, trustLoopback)
	base := e.listen()
	ctx := oauthClientCtx(t)
	clientID := registerClient(t, ctx, base, "http://127.0.0.1/callback")
	conf := &oauth2.Config{ClientID: clientID, RedirectURL: "http://127.0.0.1:5555/callback", Scopes: []string{"read_write"},
		Endpoint: oauth2.Endpoint{AuthURL: base + "/oauth/authorize", TokenURL: base + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	b := signedInBrowser(t, e)
	challenge := oauth2.S256ChallengeOption(oauth2.GenerateVerifier())

	path := func(c *oauth2.Config, opts ...oauth2.AuthCodeOption) string {
		u, _ := url.Parse(c.AuthCodeURL("state-0123456789", opts...))
		return u.RequestURI()
	}
	evil := *conf
	evil.RedirectURL = "https://evil.example/cb"
	if r := b.get(path(&evil, challenge)); r.status != 400 || r.header.Get("Location") != "" {
		t.Fatalf("unregistered redirect: %d %s", r.status, r.header.Get("Location"))
	}
	unknown := *conf
	unknown.ClientID = "cofc_unknown"
	if r := b.get(path(&unknown, challenge)); r.status != 400 || !strings.Contains(string(r.body), "not registered") {
		t.Fatalf("unknown client: %d", r.status)
	}
	if r := b.get(path(conf)); r.status != 303 && r.status != 302 || !strings.Contains(r.header.Get("Location"), "error=invalid_request") {
		t.Fatalf("no PKCE: %d %s", r.status, r.header.Get("Location"))
	}
	u, _ := url.Parse(conf.AuthCodeURL("state-0123456789", challenge))
	form := u.Query()
	form.Set("decision", "allow")
	form.Set("csrf_token", "forged")
	if r := b.get(u.RequestURI()); r.status != 200 || !strings.Contains(string(r.body), "read and change") {
		t.Fatalf("consent for read_write on another loopback port: %d", r.status)
	}
	if r := b.post("/oauth/authorize", form); r.status != 403 {
		t.Fatalf("consent without CSRF: %d", r.status)
	}
	form.Del("csrf_token")
	form.Set("decision", "deny")
	if r := b.post("/oauth/authorize", form); !strings.Contains(r.header.Get("Location"), "error=access_denied") {
		t.Fatalf("deny: %d %s", r.status, r.header.Get("Location"))
	}

	verifier := oauth2.GenerateVerifier()
	code := authorizeAs(t, b, conf, verifier)
	if _, err := conf.Exchange(ctx, code); err == nil {
		t.Fatal("exchange without verifier")
	}
	code = authorizeAs(t, b, conf, verifier)
	if _, err := conf.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier())); !isOAuthError(err, "invalid_grant") {
		t.Fatalf("wrong verifier: %v", err)
	}

	// A write token writes; the suspended user's token stops at once.
	code = authorizeAs(t, b, conf, verifier)
	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if st, _, m := getJSON(t, ctx, "POST", base+"/api/v1/tags", map[string]any{"tag": map[string]any{"name": "via oauth"}}, bearer(tok.AccessToken)); st != 201 {
		t.Fatalf("write with read_write: %d %v", st, m)
	}
	if r := b.get("/settings/authorized_apps"); r.status != 200 || !strings.Contains(string(r.body), "Budget Helper") {
		t.Fatalf("authorized apps: %d", r.status)
	}
	// Suspended through the store, as the admin screen does: the token,
	// cached by this process, stops at once.
	if st, _, _ := getJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, bearer(tok.AccessToken)); st != 200 {
		t.Fatalf("before suspension: %d", st)
	}
	admin := &models.User{FamilyID: e.alpha.Family.ID, Email: "admin-" + e.alpha.User.Email, Role: models.RoleAdmin}
	if err := e.store.CreateUser(t.Context(), admin); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SuspendUser(t.Context(), models.AdminChange{ActorID: admin.ID, ActorRole: models.RoleAdmin,
		ActorFamilyID: e.alpha.Family.ID, TargetID: e.alpha.User.ID}); err != nil {
		t.Fatal(err)
	}
	if st, h, _ := getJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, bearer(tok.AccessToken)); st != 401 || h.Get("WWW-Authenticate") == "" {
		t.Fatalf("suspended user's token: %d", st)
	}
	if _, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil {
		t.Fatal("suspended user's refresh")
	}
}

// authorizeAs is authorize for a client whose name the test does not check.
func authorizeAs(t *testing.T, b *browser, conf *oauth2.Config, verifier string) string {
	t.Helper()
	return authorize(t, b, conf, verifier)
}

// TestOAuthTokenRateLimit: the 11th token request of a minute from one IP
// is 429 with Retry-After.
func TestOAuthTokenRateLimit(t *testing.T) {
	e := newEnv(t)
	b := e.browser(t)
	for i := 1; i <= 11; i++ {
		r := b.send("POST", "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {"nope"}, "client_id": {"x"}}, nil)
		if i <= 10 && r.status == 429 {
			t.Fatalf("request %d limited", i)
		}
		if i == 11 {
			if r.status != 429 || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), "rate_limited") {
				t.Fatalf("11th: %d %v %s", r.status, r.header, r.body)
			}
		}
	}
}

// doBearer sends a request with a bearer token and checks the answer
// against the OpenAPI document.
func (e *env) doBearer(method, path, token string) response {
	e.t.Helper()
	req := httptest.NewRequest(method, path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.app.Test(req, -1)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, body: out}
	e.validate(req, r)
	return r
}
