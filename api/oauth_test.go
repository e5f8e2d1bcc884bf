package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"coffer/api"
)

// trustLoopback believes X-Forwarded-For from the loopback listener, so
// that each test's real HTTP clients name an address of their own and
// never share the token endpoint's per-IP count.
func trustLoopback(o *api.Options) {
	o.Web.TrustedProxies = append(o.Web.TrustedProxies, "127.0.0.1")
}

type xffTransport struct{ ip string }

func (x xffTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", x.ip)
	return http.DefaultTransport.RoundTrip(r)
}

// oauthClientCtx is a context whose oauth2 calls come from a fresh IP.
func oauthClientCtx(t *testing.T) context.Context {
	ip := fmt.Sprintf("10.%d.%d.%d", rand.IntN(256), rand.IntN(256), rand.IntN(254)+1)
	return context.WithValue(t.Context(), oauth2.HTTPClient, &http.Client{Transport: xffTransport{ip}})
}

func getJSON(t *testing.T, ctx context.Context, method, u string, body any, header map[string]string) (int, http.Header, map[string]any) {
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

// registerClient registers a public client and returns its id.
func registerClient(t *testing.T, ctx context.Context, base string, redirects ...string) string {
	t.Helper()
	st, _, m := getJSON(t, ctx, "POST", base+"/oauth/register", map[string]any{
		"client_name": "Budget Helper", "redirect_uris": redirects, "token_endpoint_auth_method": "none"}, nil)
	if st != 201 {
		t.Fatalf("register: %d %v", st, m)
	}
	return m["client_id"].(string)
}

// authorize walks a signed-in browser through the consent screen and
// returns the code the app's redirect URI receives.
func authorize(t *testing.T, b *browser, conf *oauth2.Config, verifier string) string {
	t.Helper()
	u, _ := url.Parse(conf.AuthCodeURL("state-0123456789", oauth2.S256ChallengeOption(verifier)))
	r := b.get(u.RequestURI())
	if r.status != 200 || !strings.Contains(string(r.body), ">Allow<") || !strings.Contains(string(r.body), ">Deny<") ||
		!strings.Contains(string(r.body), "Budget Helper") {
		t.Fatalf("consent: %d %s", r.status, r.body)
	}
	form := u.Query()
	form.Set("decision", "allow")
	r = b.post("/oauth/authorize", form)
	if r.status != 303 {
		t.Fatalf("allow: %d %s", r.status, r.body)
	}
	loc, _ := url.Parse(r.header.Get("Location"))
	if loc.Query().Get("state") != "state-0123456789" || loc.Query().Get("code") == "" {
		t.Fatalf("redirect %s", loc)
	}
	return loc.Query().Get("code")
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

// TestOAuthCodeFlow is the whole authorization code + PKCE flow with
// golang.org/x/oauth2 against the app on loopback: discovery, dynamic
// registration, sign-in then consent, the exchange, bearer calls, refresh
// rotation and reuse detection, and a code used twice.
func TestOAuthCodeFlow(t *testing.T) {
	e := newEnv(t, trustLoopback)
	base := e.listen()
	ctx := oauthClientCtx(t)

	st, _, meta := getJSON(t, ctx, "GET", base+"/.well-known/oauth-authorization-server", nil, nil)
	if st != 200 || meta["issuer"] != "http://example.com" || meta["token_endpoint"] != "http://example.com/oauth/token" ||
		fmt.Sprint(meta["code_challenge_methods_supported"]) != "[S256]" ||
		fmt.Sprint(meta["token_endpoint_auth_methods_supported"]) != "[none]" ||
		fmt.Sprint(meta["scopes_supported"]) != "[read read_write]" {
		t.Fatalf("metadata %d %v", st, meta)
	}
	clientID := registerClient(t, ctx, base, "http://127.0.0.1/callback", "com.example.budget:/oauth")
	conf := &oauth2.Config{ClientID: clientID, RedirectURL: "http://127.0.0.1:49152/callback", Scopes: []string{"read"},
		Endpoint: oauth2.Endpoint{AuthURL: base + "/oauth/authorize", TokenURL: base + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}

	// No session: sign in first, then back to the consent screen.
	setPassword(t, e, e.alpha.User, "correct horse battery")
	b := e.browser(t)
	verifier := oauth2.GenerateVerifier()
	u, _ := url.Parse(conf.AuthCodeURL("state-0123456789", oauth2.S256ChallengeOption(verifier)))
	r := b.get(u.RequestURI())
	if r.status != 302 || !strings.HasPrefix(r.header.Get("Location"), "/sessions/new?return_to=") {
		t.Fatalf("without a session: %d %s", r.status, r.header.Get("Location"))
	}
	b.get(r.header.Get("Location"))
	r = b.post("/sessions", url.Values{"email": {e.alpha.User.Email}, "password": {"correct horse battery"}, "return_to": {u.RequestURI()}})
	if r.status != 303 || r.header.Get("Location") != u.RequestURI() {
		t.Fatalf("sign-in: %d %s", r.status, r.header.Get("Location"))
	}
	code := authorize(t, b, conf, verifier)

	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken == "" || tok.RefreshToken == "" || tok.Expiry.IsZero() {
		t.Fatalf("token %+v", tok)
	}
	// A bearer token reads like a key of its scope.
	if st, _, m := getJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, bearer(tok.AccessToken)); st != 200 || m["accounts"] == nil {
		t.Fatalf("accounts: %d %v", st, m)
	}
	st, h, m := getJSON(t, ctx, "POST", base+"/api/v1/tags", map[string]any{"name": "x"}, bearer(tok.AccessToken))
	if st != 403 || m["error"] != "insufficient_scope" || !strings.Contains(h.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
		t.Fatalf("read token on a write route: %d %v %v", st, h, m)
	}
	st, h, m = getJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, bearer("ory_at_forged.token"))
	if st != 401 || m["error"] != "unauthorized" || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer ") {
		t.Fatalf("forged token: %d %v %v", st, h, m)
	}

	// The code is spent: a second exchange is refused and revokes what
	// the first one issued.
	if _, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier)); !isOAuthError(err, "invalid_grant") {
		t.Fatalf("code reuse: %v", err)
	}
	if st, _, _ := getJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, bearer(tok.AccessToken)); st != 401 {
		t.Fatalf("token of a reused code: %d", st)
	}

	// Refresh rotates; the old refresh token replayed revokes the grant.
	verifier = oauth2.GenerateVerifier()
	tok, err = conf.Exchange(ctx, authorize(t, b, conf, verifier), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	next, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		t.Fatal(err)
	}
	if next.RefreshToken == tok.RefreshToken || next.AccessToken == tok.AccessToken {
		t.Fatal("refresh did not rotate")
	}
	if st, _, _ := getJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, bearer(next.AccessToken)); st != 200 {
		t.Fatalf("refreshed token: %d", st)
	}
	if st, _, _ := getJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, bearer(tok.AccessToken)); st != 401 {
		t.Fatalf("access token of a rotated refresh: %d", st)
	}
	if _, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); !isOAuthError(err, "invalid_grant") {
		t.Fatalf("refresh reuse: %v", err)
	}
	if st, _, _ := getJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, bearer(next.AccessToken)); st != 401 {
		t.Fatalf("grant not revoked after reuse: %d", st)
	}
	if _, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: next.RefreshToken}).Token(); err == nil {
		t.Fatal("the newest refresh token survived the reuse")
	}
}

func isOAuthError(err error, code string) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.ErrorCode == code
}
