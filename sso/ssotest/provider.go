package ssotest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// User is who a Provider signs in, and the claims it asserts.
type User struct {
	Subject       string
	Email         string
	EmailVerified bool
	GivenName     string
	FamilyName    string
	Name          string
	Groups        []string
	// Extra claims, in the ID token and userinfo; they override the
	// standard ones above, and a nil value removes a claim.
	Extra map[string]any
}

// Signing is how a Provider signs ID tokens.
type Signing int

// Signings.
const (
	SignRS256        Signing = iota // RS256 with the key the JWKS lists
	SignUnadvertised                // RS256 with another key, under the listed key's kid
	SignNone                        // alg "none", no signature
	SignHS256                       // HMAC-SHA256 keyed with the client secret
)

// GroupsIn is where a Provider puts the groups claim.
type GroupsIn int

// Places for groups.
const (
	GroupsInIDToken  GroupsIn = iota // the ID token only
	GroupsInUserinfo                 // userinfo only
	GroupsInBoth                     // both
	GroupsNowhere                    // neither
)

// Behaviour is how a Provider answers. The zero value answers as a
// correct provider does; each field is one way to be wrong.
type Behaviour struct {
	// The ID token.
	Issuer      string    // iss; "" is the provider's issuer
	Audience    []string  // aud; nil is the client id
	IssuedAt    time.Time // iat; zero is now
	Expires     time.Time // exp; zero is an hour after iat
	Nonce       string    // nonce; "" is the one sent to /authorize
	NoNonce     bool      // no nonce claim at all
	Signing     Signing
	GroupsIn    GroupsIn
	IDTokenOmit []string // claims left out of the ID token (userinfo keeps them)
	NoIDToken   bool     // the token response has no id_token

	// /authorize redirects back with this error (e.g. "access_denied")
	// instead of a code.
	AuthorizeError string

	// /token answers this status with an OAuth error body instead of tokens.
	TokenStatus int

	// Userinfo.
	UserinfoSubject string // sub; "" is the user's
	UserinfoStatus  int    // answer this status instead
	UserinfoBody    string // answer this body, as text/html, instead of JSON

	// Discovery.
	DiscoveryStatus int      // answer this status instead
	DiscoveryBody   string   // answer this body, as text/html, instead of JSON
	DiscoveryIssuer string   // issuer in the document; "" is the provider's
	DiscoveryOmit   []string // fields left out of the document
}

// Authorization is a request /authorize received.
type Authorization struct {
	Query               url.Values
	ClientID            string
	RedirectURI         string
	State               string
	Nonce               string
	Scope               string
	CodeChallenge       string
	CodeChallengeMethod string
}

// TokenRequest is a request /token received. AuthMethod is how the client
// authenticated: "client_secret_basic", "client_secret_post", "none", or
// "both" (refused).
type TokenRequest struct {
	AuthMethod string
	GrantType  string
	Status     int    // what /token answered
	Error      string // the OAuth error code of a refusal
}

// Provider is an OpenID Connect and OAuth 2.0 provider on loopback, with
// no user interface: /authorize signs the configured user in at once.
// Its setters and records are safe for concurrent use.
type Provider struct {
	Issuer       string // http://127.0.0.1:<port>, no trailing slash
	ClientID     string
	ClientSecret string

	AuthURL       string
	TokenURL      string
	UserinfoURL   string
	JWKSURL       string
	EndSessionURL string

	key   *rsa.PrivateKey // listed in the JWKS under kid
	kid   string
	other *rsa.PrivateKey // SignUnadvertised; made on first use

	mu             sync.Mutex
	user           User
	behaviour      Behaviour
	codes          map[string]*grant
	tokens         map[string]User // access token → who it was issued to
	authorizations []Authorization
	tokenRequests  []TokenRequest
	userinfoCalls  int
	endSessions    []url.Values
}

// grant is what an authorization code stands for.
type grant struct {
	auth Authorization
	user User
}

// NewProvider starts a Provider for the test's lifetime, with the client
// "coffer-test" (a random secret) and DefaultUser. Any redirect URI is
// accepted at /authorize; /token requires the same one again.
func NewProvider(t testing.TB) *Provider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{
		ClientID:     "coffer-test",
		ClientSecret: random(24),
		key:          key,
		kid:          random(8),
		user:         DefaultUser(),
		codes:        map[string]*grant{},
		tokens:       map[string]User{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("/authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	mux.HandleFunc("/userinfo", p.userinfo)
	mux.HandleFunc("/end_session", p.endSession)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.Issuer = srv.URL
	p.AuthURL, p.TokenURL, p.UserinfoURL = srv.URL+"/authorize", srv.URL+"/token", srv.URL+"/userinfo"
	p.JWKSURL, p.EndSessionURL = srv.URL+"/jwks", srv.URL+"/end_session"
	return p
}

// DefaultUser is who a new Provider signs in: user-1, Pat Doe, with a
// verified email and the group "staff".
func DefaultUser() User {
	return User{Subject: "user-1", Email: "pat@example.com", EmailVerified: true, GivenName: "Pat", FamilyName: "Doe",
		Name: "Pat Doe", Groups: []string{"staff"}}
}

// SetUser changes who the next /authorize signs in.
func (p *Provider) SetUser(u User) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.user = u
}

// SetBehaviour replaces how the Provider answers from now on; the zero
// Behaviour restores correct answers.
func (p *Provider) SetBehaviour(b Behaviour) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.behaviour = b
}

// Authorizations are the /authorize requests so far, oldest first.
func (p *Provider) Authorizations() []Authorization {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.authorizations)
}

// TokenRequests are the /token requests so far, oldest first.
func (p *Provider) TokenRequests() []TokenRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.tokenRequests)
}

// UserinfoCalls counts the /userinfo requests so far.
func (p *Provider) UserinfoCalls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.userinfoCalls
}

// EndSessions are the queries (or forms) of the end-session requests so
// far, oldest first: id_token_hint, client_id, post_logout_redirect_uri,
// state.
func (p *Provider) EndSessions() []url.Values {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.endSessions)
}

// Authorize plays the browser's part: it requests authURL and returns
// where /authorize redirects, the relying party's callback with code and
// state (or error), without requesting it.
func (p *Provider) Authorize(ctx context.Context, authURL string) (*url.URL, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, fmt.Errorf("ssotest: authorize: %w", err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ssotest: authorize: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096)) // only for the message below
	if resp.StatusCode != http.StatusFound {
		return nil, fmt.Errorf("ssotest: authorize answered %s: %s", resp.Status, snippet(body))
	}
	return resp.Location()
}

func (p *Provider) discovery(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	b := p.behaviour
	p.mu.Unlock()
	if overridden(w, b.DiscoveryBody, b.DiscoveryStatus) {
		return
	}
	doc := map[string]any{
		"issuer":                                p.Issuer,
		"authorization_endpoint":                p.AuthURL,
		"token_endpoint":                        p.TokenURL,
		"userinfo_endpoint":                     p.UserinfoURL,
		"jwks_uri":                              p.JWKSURL,
		"end_session_endpoint":                  p.EndSessionURL,
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"scopes_supported":                      []string{"openid", "email", "profile", "groups"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		"grant_types_supported":                 []string{"authorization_code"},
		"code_challenge_methods_supported":      []string{"S256"},
		"claims_supported": []string{"sub", "iss", "aud", "exp", "iat", "nonce", "email", "email_verified",
			"name", "given_name", "family_name", "groups"},
	}
	if b.DiscoveryIssuer != "" {
		doc["issuer"] = b.DiscoveryIssuer
	}
	for _, k := range b.DiscoveryOmit {
		delete(doc, k)
	}
	writeJSON(w, http.StatusOK, doc)
}

func (p *Provider) jwks(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &p.key.PublicKey, KeyID: p.kid, Algorithm: string(jose.RS256), Use: "sig"},
	}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client went away; nothing to do
}

// overridden answers with a behaviour's body (as HTML, with its status
// or 200) or its bare status, when either is set, and says whether it did.
func overridden(w http.ResponseWriter, body string, status int) bool {
	switch {
	case body != "":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	case status != 0:
		http.Error(w, http.StatusText(status), status)
	default:
		return false
	}
	return true
}
