package signin_test

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"coffer/api/apitest"
)

// TestOAuthCodeFlow is the whole authorization code + PKCE flow with
// golang.org/x/oauth2 against the app on loopback: discovery, dynamic
// registration, sign-in then consent, the exchange, bearer calls, refresh
// rotation and reuse detection, and a code used twice.
func TestOAuthCodeFlow(t *testing.T) {
	e := apitest.NewEnv(t, apitest.TrustLoopback)
	base := e.Listen()
	ctx := apitest.OAuthClientCtx(t)

	st, _, meta := apitest.GetJSON(t, ctx, "GET", base+"/.well-known/oauth-authorization-server", nil, nil)
	if st != 200 || meta["issuer"] != "http://example.com" || meta["token_endpoint"] != "http://example.com/oauth/token" ||
		fmt.Sprint(meta["code_challenge_methods_supported"]) != "[S256]" ||
		fmt.Sprint(meta["token_endpoint_auth_methods_supported"]) != "[none]" ||
		fmt.Sprint(meta["scopes_supported"]) != "[read read_write]" {
		t.Fatalf("metadata %d %v", st, meta)
	}
	clientID := apitest.RegisterClient(t, ctx, base, "http://127.0.0.1/callback", "com.example.budget:/oauth")
	conf := &oauth2.Config{ClientID: clientID, RedirectURL: "http://127.0.0.1:49152/callback", Scopes: []string{"read"},
		Endpoint: oauth2.Endpoint{AuthURL: base + "/oauth/authorize", TokenURL: base + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}

	// No session: sign in first, then back to the consent screen.
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	b := e.Browser(t)
	verifier := oauth2.GenerateVerifier()
	u, _ := url.Parse(conf.AuthCodeURL("state-0123456789", oauth2.S256ChallengeOption(verifier)))
	r := b.Get(u.RequestURI())
	if r.Status != 302 || !strings.HasPrefix(r.Header.Get("Location"), "/sessions/new?return_to=") {
		t.Fatalf("without a session: %d %s", r.Status, r.Header.Get("Location"))
	}
	b.Get(r.Header.Get("Location"))
	r = b.Post("/sessions", url.Values{"email": {e.Alpha.User.Email}, "password": {"correct horse battery"}, "return_to": {u.RequestURI()}})
	if r.Status != 303 || r.Header.Get("Location") != u.RequestURI() {
		t.Fatalf("sign-in: %d %s", r.Status, r.Header.Get("Location"))
	}
	code := apitest.Authorize(t, b, conf, verifier)

	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken == "" || tok.RefreshToken == "" || tok.Expiry.IsZero() {
		t.Fatalf("token %+v", tok)
	}
	// A bearer token reads like a key of its scope.
	if st, _, m := apitest.GetJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, apitest.Bearer(tok.AccessToken)); st != 200 || m["accounts"] == nil {
		t.Fatalf("accounts: %d %v", st, m)
	}
	st, h, m := apitest.GetJSON(t, ctx, "POST", base+"/api/v1/tags", map[string]any{"name": "x"}, apitest.Bearer(tok.AccessToken))
	if st != 403 || m["error"] != "insufficient_scope" || !strings.Contains(h.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
		t.Fatalf("read token on a write route: %d %v %v", st, h, m)
	}
	st, h, m = apitest.GetJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, apitest.Bearer("ory_at_forged.token"))
	if st != 401 || m["error"] != "unauthorized" || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer ") {
		t.Fatalf("forged token: %d %v %v", st, h, m)
	}

	// The code is spent: a second exchange is refused and revokes what
	// the first one issued.
	if _, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier)); !isOAuthError(err, "invalid_grant") {
		t.Fatalf("code reuse: %v", err)
	}
	if st, _, _ := apitest.GetJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, apitest.Bearer(tok.AccessToken)); st != 401 {
		t.Fatalf("token of a reused code: %d", st)
	}

	// Refresh rotates; the old refresh token replayed revokes the grant.
	verifier = oauth2.GenerateVerifier()
	tok, err = conf.Exchange(ctx, apitest.Authorize(t, b, conf, verifier), oauth2.VerifierOption(verifier))
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
	if st, _, _ := apitest.GetJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, apitest.Bearer(next.AccessToken)); st != 200 {
		t.Fatalf("refreshed token: %d", st)
	}
	if st, _, _ := apitest.GetJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, apitest.Bearer(tok.AccessToken)); st != 401 {
		t.Fatalf("access token of a rotated refresh: %d", st)
	}
	if _, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); !isOAuthError(err, "invalid_grant") {
		t.Fatalf("refresh reuse: %v", err)
	}
	if st, _, _ := apitest.GetJSON(t, ctx, "GET", base+"/api/v1/accounts", nil, apitest.Bearer(next.AccessToken)); st != 401 {
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
