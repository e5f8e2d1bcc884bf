package ssotest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

const callback = "http://127.0.0.1:1/auth/test/callback" // never requested

// signIn runs one authorization code flow against p with the real client
// libraries and returns what finish returned.
func signIn(t *testing.T, p *Provider, r *rp) (*oidc.IDToken, *oauth2.Token, error) {
	t.Helper()
	f := newFlow()
	cb, err := p.Authorize(context.Background(), r.authURL(f))
	if err != nil {
		t.Fatal(err)
	}
	return r.finish(t, f, cb)
}

func TestProviderSignIn(t *testing.T) {
	for _, tc := range []struct {
		style oauth2.AuthStyle
		want  string
	}{
		{oauth2.AuthStyleInHeader, "client_secret_basic"},
		{oauth2.AuthStyleInParams, "client_secret_post"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			p := NewProvider(t)
			r := newRP(t, p.Issuer, p.ClientID, p.ClientSecret, callback, oidc.ScopeOpenID, "email", "groups")
			r.config.Endpoint.AuthStyle = tc.style
			f := newFlow()
			cb, err := p.Authorize(context.Background(), r.authURL(f))
			if err != nil {
				t.Fatal(err)
			}
			var c claims
			idt := r.claimsOf(t, f, cb, &c)
			if idt.Subject != "user-1" || c.Email != "pat@example.com" || !c.EmailVerified || !slices.Equal(c.Groups, []string{"staff"}) {
				t.Errorf("sub %q, claims %+v; want the default user", idt.Subject, c)
			}
			auths := p.Authorizations()
			sum := sha256.Sum256([]byte(f.verifier))
			if len(auths) != 1 || auths[0].Nonce != f.nonce || auths[0].CodeChallengeMethod != "S256" ||
				auths[0].CodeChallenge != base64.RawURLEncoding.EncodeToString(sum[:]) {
				t.Errorf("authorizations = %+v, want one with the flow's nonce and S256 challenge", auths)
			}
			trs := p.TokenRequests()
			if len(trs) != 1 || trs[0].AuthMethod != tc.want || trs[0].Status != http.StatusOK {
				t.Errorf("token requests = %+v, want one %s answered 200", trs, tc.want)
			}
		})
	}
}

func TestProviderBadTokens(t *testing.T) {
	p := NewProvider(t)
	r := newRP(t, p.Issuer, p.ClientID, p.ClientSecret, callback, oidc.ScopeOpenID, "email")
	for _, tc := range []struct {
		name string
		b    Behaviour
		want string // in the verification error
	}{
		{"another audience", Behaviour{Audience: []string{"someone-else"}}, "audience"},
		{"another issuer", Behaviour{Issuer: "https://evil.example"}, "different provider"},
		{"expired", Behaviour{IssuedAt: time.Now().Add(-2 * time.Hour), Expires: time.Now().Add(-time.Hour)}, "expired"},
		{"unadvertised key", Behaviour{Signing: SignUnadvertised}, "signature"},
		{"alg none", Behaviour{Signing: SignNone}, "malformed jwt"},
		{"HS256 with the client secret", Behaviour{Signing: SignHS256}, `"HS256"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.SetBehaviour(tc.b)
			_, _, err := signIn(t, p, r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one about %q", err, tc.want)
			}
			t.Logf("refused: %v", err)
		})
	}
	t.Run("another nonce", func(t *testing.T) {
		p.SetBehaviour(Behaviour{Nonce: "replayed"})
		if _, _, err := signIn(t, p, r); !errors.Is(err, errNonce) {
			t.Errorf("err = %v, want errNonce", err)
		}
	})
	t.Run("correct again", func(t *testing.T) {
		p.SetBehaviour(Behaviour{})
		if _, _, err := signIn(t, p, r); err != nil {
			t.Error(err)
		}
	})
}

func TestProviderUserinfo(t *testing.T) {
	p := NewProvider(t)
	r := newRP(t, p.Issuer, p.ClientID, p.ClientSecret, callback, oidc.ScopeOpenID, "email", "groups")
	ctx := context.Background()

	p.SetBehaviour(Behaviour{GroupsIn: GroupsInUserinfo, IDTokenOmit: []string{"email", "email_verified"}})
	idt, tok, err := signIn(t, p, r)
	if err != nil {
		t.Fatal(err)
	}
	var inToken map[string]any
	if err := idt.Claims(&inToken); err != nil {
		t.Fatal(err)
	}
	if _, ok := inToken["groups"]; ok {
		t.Errorf("ID token has groups: %v", inToken)
	}
	if _, ok := inToken["email"]; ok {
		t.Errorf("ID token has the email: %v", inToken)
	}
	var c claims
	ui := r.userinfo(t, tok, &c)
	if ui.Subject != "user-1" || c.Email != "pat@example.com" || !slices.Equal(c.Groups, []string{"staff"}) {
		t.Errorf("userinfo sub %q, claims %+v; want the default user with groups", ui.Subject, c)
	}

	p.SetBehaviour(Behaviour{UserinfoSubject: "someone-else"})
	if ui, err := r.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err != nil || ui.Subject != "someone-else" {
		t.Errorf("userinfo = %+v, %v; want sub someone-else", ui, err)
	}
	p.SetBehaviour(Behaviour{UserinfoBody: "<html>maintenance</html>"})
	if _, err := r.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err == nil {
		t.Error("userinfo accepted an HTML body")
	}
	if n := p.UserinfoCalls(); n != 3 {
		t.Errorf("UserinfoCalls = %d, want 3", n)
	}
}

func TestProviderRefusesExchanges(t *testing.T) {
	p := NewProvider(t)
	r := newRP(t, p.Issuer, p.ClientID, p.ClientSecret, callback, oidc.ScopeOpenID)
	ctx := context.Background()
	status := func(err error) int {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return re.Response.StatusCode
		}
		return 0
	}

	f := newFlow()
	cb, err := p.Authorize(ctx, r.authURL(f))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.config.Exchange(ctx, cb.Query().Get("code"), oauth2.VerifierOption(oauth2.GenerateVerifier())); status(err) != http.StatusBadRequest {
		t.Errorf("wrong PKCE verifier: %v, want 400", err)
	}
	if _, err := r.config.Exchange(ctx, cb.Query().Get("code"), oauth2.VerifierOption(f.verifier)); status(err) != http.StatusBadRequest {
		t.Errorf("a code tried twice: %v, want 400", err)
	}

	bad := r.config
	bad.ClientSecret = "wrong"
	f = newFlow()
	if cb, err = p.Authorize(ctx, r.authURL(f)); err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Exchange(ctx, cb.Query().Get("code"), oauth2.VerifierOption(f.verifier)); status(err) != http.StatusUnauthorized {
		t.Errorf("wrong client secret: %v, want 401", err)
	}

	p.SetBehaviour(Behaviour{TokenStatus: http.StatusServiceUnavailable})
	f = newFlow()
	if cb, err = p.Authorize(ctx, r.authURL(f)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.config.Exchange(ctx, cb.Query().Get("code"), oauth2.VerifierOption(f.verifier)); status(err) != http.StatusServiceUnavailable {
		t.Errorf("failing token endpoint: %v, want 503", err)
	}

	p.SetBehaviour(Behaviour{AuthorizeError: "access_denied"})
	f = newFlow()
	if cb, err = p.Authorize(ctx, r.authURL(f)); err != nil || cb.Query().Get("error") != "access_denied" || cb.Query().Get("state") != f.state {
		t.Errorf("authorize with an error: %v, %v; want error=access_denied and the state", cb, err)
	}
	if _, err := p.Authorize(ctx, r.config.AuthCodeURL("s")); err != nil {
		t.Fatal(err)
	}
	if a := p.Authorizations(); a[len(a)-1].CodeChallenge != "" {
		t.Errorf("last authorization = %+v, want no challenge", a[len(a)-1])
	}
}

func TestProviderDiscovery(t *testing.T) {
	p := NewProvider(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		b    Behaviour
	}{
		{"an HTML page", Behaviour{DiscoveryBody: "<!DOCTYPE html><html>Sign in</html>"}},
		{"another issuer", Behaviour{DiscoveryIssuer: "https://other.example"}},
		{"a server error", Behaviour{DiscoveryStatus: http.StatusInternalServerError}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.SetBehaviour(tc.b)
			if _, err := oidc.NewProvider(ctx, p.Issuer); err == nil {
				t.Error("go-oidc accepted the discovery document")
			}
		})
	}
	t.Run("missing fields", func(t *testing.T) {
		p.SetBehaviour(Behaviour{DiscoveryOmit: []string{"end_session_endpoint", "userinfo_endpoint"}})
		op, err := oidc.NewProvider(ctx, p.Issuer)
		if err != nil {
			t.Fatal(err)
		}
		var extra map[string]any
		if err := op.Claims(&extra); err != nil {
			t.Fatal(err)
		}
		if _, ok := extra["end_session_endpoint"]; ok || op.UserInfoEndpoint() != "" {
			t.Errorf("document = %v, want no end_session_endpoint nor userinfo_endpoint", extra)
		}
	})
}

func TestProviderEndSession(t *testing.T) {
	p := NewProvider(t)
	hint, err := p.SignIDToken(map[string]any{"iss": p.Issuer, "sub": "user-1", "aud": p.ClientID}, SignRS256)
	if err != nil {
		t.Fatal(err)
	}
	end := p.EndSessionURL + "?id_token_hint=" + hint + "&client_id=" + p.ClientID +
		"&post_logout_redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fsigned-out&state=st"
	back, err := p.Authorize(context.Background(), end) // the same browser hop: one redirect, not followed
	if err != nil {
		t.Fatal(err)
	}
	if back.String() != "http://127.0.0.1:1/signed-out?state=st" {
		t.Errorf("redirected to %s", back)
	}
	got := p.EndSessions()
	if len(got) != 1 || got[0].Get("id_token_hint") != hint || got[0].Get("client_id") != p.ClientID {
		t.Errorf("end sessions = %v", got)
	}
}

func TestProviderClaims(t *testing.T) {
	p := NewProvider(t)
	r := newRP(t, p.Issuer, p.ClientID, p.ClientSecret, callback, oidc.ScopeOpenID, "email", "groups")
	ctx := context.Background()

	p.SetUser(User{Subject: "42", Email: "Kim@Example.com", Groups: []string{"Admins"},
		Extra: map[string]any{"email_verified": "true", "department": "finance", "name": nil}})
	p.SetBehaviour(Behaviour{GroupsIn: GroupsNowhere, NoNonce: true})
	f := newFlow()
	cb, err := p.Authorize(ctx, r.authURL(f))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.finish(t, f, cb); !errors.Is(err, errNonce) {
		t.Fatalf("without a nonce claim: %v, want errNonce", err)
	}
	p.SetBehaviour(Behaviour{GroupsIn: GroupsNowhere})
	idt, _, err := signIn(t, p, r)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := idt.Claims(&c); err != nil {
		t.Fatal(err)
	}
	_, hasGroups := c["groups"]
	_, hasName := c["name"]
	if c["sub"] != "42" || c["email"] != "Kim@Example.com" || c["email_verified"] != "true" || c["department"] != "finance" || hasGroups || hasName {
		t.Errorf("claims = %v, want sub 42, the extra claims, no groups and no name", c)
	}

	p.SetBehaviour(Behaviour{NoIDToken: true})
	if _, tok, err := signIn(t, p, r); err == nil || tok.Extra("id_token") != nil {
		t.Errorf("NoIDToken: id_token %v, err %v; want none and a verification error", tok.Extra("id_token"), err)
	}
}

// TestProviderPlainOAuth signs in without the openid scope, as the generic
// OAuth 2.0 strategy does: no ID token, the identity comes from userinfo.
func TestProviderPlainOAuth(t *testing.T) {
	p := NewProvider(t)
	ctx := context.Background()
	config := oauth2.Config{ClientID: p.ClientID, ClientSecret: p.ClientSecret, RedirectURL: callback, Scopes: []string{"profile"},
		Endpoint: oauth2.Endpoint{AuthURL: p.AuthURL, TokenURL: p.TokenURL, AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	cb, err := p.Authorize(ctx, config.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := config.Exchange(ctx, cb.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Extra("id_token") != nil {
		t.Errorf("an ID token without the openid scope")
	}
	resp, err := config.Client(ctx, tok).Get(p.UserinfoURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c claims
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || c.Email != "pat@example.com" {
		t.Errorf("userinfo = %+v, %v; want the default user", c, err)
	}
	if trs := p.TokenRequests(); trs[0].AuthMethod != "client_secret_post" {
		t.Errorf("token requests = %+v, want client_secret_post", trs)
	}
}
