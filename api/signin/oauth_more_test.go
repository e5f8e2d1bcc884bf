package signin_test

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/models"
)

// TestMobileAuth sends the mobile app's own request bodies to its sign-in
// endpoints.
func TestMobileAuth(t *testing.T) {
	e := apitest.NewEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")

	r := e.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.Alpha.User.Email, "password": "wrong", "device": apitest.Phone})
	if m := r.WantJSON(t, 401); m["error"] != "Invalid email or password" {
		t.Fatalf("bad password: %v", m)
	}
	r = e.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.Alpha.User.Email, "password": "correct horse battery"})
	if m := r.WantJSON(t, 400); m["error"] != "Device information is required" {
		t.Fatalf("no device: %v", m)
	}
	for _, body := range []any{"not json", `[1,2]`, `{"email": 5}`} {
		if r := e.Do("POST", "/api/v1/auth/login", "", body); r.Status != 400 {
			t.Fatalf("%v: %d %s", body, r.Status, r.Body)
		}
	}
	r = e.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.Alpha.User.Email, "password": "correct horse battery", "device": apitest.Phone})
	m := r.WantJSON(t, 200)
	user, _ := m["user"].(map[string]any)
	if m["token_type"] != "Bearer" || m["access_token"] == "" || m["refresh_token"] == "" || user["email"] != e.Alpha.User.Email {
		t.Fatalf("login: %v", m)
	}
	if apitest.AuditCount(t, e, models.EventLogin, "") == 0 {
		t.Fatal("no login audit row")
	}
	access, refresh := m["access_token"].(string), m["refresh_token"].(string)
	ip := e.Browser(t).IP // counted by the token endpoints' limit
	if r := e.DoBearer("GET", "/api/v1/accounts", access); r.Status != 200 {
		t.Fatalf("bearer: %d %s", r.Status, r.Body)
	}

	r = e.DoFrom(ip, "POST", "/api/v1/auth/refresh", map[string]any{"refresh_token": refresh, "device": apitest.Phone})
	m = r.WantJSON(t, 200)
	if m["refresh_token"] == refresh || m["access_token"] == "" {
		t.Fatalf("refresh: %v", m)
	}
	r = e.DoFrom(ip, "POST", "/api/v1/auth/refresh", map[string]any{"refresh_token": refresh, "device": apitest.Phone})
	if m := r.WantJSON(t, 401); m["error"] != "Invalid refresh token" {
		t.Fatalf("reused refresh: %v", m)
	}
	r = e.DoFrom(ip, "POST", "/api/v1/auth/refresh", map[string]any{"device": apitest.Phone})
	if m := r.WantJSON(t, 400); m["error"] != "Refresh token is required" {
		t.Fatalf("no refresh token: %v", m)
	}

	signup := map[string]any{"user": map[string]any{"email": "new-" + e.Alpha.User.Email, "password": "Another horse 9!", "first_name": "Bo", "last_name": "Li"}, "device": apitest.Phone}
	r = e.DoFrom(ip, "POST", "/api/v1/auth/signup", signup)
	if m := r.WantJSON(t, 201); m["access_token"] == "" {
		t.Fatalf("signup: %v", m)
	}
	if r := e.DoFrom(ip, "POST", "/api/v1/auth/signup", signup); r.Status != 422 {
		t.Fatalf("signup twice: %d %s", r.Status, r.Body)
	}

	// Password sign-in off: refused, as POST /sessions is.
	off := apitest.NewEnv(t, func(o *api.Options) { o.Web.LocalLogin = false; o.Web.SignupEnabled = false })
	apitest.SetPassword(t, off, off.Alpha.User, "correct horse battery")
	r = off.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": off.Alpha.User.Email, "password": "correct horse battery", "device": apitest.Phone})
	r.WantJSON(t, 403)
	r = off.Do("POST", "/api/v1/auth/signup", "", signup)
	r.WantJSON(t, 403)
}

// TestOAuthBadRequests: what the authorization server refuses.
func TestOAuthBadRequests(t *testing.T) {
	e := apitest.NewEnv(t, apitest.TrustLoopback)
	base := e.Listen()
	ctx := apitest.OAuthClientCtx(t)
	clientID := apitest.RegisterClient(t, ctx, base, "http://127.0.0.1/callback")
	conf := &oauth2.Config{ClientID: clientID, RedirectURL: "http://127.0.0.1:5555/callback", Scopes: []string{"read_write"},
		Endpoint: oauth2.Endpoint{AuthURL: base + "/oauth/authorize", TokenURL: base + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	b := apitest.SignedInBrowser(t, e)
	challenge := oauth2.S256ChallengeOption(oauth2.GenerateVerifier())

	path := func(c *oauth2.Config, opts ...oauth2.AuthCodeOption) string {
		u, _ := url.Parse(c.AuthCodeURL("state-0123456789", opts...))
		return u.RequestURI()
	}
	evil := *conf
	evil.RedirectURL = "https://evil.example/cb"
	if r := b.Get(path(&evil, challenge)); r.Status != 400 || r.Header.Get("Location") != "" {
		t.Fatalf("unregistered redirect: %d %s", r.Status, r.Header.Get("Location"))
	}
	unknown := *conf
	unknown.ClientID = "cofc_unknown"
	if r := b.Get(path(&unknown, challenge)); r.Status != 400 || !strings.Contains(string(r.Body), "not registered") {
		t.Fatalf("unknown client: %d", r.Status)
	}
	if r := b.Get(path(conf)); r.Status != 303 && r.Status != 302 || !strings.Contains(r.Header.Get("Location"), "error=invalid_request") {
		t.Fatalf("no PKCE: %d %s", r.Status, r.Header.Get("Location"))
	}
	u, _ := url.Parse(conf.AuthCodeURL("state-0123456789", challenge))
	form := u.Query()
	form.Set("decision", "allow")
	form.Set("csrf_token", "forged")
	if r := b.Get(u.RequestURI()); r.Status != 200 || !strings.Contains(string(r.Body), "read and change") {
		t.Fatalf("consent for read_write on another loopback port: %d", r.Status)
	}
	if r := b.Post("/oauth/authorize", form); r.Status != 403 {
		t.Fatalf("consent without CSRF: %d", r.Status)
	}
	form.Del("csrf_token")
	form.Set("decision", "deny")
	if r := b.Post("/oauth/authorize", form); !strings.Contains(r.Header.Get("Location"), "error=access_denied") {
		t.Fatalf("deny: %d %s", r.Status, r.Header.Get("Location"))
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
	if st, _, m := apitest.GetJSON(t, ctx, "POST", base+"/api/v1/tags", map[string]any{"tag": map[string]any{"name": "via oauth"}}, apitest.Bearer(tok.AccessToken)); st != 201 {
		t.Fatalf("write with read_write: %d %v", st, m)
	}
	if r := b.Get("/settings/authorized_apps"); r.Status != 200 || !strings.Contains(string(r.Body), "Budget Helper") {
		t.Fatalf("authorized apps: %d", r.Status)
	}
	// Suspended through the store, as the admin screen does: the token,
	// cached by this process, stops at once.
	if st, _, _ := apitest.GetJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, apitest.Bearer(tok.AccessToken)); st != 200 {
		t.Fatalf("before suspension: %d", st)
	}
	admin := &models.User{FamilyID: e.Alpha.Family.ID, Email: "admin-" + e.Alpha.User.Email, Role: models.RoleAdmin}
	if err := e.Store.CreateUser(t.Context(), admin); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.SuspendUser(t.Context(), models.AdminChange{ActorID: admin.ID, ActorRole: models.RoleAdmin,
		ActorFamilyID: e.Alpha.Family.ID, TargetID: e.Alpha.User.ID}); err != nil {
		t.Fatal(err)
	}
	if st, h, _ := apitest.GetJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, apitest.Bearer(tok.AccessToken)); st != 401 || h.Get("WWW-Authenticate") == "" {
		t.Fatalf("suspended user's token: %d", st)
	}
	if _, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil {
		t.Fatal("suspended user's refresh")
	}
}

// authorizeAs is authorize for a client whose name the test does not check.
func authorizeAs(t *testing.T, b *apitest.Browser, conf *oauth2.Config, verifier string) string {
	t.Helper()
	return apitest.Authorize(t, b, conf, verifier)
}

// TestOAuthTokenRateLimit: the 11th token request of a minute from one IP
// is 429 with Retry-After.
func TestOAuthTokenRateLimit(t *testing.T) {
	e := apitest.NewEnv(t)
	b := e.Browser(t)
	for i := 1; i <= 11; i++ {
		r := b.Send("POST", "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {"nope"}, "client_id": {"x"}}, nil)
		if i <= 10 && r.Status == 429 {
			t.Fatalf("request %d limited", i)
		}
		if i == 11 {
			if r.Status != 429 || r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), "rate_limited") {
				t.Fatalf("11th: %d %v %s", r.Status, r.Header, r.Body)
			}
		}
	}
}
